// `digest recover --after-restore` on PostgreSQL: what `digest restore` does on SQLite (send/after-restore.ts).
// A dump was taken at some moment and the lost database went on sending after it, so every open row may have
// gone out, and so may every slot that came due after the dump, which the dump has no row for. So:
//   1. refuse while any worker holds claims (they must be stopped first);
//   2. match what is pending and plan every subscriber's current slot as `digest plan` would in mode 'now'
//      (a planner after the dump may have sent it, whatever the subscriber's hour);
//   3. mark every open row (planned, retry, sending) 'unknown': never sent, its papers ride in the next digest.
// At worst a reader misses one email and sees its papers in the next; never the same edition twice.
import type pg from 'pg';
import type { Clock } from '../../clock.ts';
import { createPool } from '../../db/postgres/pool.ts';
import { AppError } from '../../errors.ts';
import { assertNoLiveClaimants, markOpenUnknownAfterRestore } from '../../ledger/postgres/recover.ts';
import type { Logger } from '../../log.ts';
import { matchPendingPg } from '../../match/postgres/match.ts';
import { planDigestsPg } from '../../plan/postgres/plan.ts';

export interface PgRestoreSettlement {
  /** Current slots the dump had no row for, planned now (and then marked unknown with the rest). */
  planned: number;
  /** Rows marked unknown: they may have been sent after the dump. */
  unknown: number;
}

export async function settleAfterRestorePg(pool: pg.Pool, deps: { clock: Clock; logger?: Logger | undefined }): Promise<PgRestoreSettlement> {
  await assertNoLiveClaimants(pool);
  await matchPendingPg(pool, { logger: deps.logger });
  const plan = await planDigestsPg(pool, { clock: deps.clock, mode: 'now', logger: deps.logger });
  if (!plan.ran) {
    // Marking the open rows without planning would leave today's slots to the next planner: a second copy.
    throw new AppError('PLANNING_BUSY', 'another process is planning (`digest serve` or `digest plan`): stop them and every `digest worker` first, then run this again', {
      temporary: true,
    });
  }
  const unknown = await markOpenUnknownAfterRestore(pool);
  return { planned: plan.planned, unknown };
}

/** The command: one line saying what was planned and marked. */
export async function cmdSettleAfterRestore(url: string, schema: string | undefined, deps: { clock: Clock; logger?: Logger | undefined }): Promise<string> {
  const pool = createPool(url, { schema, max: 2 });
  try {
    const r = await settleAfterRestorePg(pool, deps);
    const planned = r.planned > 0 ? ` (${r.planned} of them current slots the dump had no row for, planned now)` : '';
    return `${r.unknown} digests not recorded as sent in the restored database may have gone out since${planned}: marked unknown, never resent (their papers ride in the next digest)`;
  } finally {
    await pool.end();
  }
}
