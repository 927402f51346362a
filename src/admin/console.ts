// What the operator console's routes call: one service over the console's read models (overview.ts,
// deliveries.ts), the sources' state and the confirmation emails, made once in the composition root
// (src/main.ts). The subscribers' pages and the consent actions call the roster (operator/roster.ts), whose
// adapter follows the deployment's store. The route modules hold no database handle.
import type { HostSpacer } from '../ingest/fetch.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/open.ts';
import type { SourceDay } from '../ingest/source-days.ts';
import { createSourcePoller, parseSources, type PollReport, type SourceListing, type SourceSpec } from '../ingest/sources.ts';
import type { Logger } from '../log.ts';
import { noticesDay } from '../report/figures.ts';
import { sqliteOperatorReads, type OperatorReads } from '../report/reads.ts';
import { deliveries, type DeliveriesView } from './deliveries.ts';
import type { Notice, NoticeStatus } from '../notices/repo.ts';
import { computeOverview, type Overview } from './overview.ts';
import { AdminSessions, type ConsoleSessions } from './sessions.ts';

export interface ConsoleDeps {
  db: Db;
  clock: Clock;
  config: Config;
  logger: Logger;
  /** The process's per-host spacer (shared with the scheduler's polls and like: lookups). */
  spacer?: HostSpacer;
}

/** The overview and deliveries pages' rows, as each engine reads them (SQLite here, admin/postgres/views.ts). */
export interface ConsoleViews {
  overview(now: Date): Promise<Overview>;
  deliveries(now: Date, limit?: number): Promise<DeliveriesView>;
}

/** The console's read pages: the store's views and operator figures (SQLite's by default; PostgreSQL's with DATABASE_URL). */
export interface ConsoleReads {
  views: ConsoleViews;
  figures: OperatorReads;
}

export interface ConsoleService {
  /** Who is logged in: SQLite's file by default, PostgreSQL's with DATABASE_URL (admin/postgres/sessions.ts). */
  sessions: ConsoleSessions;
  overview(): Promise<Overview>;
  /** The ledger by edition and state, what waits, the last errors, and how many subscribers are overdue. */
  deliveries(): Promise<DeliveriesView & { overdue: number }>;
  /** False when SOURCES names none (the page says so, "fetch now" does nothing). */
  hasSources(): boolean;
  /** Each configured source with its last 14 days. */
  sources(): Promise<Array<SourceListing & { days: SourceDay[] }>>;
  /** One poll of the configured sources (the console's "fetch now"). */
  fetchSources(): Promise<PollReport[]>;
  /** Confirmation emails of the last 24 hours by state, and the last failures. */
  notices(): Promise<{ counts: Record<NoticeStatus, number>; failures: Notice[] }>;
}

/** SQLite's console reads: the service's default. */
export function sqliteConsoleReads(db: Db, clock: Clock): ConsoleReads {
  return {
    views: { overview: async (now) => computeOverview(db, now), deliveries: async (now, limit) => deliveries(db, now, limit) },
    figures: sqliteOperatorReads(db, clock),
  };
}

/** Days of each source the sources page lists. */
const SOURCE_PAGE_DAYS = 14;

/** The overview, deliveries, sources and confirmation-email figures from `reads` (the pages serve reads from the deployment's store). */
export function consoleReadPages(
  reads: ConsoleReads,
  clock: Clock,
  sources: () => readonly SourceSpec[],
): Pick<ConsoleService, 'overview' | 'deliveries' | 'notices' | 'sources'> {
  return {
    overview: () => reads.views.overview(clock.now()),
    deliveries: async () => ({
      ...(await reads.views.deliveries(clock.now())),
      overdue: (await reads.figures.figures({ overdue: 'count' })).overdue!.subscribers,
    }),
    notices: async () => ({
      counts: (await reads.figures.figures({ noticesSince: noticesDay(clock) })).notices!,
      failures: await reads.figures.lastNoticeFailures(10),
    }),
    sources: async () =>
      Promise.all(
        (await reads.figures.sources(sources())).map(async (s) => ({ ...s, days: await reads.figures.recentDays(s.source, SOURCE_PAGE_DAYS) })),
      ),
  };
}

export function createConsoleService(deps: ConsoleDeps): ConsoleService {
  const { db, clock, config, logger } = deps;
  // Parsed on first use: a command that never opens the console never reads SOURCES here.
  let specs: SourceSpec[] | undefined;
  const configured = () => (specs ??= parseSources(config.SOURCES));
  return {
    sessions: new AdminSessions(db, clock),
    hasSources: () => configured().length > 0,
    ...consoleReadPages(sqliteConsoleReads(db, clock), clock, configured),
    fetchSources: () => createSourcePoller({ db, config, clock, logger, spacer: deps.spacer }).poll(),
  };
}
