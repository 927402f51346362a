// Operator figures: the overdue check, bounces and complaints, confirmation emails, opt-outs, the ledger
// and subscriber totals. Computed here and only here; `digest status` (cli-commands.ts), the console
// (admin/console.ts, web/console/) and GET /metrics (report/status.ts) each show them in their own way,
// over their own window of time.
import { bounceCounts } from '../bounces/service.ts';
import type { ReportKind } from '../bounces/reports.ts';
import type { Clock } from '../clock.ts';
import { optOutCounts, type ConsentKind } from '../consent/history.ts';
import type { Db } from '../db/open.ts';
import { statement } from '../db/statements.ts';
import { noticeCounts, type NoticeStatus } from '../notices/repo.ts';
import type { SubscriberStatus } from '../types.ts';
import { countOverdue, storedOverdue, type OverdueReport } from './overdue.ts';

const DAY_MS = 86_400_000;

/** Which span of time each figure covers ('' = all time; left out: not computed), and how the overdue figure is had. */
export interface FigureWindows {
  /** Bounces, complaints and the digests sent they are rated against. */
  bouncesSince?: string;
  noticesSince?: string;
  optOutsSince?: string;
  /** 'count': count now (and store it for /metrics); 'stored': what the last tick counted (cheap). */
  overdue?: 'count' | 'stored';
  /** The ledger's and the subscribers' totals by state: a scan of each table (only /metrics asks). */
  totals?: boolean;
}

export interface LedgerTotals {
  editions: number;
  planned: number;
  sent: number;
  failed: number;
  suppressed: number;
  unknown: number;
  pending: number;
  retrying: number;
}

/** The figures a view asked for (FigureWindows); those it did not ask for are undefined. */
export interface OperatorFigures {
  overdue: OverdueReport | undefined;
  bounces: Record<ReportKind, number> | undefined;
  /** Digests sent in the bounce window (by edition date): what the complaint rate is against. */
  sent: number | undefined;
  /** Complaints per 100 digests sent in the window; undefined when none was sent. */
  complaintPercent: number | undefined;
  notices: Record<NoticeStatus, number> | undefined;
  optOuts: Record<ConsentKind, number> | undefined;
  ledger: LedgerTotals | undefined;
  subscribers: Record<SubscriberStatus, number> | undefined;
}

/** `digest status` and the console: bounces and opt-outs of 30 days, confirmation emails of 24 hours, overdue now. */
export function recentWindows(clock: Clock): FigureWindows {
  const now = clock.now().getTime();
  const ago = (ms: number) => new Date(now - ms).toISOString();
  return { bouncesSince: ago(30 * DAY_MS), noticesSince: noticesDay(clock), optOutsSince: ago(30 * DAY_MS), overdue: 'count' };
}

/** GET /metrics: counters over all time, the overdue figure of the last tick (a scrape every 15 s must stay cheap). */
export const ALL_TIME: FigureWindows = { bouncesSince: '', noticesSince: '', overdue: 'stored', totals: true };

/** Confirmation emails of the last 24 hours (`digest status`, the console's deliveries page). */
export const noticesDay = (clock: Clock): string => new Date(clock.now().getTime() - DAY_MS).toISOString();


/** Ledger totals (every row of `digests`). */
const SQL_LEDGER_TOTALS = `
  SELECT count(DISTINCT edition)                       AS editions,
         count(*)                                      AS planned,
         coalesce(sum(status = 'sent'), 0)             AS sent,
         coalesce(sum(status = 'failed'), 0)           AS failed,
         coalesce(sum(status = 'suppressed'), 0)       AS suppressed,
         coalesce(sum(status = 'unknown'), 0)          AS unknown,
         coalesce(sum(status IN ('planned', 'sending', 'retry')), 0) AS pending,
         coalesce(sum(status = 'retry'), 0)            AS retrying
  FROM digests`;

/** Digests sent for the editions (local delivery dates) since a day: covered by digests_edition, no scan. */
const SQL_SENT_SINCE = `SELECT count(*) AS n FROM digests WHERE edition >= ? AND status = 'sent'`;

/** Digests sent since a time (by edition date, so within a day of the time zones' spread). */
export function sentSince(db: Db, sinceIso: string): number {
  return (statement(db, SQL_SENT_SINCE).get(sinceIso.slice(0, 10)) as { n: number }).n;
}

const SQL_SUBSCRIBERS_BY_STATUS = `SELECT status, count(*) AS n FROM subscribers GROUP BY status`;

export function operatorFigures(db: Db, clock: Clock, w: FigureWindows): OperatorFigures {
  const ledger = w.totals ? statement<[], LedgerTotals>(db, SQL_LEDGER_TOTALS).get()! : undefined;
  const since = w.bouncesSince;
  return combineFigures(w, {
    ledger,
    bounces: since === undefined ? undefined : bounceCounts(db, since),
    sentSince: since === undefined || sentIsLedgerTotal(w) ? undefined : sentSince(db, since),
    overdue: w.overdue === 'count' ? countOverdue(db, clock) : w.overdue === 'stored' ? storedOverdue(db) : undefined,
    notices: w.noticesSince === undefined ? undefined : noticeCounts(db, w.noticesSince),
    optOuts: w.optOutsSince === undefined ? undefined : optOutCounts(db, w.optOutsSince),
    subscribers: w.totals ? subscribersByStatus(db) : undefined,
  });
}

/** All time with the totals read: the digests sent in the bounce window are the ledger's total, no second count. */
export const sentIsLedgerTotal = (w: FigureWindows): boolean => Boolean(w.totals) && w.bouncesSince === '';

/** What each engine reads for a view's windows (SQLite above, PostgreSQL in report/postgres/figures.ts). */
export type FigureParts = Omit<OperatorFigures, 'sent' | 'complaintPercent'> & { sentSince: number | undefined };

/** The figures from the parts an engine read: the same sums and rates whichever engine. */
export function combineFigures(w: FigureWindows, p: FigureParts): OperatorFigures {
  const { sentSince: counted, ...parts } = p;
  const sent = w.bouncesSince === undefined ? undefined : sentIsLedgerTotal(w) ? p.ledger!.sent : counted;
  return {
    ...parts,
    sent,
    complaintPercent: p.bounces && sent !== undefined ? complaintPercent(p.bounces.complaint, sent) : undefined,
  };
}

/** Complaints per 100 digests sent; undefined when none was sent. */
export function complaintPercent(complaints: number, sent: number): number | undefined {
  return sent > 0 ? (100 * complaints) / sent : undefined;
}

function subscribersByStatus(db: Db): Record<SubscriberStatus, number> {
  const out: Record<SubscriberStatus, number> = { pending: 0, confirmed: 0, unsubscribed: 0, suppressed: 0 };
  for (const r of statement<[], { status: SubscriberStatus; n: number }>(db, SQL_SUBSCRIBERS_BY_STATUS).all()) out[r.status] = r.n;
  return out;
}
