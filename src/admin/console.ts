// What the operator console's routes call: one service over the console's read models (overview.ts,
// deliveries.ts), the sources' state and the confirmation emails, made once in the composition root
// (src/main.ts). The subscribers' pages and the consent actions call the roster (operator/roster.ts), whose
// adapter follows the deployment's store. The route modules hold no database handle.
import type { HostSpacer } from '../ingest/fetch.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/open.ts';
import { recentDays, type SourceDay } from '../ingest/source-days.ts';
import { createSourcePoller, listSources, parseSources, type PollReport, type SourceListing, type SourceSpec } from '../ingest/sources.ts';
import type { Logger } from '../log.ts';
import { noticesDay, operatorFigures } from '../report/figures.ts';
import { deliveries, type DeliveriesView } from './deliveries.ts';
import { lastNoticeFailures, type Notice, type NoticeStatus } from '../notices/repo.ts';
import { computeOverview, type Overview } from './overview.ts';
import { AdminSessions } from './sessions.ts';

export interface ConsoleDeps {
  db: Db;
  clock: Clock;
  config: Config;
  logger: Logger;
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
  /** Confirmation emails of the last 24 hours by state, and the last failures. */
  notices(): { counts: Record<NoticeStatus, number>; failures: Notice[] };
}

export function createConsoleService(deps: ConsoleDeps): ConsoleService {
  const { db, clock, config, logger } = deps;
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
    notices: () => ({
      counts: operatorFigures(db, clock, { noticesSince: noticesDay(clock) }).notices!,
      failures: lastNoticeFailures(db, 10),
    }),
  };
}
