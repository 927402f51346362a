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

/**
 * Query lists (lists.ts) no ledger row refers to any more. A list's rows are planned in its run, so they
 * share its planned_at: once none of them holds items (pruned above), neither does anything else. Walks
 * digests_prunable (migration 002) per list.
 */
const SQL_PRUNE_LISTS = `
  DELETE FROM query_lists
  WHERE id IN (SELECT l.id FROM query_lists l
               WHERE l.planned_at < :cutoff
                 AND NOT EXISTS (SELECT 1 FROM digests d WHERE d.planned_at = l.planned_at AND d.items IS NOT NULL)
               LIMIT ${PRUNE_BATCH})`;

/** Removes the paper lists of settled rows planned more than `retentionDays` ago. Returns how many. */
export async function pruneLedger(db: Db, clock: Clock, retentionDays: number): Promise<number> {
  const now = clock.now();
  const params = { now: now.toISOString(), cutoff: new Date(now.getTime() - retentionDays * DAY_MS).toISOString() };
  const pruned = await inBatches(statement(db, SQL_PRUNE), params);
  await inBatches(statement(db, SQL_PRUNE_LISTS), { cutoff: params.cutoff });
  return pruned;
}

async function inBatches(prune: { run(p: object): { changes: number } }, params: object): Promise<number> {
  let pruned = 0;
  for (;;) {
    const n = prune.run(params).changes;
    pruned += n;
    if (n < PRUNE_BATCH) return pruned;
    await yieldToEventLoop();
  }
}
