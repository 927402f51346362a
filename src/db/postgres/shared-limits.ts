// The shared limits (src/db/shared-limits.ts) on PostgreSQL, for instances on several machines: each
// change is one INSERT … ON CONFLICT DO UPDATE … RETURNING, which PostgreSQL runs atomically on the row
// (two instances hitting the same key at once queue on its row lock; neither hit is lost). The pool is
// opened, and the schema migrated, on first use: commands that never count anything never connect.
import type pg from 'pg';
import { AppError } from '../../errors.ts';
import { sweepDue, type SharedLimits } from '../shared-limits.ts';
import { migratePostgres } from './migrate.ts';
import { createPool } from './pool.ts';
import { isConnectionLoss, whileConnectionLost } from './retry.ts';

export const PG_LIMIT_HIT = `
  INSERT INTO shared_limits (purpose, key, hits, until_ms) VALUES ($1, $2, 1, $3::bigint + $4::bigint)
  ON CONFLICT (purpose, key) DO UPDATE SET
    hits     = CASE WHEN shared_limits.until_ms <= $3::bigint THEN 1 ELSE shared_limits.hits + 1 END,
    until_ms = CASE WHEN shared_limits.until_ms <= $3::bigint THEN excluded.until_ms ELSE shared_limits.until_ms END
  RETURNING hits, until_ms`;
export const PG_SPACING_TAKE = `
  INSERT INTO shared_limits (purpose, key, hits, until_ms, holder) VALUES ($1, $2, 1, $3::bigint + $4::bigint, $5)
  ON CONFLICT (purpose, key) DO UPDATE SET
    hits     = CASE WHEN shared_limits.until_ms <= $3::bigint THEN shared_limits.hits + 1 ELSE shared_limits.hits END,
    holder   = CASE WHEN shared_limits.until_ms <= $3::bigint THEN excluded.holder ELSE shared_limits.holder END,
    until_ms = CASE WHEN shared_limits.until_ms <= $3::bigint THEN excluded.until_ms ELSE shared_limits.until_ms END
  RETURNING holder, until_ms`;
export const PG_SPACING_RELEASE = `UPDATE shared_limits SET until_ms = $4 WHERE purpose = $1 AND key = $2 AND holder = $3`;
export const PG_LIMITS_SWEEP = `DELETE FROM shared_limits WHERE purpose = $1 AND until_ms <= $2`;

export interface PostgresLimitsOptions {
  url: string;
  schema?: string | undefined;
  /** How long a statement rides out a lost connection before the request fails (503): short, a client waits. */
  reconnectBudgetMs?: number;
}

export function createPostgresLimits(options: PostgresLimitsOptions): SharedLimits {
  let ready: Promise<pg.Pool> | undefined;
  const open = (): Promise<pg.Pool> =>
    (ready ??= (async () => {
      // A counter need not wait for its WAL flush (4 ms a hit on this machine, 0.3 ms without): a crash
      // of the server loses at most the last instants' hits, which only resets a limit early. Set at the
      // connection's start-up: a SET query on 'connect' was queued beside the pool's first query (pg warns).
      const pool = createPool(options.url, { schema: options.schema, max: 4, settings: { synchronous_commit: 'off' } });
      try {
        await migratePostgres(pool); // under the migration lock: instances starting together apply it once
      } catch (e) {
        ready = undefined;
        await pool.end().catch(() => {});
        throw unavailable(e);
      }
      return pool;
    })());
  const lastSweep = new Map<string, number>();
  /** `sweepAtMs`: first delete the purpose's rows whose time has passed by then (at most once a minute). */
  const query = async <R extends pg.QueryResultRow>(purpose: string, sweepAtMs: number | undefined, sql: string, params: unknown[]): Promise<R | undefined> => {
    const pool = await open();
    try {
      return await whileConnectionLost(async () => {
        if (sweepAtMs !== undefined && sweepDue(lastSweep, purpose, sweepAtMs)) await pool.query(PG_LIMITS_SWEEP, [purpose, sweepAtMs]);
        return (await pool.query<R>(sql, params)).rows[0];
      }, options.reconnectBudgetMs ?? 2_000);
    } catch (e) {
      throw isConnectionLoss(e) ? unavailable(e) : e;
    }
  };
  return {
    async hit(purpose, key, windowMs, nowMs) {
      const r = await query<{ hits: number; until_ms: number }>(purpose, nowMs, PG_LIMIT_HIT, [purpose, key, nowMs, windowMs]);
      return { hits: r!.hits, resetAtMs: r!.until_ms };
    },
    async take(purpose, key, leaseMs, nowMs, holder) {
      const r = await query<{ holder: string; until_ms: number }>(purpose, nowMs, PG_SPACING_TAKE, [purpose, key, nowMs, leaseMs, holder]);
      return { taken: r!.holder === holder, untilMs: r!.until_ms };
    },
    async release(purpose, key, holder, nextAtMs) {
      await query(purpose, undefined, PG_SPACING_RELEASE, [purpose, key, holder, nextAtMs]);
    },
    async close() {
      const pool = ready && (await ready.catch(() => undefined));
      ready = undefined;
      await pool?.end().catch(() => {});
    },
  };
}

/** The store is out of reach: the request is refused for now (503 + Retry-After), never let through uncounted. */
function unavailable(e: unknown): AppError {
  return new AppError('LIMITS_STORE_UNAVAILABLE', `the shared limits' PostgreSQL store did not answer: ${(e as Error).message}`, {
    cause: e,
    temporary: true,
    retryInSeconds: 5,
  });
}
