// Rows whose outcome cannot be known: a send in flight when its process stopped, or every open row of a
// restored backup. They become 'unknown': never sent again, the watermark stays, so their papers ride in
// the subscriber's next edition (a paper may show twice, never two emails for one edition).
import type { Clock } from '../clock.ts';
import type { Db } from '../db/open.ts';
import { statement } from '../db/statements.ts';
import { claimantIsDead, DEFAULT_LEASE_MS } from './claimant.ts';
import type { RecoverOptions } from './port.ts';
import { SQL_MARK_UNKNOWN, SQL_SENDING_ROWS } from './states-sql.ts';

/** Every row the backup left open: possibly sent since (the condition spelt as digests_queue's, to read it). */
const SQL_OPEN_ROWS_UNKNOWN = `
  UPDATE digests SET status = 'unknown', smtp_response = :response
  WHERE status = 'planned' OR status = 'retry' OR status = 'sending'`;

/**
 * Called at the start of each run: a 'sending' row whose claimant is dead (same host, process gone,
 * or a different process start under the same pid) or whose claim is older than the lease becomes
 * 'unknown' (see the top of this file). Returns how many rows were recovered.
 */
export function recoverStale(db: Db, clock: Clock, opts: RecoverOptions = {}): number {
  const leaseMs = opts.leaseMs ?? DEFAULT_LEASE_MS;
  const now = clock.now();
  const mark = statement(db, SQL_MARK_UNKNOWN);
  let recovered = 0;
  const ids: number[] = [];
  for (const r of statement(db, SQL_SENDING_ROWS).all() as { id: number; claimed_by: string | null; claimed_at: string | null }[]) {
    const claimedAt = r.claimed_at ? Date.parse(r.claimed_at) : 0;
    const expired = now.getTime() - claimedAt > leaseMs;
    if (!expired && !claimantIsDead(r.claimed_by ?? '')) continue;
    const why = expired ? 'lease expired' : 'claimant process is gone';
    const response = `outcome unknown: the send was in flight when its process stopped (${why}); not resent, papers carried to the next edition`;
    const changed = mark.run({ id: r.id, claimant: r.claimed_by, response }).changes;
    recovered += changed;
    if (changed === 1 && ids.length < 20) ids.push(r.id);
  }
  // One line, at the start of the run (or of `digest serve`), so a crash leaves a trace beyond `digest status`.
  if (recovered > 0) {
    opts.logger?.warn(
      { recovered, digests: ids },
      `${recovered} digests left in flight by a stopped run marked unknown: not resent, their papers ride in the next digest`,
    );
  }
  return recovered;
}

/** After a restore: every open row may have been sent since the backup; all become 'unknown' in one transaction. Returns how many. */
export function markOpenRowsUnknown(db: Db, response: string): number {
  return db.transaction(() => statement(db, SQL_OPEN_ROWS_UNKNOWN).run({ response }).changes).immediate();
}
