// The console's overview and deliveries pages on PostgreSQL (the ConsoleViews port, admin/console.ts):
// the rows from admin/postgres/console-sql.ts, the pages made by the same code as SQLite's
// (overview.ts overviewFrom, deliveries.ts deliveriesFrom).
import type pg from 'pg';
import type { ConsoleViews } from '../console.ts';
import { deliveriesFrom, deliveriesSpan, LAST_ERRORS, type WaitingRow } from '../deliveries.ts';
import { digestDaysCached, overviewFrom, overviewSpan } from '../overview.ts';
import * as SQL from './console-sql.ts';

export function postgresConsoleViews(pool: pg.Pool): ConsoleViews {
  const rows = async <T extends pg.QueryResultRow>(sql: string, params: unknown[]) => (await pool.query<T>(sql, params)).rows;
  return {
    async overview(now) {
      const span = overviewSpan(now);
      const { days, from } = span;
      const [subscriberDays, digestDays, bounceDays, paperDays] = await Promise.all([
        rows<{ day: string; delta: number; unsub: number }>(SQL.PG_SUBSCRIBER_DAYS, [from]),
        // The days before yesterday counted once an hour per process, as on SQLite (overview.ts digestDays).
        digestDaysCached(pool, span, (a, b) => rows<{ day: string; sent: number; failed: number }>(SQL.PG_DIGEST_DAYS, [a, b])),
        rows<{ day: string; hard: number; soft: number; policy: number; complaints: number }>(SQL.PG_BOUNCE_DAYS, [from]),
        rows<{ source: string; day: string; papers: number }>(SQL.PG_PAPER_DAYS, [from]),
      ]);
      return overviewFrom(days, { subscriberDays, digestDays, bounceDays, paperDays });
    },
    async deliveries(now, limit = 50) {
      const { from, weekAgo } = deliveriesSpan(now);
      const [byState, waiting, waitingCounts, lastErrors] = await Promise.all([
        rows<{ edition: string; status: string | null; n: number }>(SQL.PG_BY_STATE, [from]),
        rows<WaitingRow>(SQL.PG_WAITING, [limit]),
        rows<{ status: string; n: number }>(SQL.PG_WAITING_COUNT, []),
        rows<WaitingRow>(SQL.PG_LAST_ERRORS, [weekAgo, LAST_ERRORS]),
      ]);
      return deliveriesFrom({ byState, waiting, waitingCounts, lastErrors });
    },
  };
}
