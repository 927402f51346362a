// GET /health with DATABASE_URL=postgres://…: ok only when PostgreSQL takes a write as a subscriber's
// would (one tiny settings upsert, committed), checked at most once per HEALTH_CACHE_MS like SQLite's
// (report/health.ts). An unreachable server, a refused connection, a revoked privilege or a read-only
// standby answers the storage fault that names it (db/postgres/faults.ts: DB_UNREACHABLE, DB_READONLY…).
// The free-space checks of SQLite's probe have no meaning here: PostgreSQL's own disk-full is its 53100.
import type pg from 'pg';
import type { Clock } from '../../clock.ts';
import { pgStorageFault } from '../../db/postgres/faults.ts';
import { HEALTH_CACHE_MS, type HealthCheck } from '../health.ts';
import { PG_HEALTH_PROBE } from './figures-sql.ts';

export function createPostgresHealthCheck(pool: pg.Pool, clock: Clock): HealthCheck {
  let last: { at: number; fault: ReturnType<typeof pgStorageFault> } | undefined;
  return async () => {
    const now = performance.now();
    if (!last || now - last.at >= HEALTH_CACHE_MS) {
      let fault: ReturnType<typeof pgStorageFault>;
      try {
        await pool.query(PG_HEALTH_PROBE, [clock.now().toISOString()]);
      } catch (e) {
        fault = pgStorageFault(e);
        if (!fault) throw e;
      }
      last = { at: performance.now(), fault: fault?.in('DATABASE_URL') };
    }
    return last.fault;
  };
}
