// What the operator console's routes call: one service over the console's read models (overview.ts,
// deliveries.ts, subscribers.ts), the sources' state and the operator's actions, made once in the
// composition root (src/main.ts). The route modules hold no database handle.
import type { HostSpacer } from '../ingest/fetch.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/open.ts';
import { recentDays, type SourceDay } from '../ingest/source-days.ts';
import { createSourcePoller, listSources, parseSources, type PollReport, type SourceListing, type SourceSpec } from '../ingest/sources.ts';
import type { Links } from '../links.ts';
import type { Logger } from '../log.ts';
import { noticesDay, operatorFigures } from '../report/figures.ts';
import { importSubscribersCsv, type ImportResult } from '../subscribers/import.ts';
import { importInThread } from '../subscribers/import-thread.ts';
import { deliveries, type DeliveriesView } from './deliveries.ts';
import { listOptOuts, type OptOutListing } from '../consent/history.ts';
import { liftOptOut, type LiftResult } from '../consent/lift.ts';
import { lastNoticeFailures, type Notice, type NoticeStatus } from '../notices/repo.ts';
import { computeOverview, type Overview } from './overview.ts';
import { AdminSessions } from './sessions.ts';
import {
  deleteSubscriber,
  searchSubscribers,
  subscriberDetail,
  suppressSubscriber,
  unsubscribeSubscriber,
  type SearchPage,
  type SubscriberDetail,
} from './subscribers.ts';

export interface ConsoleDeps {
  db: Db;
  clock: Clock;
  config: Config;
  logger: Logger;
  links: Links;
  /** The process's per-host spacer (shared with the scheduler's polls and like: lookups). */
  spacer?: HostSpacer;
}

export interface ConsoleService {
  sessions: AdminSessions;
  overview(): Overview;
  /** The ledger by edition and state, what waits, the last errors, and how many subscribers are overdue. */
  deliveries(): DeliveriesView & { overdue: number };
  /** False when SOURCES names none (the page says so, "fetch now" does nothing). */
  hasSources(): boolean;
  /** Each configured source with its last 14 days. */
  sources(): Array<SourceListing & { days: SourceDay[] }>;
  /** One poll of the configured sources (the console's "fetch now"). */
  fetchSources(): Promise<PollReport[]>;
  search(q: { by: 'address' | 'topic'; text: string; after?: string | undefined }): SearchPage;
  detail(id: number): SubscriberDetail | undefined;
  /** The operator's actions: false when it did not apply (unknown id, already in that state). */
  suppress(id: number): boolean;
  unsubscribe(id: number): boolean;
  remove(id: number): boolean;
  /** Addresses whose latest consent event is an opt-out, newest first (keyset: `before` an event id). */
  optOuts(q: { limit: number; before?: number | undefined }): OptOutListing[];
  /** Lifts an address's opt-outs with a reason kept in its history (throws a 4xx AppError otherwise). */
  lift(email: string, reason: string): LiftResult;
  /** Confirmation emails of the last 24 hours by state, and the last failures. */
  notices(): { counts: Record<NoticeStatus, number>; failures: Notice[] };
  /** The same importer and checks as `digest import`; messages name the file `name`. */
  importCsv(path: string, name: string): Promise<ImportResult>;
}

export function createConsoleService(deps: ConsoleDeps): ConsoleService {
  const { db, clock, config, logger, links } = deps;
  // Parsed on first use: a command that never opens the console never reads SOURCES here.
  let specs: SourceSpec[] | undefined;
  const configured = () => (specs ??= parseSources(config.SOURCES));
  return {
    sessions: new AdminSessions(db, clock),
    hasSources: () => configured().length > 0,
    overview: () => computeOverview(db, clock.now()),
    deliveries: () => ({ ...deliveries(db, clock.now()), overdue: operatorFigures(db, clock, { overdue: 'count' }).overdue!.subscribers }),
    sources: () => listSources(db, configured()).map((s) => ({ ...s, days: recentDays(db, s.source) })),
    fetchSources: () => createSourcePoller({ db, config, clock, logger, spacer: deps.spacer }).poll(),
    search: (q) => searchSubscribers(db, q),
    detail: (id) => subscriberDetail(db, links, id),
    suppress: (id) => suppressSubscriber(db, clock, id),
    unsubscribe: (id) => unsubscribeSubscriber(db, clock, id),
    remove: (id) => deleteSubscriber(db, id),
    optOuts: (q) => listOptOuts(db, q),
    lift: (email, reason) => liftOptOut(db, clock, email, reason),
    notices: () => ({
      counts: operatorFigures(db, clock, { noticesSince: noticesDay(clock) }).notices!,
      failures: lastNoticeFailures(db, 10),
    }),
    // In a worker thread when the database is a file (what `digest serve` has): off the web's event loop.
    importCsv: (path, name) =>
      db.memory
        ? importSubscribersCsv({ db, clock, logger, config }, path, { name })
        : importInThread({ databasePath: db.name, clock, config }, path, name),
  };
}
