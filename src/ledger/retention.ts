// DIGEST_RETENTION_DAYS: a settled ledger row keeps its paper list (what its web view shows) for that
// many days, then the list is removed. The row itself stays (its status, counts and times are the
// delivery history, a few dozen bytes). Open rows (planned, sending, retry) are never pruned.
//
// Decision: prune in batches of PRUNE_BATCH rows, one short transaction each, walking the partial index
// digests_prunable (rows that still hold a list), so the pass after every tick costs nothing when there
// is nothing to prune and never holds the write lock for long when there is (a year-old install's first
// pass may prune millions of rows).
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/open.ts';
import { statement } from '../db/statements.ts';

const PRUNE_BATCH = 5_000;
const DAY_MS = 86_400_000;

const SQL_PRUNE = `
  UPDATE digests SET items = NULL, items_pruned_at = :now
  WHERE id IN (SELECT id FROM digests
               WHERE items IS NOT NULL AND planned_at < :cutoff AND status NOT IN ('planned', 'sending', 'retry')
               LIMIT ${PRUNE_BATCH})`;

/** Removes the paper lists of settled rows planned more than `retentionDays` ago. Returns how many. */
export async function pruneLedger(db: Db, clock: Clock, retentionDays: number): Promise<number> {
  const now = clock.now();
  const params = { now: now.toISOString(), cutoff: new Date(now.getTime() - retentionDays * DAY_MS).toISOString() };
  const prune = statement(db, SQL_PRUNE);
  let pruned = 0;
  for (;;) {
    const n = prune.run(params).changes;
    pruned += n;
    if (n < PRUNE_BATCH) return pruned;
    await yieldToEventLoop();
  }
}
