// `digest recover` on PostgreSQL: what a worker does at start, on demand, and the step after a restore.
// - default: the rows in flight ('sending') of claimants that are gone (their liveness lock is free, or
//   the lease ran out) become 'unknown' (liveness.ts recoverStale): never resent, papers carried over.
// - --after-restore: a dump (pg_dump, a snapshot, point-in-time recovery) was taken at some moment and the
//   lost database went on sending after it, so every open row (planned, retry, sending) may have gone out:
//   all become 'unknown', as `digest restore` does on SQLite (src/send/after-restore.ts). Refused while
//   any worker holds claims: stop them first. The command (src/send/postgres/after-restore.ts) plans the
//   current slots the dump has no row for before marking, as SQLite's restore does.
import type pg from 'pg';
import { AppError } from '../../errors.ts';
import { SQL_CLAIMANTS } from './ledger-sql.ts';
import { claimantIsGone, recoverStale } from './liveness.ts';
import { createPool } from '../../db/postgres/pool.ts';

const SQL_MARK_OPEN_UNKNOWN = `
  UPDATE digests SET status = 'unknown', smtp_response = $1
  WHERE status IN ('planned', 'retry', 'sending')`;

const AFTER_RESTORE = 'outcome unknown: restored from a backup, and this digest may have been sent after it was taken; not resent, papers carried to the next edition';

/** Claimants holding rows in flight whose process is alive. */
async function liveClaimants(pool: pg.Pool): Promise<string[]> {
  const live: string[] = [];
  for (const { claimed_by: who } of (await pool.query<{ claimed_by: string | null }>(SQL_CLAIMANTS)).rows) {
    if (who !== null && !(await claimantIsGone(pool, who))) live.push(who);
  }
  return live;
}

/** Refuses (WORKERS_RUNNING) while a worker that is alive holds claims. */
export async function assertNoLiveClaimants(pool: pg.Pool): Promise<void> {
  const live = await liveClaimants(pool);
  if (live.length > 0) {
    throw new AppError('WORKERS_RUNNING', `workers are still sending (${live.join(', ')}): stop every \`digest worker\` first, then run this again`);
  }
}

export async function markOpenUnknownAfterRestore(pool: pg.Pool): Promise<number> {
  await assertNoLiveClaimants(pool);
  return (await pool.query(SQL_MARK_OPEN_UNKNOWN, [AFTER_RESTORE])).rowCount ?? 0;
}

/** `digest recover` without --after-restore (that one is send/postgres/after-restore.ts). */
export async function cmdRecover(url: string, schema: string | undefined): Promise<string> {
  const pool = createPool(url, { schema, max: 2 });
  try {
    const n = (await recoverStale(pool)).length;
    return `${n} digests were in flight in workers that are gone: marked unknown, never resent (their papers ride in the next digest)`;
  } finally {
    await pool.end();
  }
}
