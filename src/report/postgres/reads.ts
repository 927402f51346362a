// The operator's read port (report/reads.ts) on PostgreSQL: the same figures, editions and failures as
// SQLite's adapter, from report/postgres/figures-sql.ts; sums, rates and reasons are made by the shared code.
import type pg from 'pg';
import type { Clock } from '../../clock.ts';
import type { ConsentKind } from '../../consent/history.ts';
import type { ReportKind } from '../../bounces/reports.ts';
import { failedDay, type SourceDay } from '../../ingest/source-days.ts';
import { sourceListing } from '../../ingest/sources.ts';
import type { Notice, NoticeStatus } from '../../notices/repo.ts';
import { OVERDUE_AFTER_HOURS } from '../../plan/slots.ts';
import type { SubscriberStatus } from '../../types.ts';
import { combineFigures, sentIsLedgerTotal, type FigureWindows, type LedgerTotals, type OperatorFigures } from '../figures.ts';
import type { OverdueReport } from '../overdue.ts';
import type { OperatorReads } from '../reads.ts';
import { editionsWithReasons, type EditionCounts, type EditionFailure } from '../status.ts';
import * as SQL from './figures-sql.ts';

const HOUR_MS = 3_600_000;

/** Rows of (key, n) into a record that starts with every key at 0. */
async function countsBy<K extends string>(pool: pg.Pool, sql: string, params: unknown[], key: 'kind' | 'status', zero: Record<K, number>): Promise<Record<K, number>> {
  const out = { ...zero };
  for (const r of (await pool.query<Record<string, string | number>>(sql, params)).rows) out[r[key] as K] = Number(r.n);
  return out;
}

/** Counts overdue subscribers now and stores the figure in PostgreSQL's settings, for /metrics on every instance. */
export async function countOverduePg(pool: pg.Pool, clock: Clock): Promise<OverdueReport> {
  const now = clock.now();
  const before = (hours: number) => new Date(now.getTime() - hours * HOUR_MS).toISOString();
  const { rows } = await pool.query<{ n: number }>(SQL.PG_COUNT_OVERDUE, [now.toISOString(), before(OVERDUE_AFTER_HOURS.daily), before(OVERDUE_AFTER_HOURS.weekly)]);
  const report = { subscribers: rows[0]!.n, at: now.toISOString() };
  await pool.query(SQL.PG_WRITE_SETTING, ['overdue', JSON.stringify(report)]);
  return report;
}

async function storedOverduePg(pool: pg.Pool): Promise<OverdueReport | undefined> {
  const value = (await pool.query<{ value: string }>(SQL.PG_READ_SETTING, ['overdue'])).rows[0]?.value;
  if (value === undefined) return undefined;
  try {
    return JSON.parse(value) as OverdueReport;
  } catch {
    return undefined;
  }
}

async function figuresPg(pool: pg.Pool, clock: Clock, w: FigureWindows): Promise<OperatorFigures> {
  const since = w.bouncesSince;
  const [ledger, bounces, sentSince, overdue, notices, optOuts, subscribers] = await Promise.all([
    w.totals ? pool.query<LedgerTotals>(SQL.PG_LEDGER_TOTALS).then((r) => r.rows[0]) : undefined,
    since === undefined ? undefined : countsBy<ReportKind>(pool, SQL.PG_BOUNCES_SINCE, [since], 'kind', { hard: 0, soft: 0, policy: 0, complaint: 0 }),
    since === undefined || sentIsLedgerTotal(w) ? undefined : pool.query<{ n: number }>(SQL.PG_SENT_SINCE, [since.slice(0, 10)]).then((r) => r.rows[0]!.n),
    w.overdue === 'count' ? countOverduePg(pool, clock) : w.overdue === 'stored' ? storedOverduePg(pool) : undefined,
    w.noticesSince === undefined
      ? undefined
      : countsBy<NoticeStatus>(pool, SQL.PG_NOTICES_SINCE, [w.noticesSince], 'status', { planned: 0, sending: 0, retry: 0, sent: 0, failed: 0, unknown: 0 }),
    w.optOutsSince === undefined
      ? undefined
      : countsBy<ConsentKind>(pool, SQL.PG_OPT_OUTS_SINCE, [w.optOutsSince], 'kind', { unsubscribe: 0, complaint: 0, 'hard-bounce': 0, operator: 0, lifted: 0, reconfirmed: 0 }),
    w.totals ? countsBy<SubscriberStatus>(pool, SQL.PG_SUBSCRIBERS_BY_STATUS, [], 'status', { pending: 0, confirmed: 0, unsubscribed: 0, suppressed: 0 }) : undefined,
  ]);
  return combineFigures(w, { ledger, bounces, sentSince, overdue, notices, optOuts, subscribers });
}

export function postgresOperatorReads(pool: pg.Pool, clock: Clock): OperatorReads {
  return {
    figures: (w) => figuresPg(pool, clock, w),
    async editions(limit) {
      const n = Math.max(1, Math.floor(limit));
      const [counts, failures] = await Promise.all([
        pool.query<EditionCounts>(SQL.PG_EDITION_COUNTS, [n]),
        pool.query<EditionFailure>(SQL.PG_EDITION_FAILURES, [n]),
      ]);
      return editionsWithReasons(counts.rows, failures.rows);
    },
    lastNoticeFailures: async (limit) => (await pool.query<Notice>(SQL.PG_LAST_NOTICE_FAILURES, [limit])).rows,
    sourceFailures: (sources) =>
      Promise.all(sources.map(async (source) => ({ source, errors: (await pool.query<SourceDay>(SQL.PG_SOURCE_ERRORS, [source])).rows.map(failedDay) }))),
    sources: (specs) =>
      Promise.all(
        specs.map(async (spec) => {
          const [summary, errors] = await Promise.all([
            pool.query<{ lastDay: string | null; lastFetchedAt: string | null }>(SQL.PG_SOURCE_SUMMARY, [spec.name]),
            pool.query<SourceDay>(SQL.PG_SOURCE_ERRORS, [spec.name]),
          ]);
          return sourceListing(spec, summary.rows[0]!, errors.rows);
        }),
      ),
    recentDays: async (source, limit) => (await pool.query<SourceDay>(SQL.PG_RECENT_SOURCE_DAYS, [source, limit])).rows,
  };
}
