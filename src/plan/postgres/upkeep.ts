// The tick's upkeep on PostgreSQL, as SQLite's pipeline does it after sending (pipeline.ts): the ledger's
// retention (ledger/postgres/retention.ts) and the queries no topic uses (match/postgres/unused.ts). Run by
// the process whose planner got the planning lock this tick (edition.ts), under a session advisory lock of
// its own keyed by schema like the planning lock (plan-sql.ts): planning's lock is a transaction's and
// ends with planning, while the upkeep runs as many short transactions; a second process finds the lock
// taken and skips (ran: false), so two processes never prune at once.
import type pg from 'pg';
import type { Clock } from '../../clock.ts';
import { pruneLedgerPg } from '../../ledger/postgres/retention.ts';
import type { Logger } from '../../log.ts';
import { removeUnusedQueriesPg } from '../../match/postgres/unused.ts';

/** First half of the two-int advisory lock key of the upkeep ("upkp"). */
export const UPKEEP_LOCK_CLASS = 0x75706b70;
const SQL_TRY_UPKEEP_LOCK = `SELECT pg_try_advisory_lock(${UPKEEP_LOCK_CLASS}, hashtext(current_schema())) AS ok`;
const SQL_UPKEEP_UNLOCK = `SELECT pg_advisory_unlock(${UPKEEP_LOCK_CLASS}, hashtext(current_schema()))`;

export interface PgUpkeepReport {
  /** False: another process held the upkeep lock; nothing done. */
  ran: boolean;
  /** Paper lists removed after DIGEST_RETENTION_DAYS. */
  pruned: number;
  /** Distinct topic queries no topic uses any more, dropped with their matches. */
  prunedQueries: number;
}

export async function upkeepPg(pool: pg.Pool, o: { clock: Clock; retentionDays: number; logger?: Logger }): Promise<PgUpkeepReport> {
  const c = await pool.connect();
  let broken: Error | undefined;
  try {
    if (!(await c.query<{ ok: boolean }>(SQL_TRY_UPKEEP_LOCK)).rows[0]!.ok) return { ran: false, pruned: 0, prunedQueries: 0 };
    try {
      const pruned = await pruneLedgerPg(c, o.clock.now(), o.retentionDays);
      const prunedQueries = await removeUnusedQueriesPg(c);
      if (pruned + prunedQueries > 0) o.logger?.info({ pruned, prunedQueries }, 'ledger retention and unused queries (PostgreSQL)');
      return { ran: true, pruned, prunedQueries };
    } finally {
      await c.query(SQL_UPKEEP_UNLOCK);
    }
  } catch (e) {
    broken = e as Error;
    throw e;
  } finally {
    // A connection whose unlock may not have run goes, not back to the pool: closing it frees the lock.
    c.release(broken);
  }
}
