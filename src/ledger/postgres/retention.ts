// DIGEST_RETENTION_DAYS on PostgreSQL: retention.ts's rules exactly. A settled row planned more than that
// many days ago loses its paper list (items NULL, items_pruned_at set); the row itself stays (status,
// counts, times, watermark bounds: the delivery history, "why no email" and the training's shown papers
// read those), open rows (planned, sending, retry) are never touched, and a query list goes once no row
// of its run still holds a list. consent_events, feedback and reader_models are not touched at all.
//
// Decision: each batch is one statement in its own transaction (autocommit) of PRUNE_BATCH rows walking
// digests_prunable, so a first prune of millions of rows never holds row locks for long; SKIP LOCKED leaves a
// row another process is changing (a bounce recorded on it) to the next tick rather than waiting on it.
import type { Pg } from '../../db/postgres/pool.ts';

export const PRUNE_BATCH = 5_000;
const DAY_MS = 86_400_000;

const SQL_PRUNE = `
  UPDATE digests SET items = NULL, items_pruned_at = $1
  WHERE id IN (SELECT id FROM digests
               WHERE items IS NOT NULL AND planned_at < $2 AND status NOT IN ('planned', 'sending', 'retry')
               LIMIT ${PRUNE_BATCH} FOR UPDATE SKIP LOCKED)`;

/** retention.ts SQL_PRUNE_LISTS: lists of runs older than the cutoff whose rows all lost their list. */
const SQL_PRUNE_LISTS = `
  DELETE FROM query_lists
  WHERE id IN (SELECT l.id FROM query_lists l
               WHERE l.planned_at < $1
                 AND NOT EXISTS (SELECT 1 FROM digests d WHERE d.planned_at = l.planned_at AND d.items IS NOT NULL)
               LIMIT ${PRUNE_BATCH})`;

/** Removes the paper lists of settled rows planned more than `retentionDays` ago (pruneLedger's rules). Returns how many. */
export async function pruneLedgerPg(c: Pg, now: Date, retentionDays: number): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionDays * DAY_MS).toISOString();
  const pruned = await inBatches(c, SQL_PRUNE, [now.toISOString(), cutoff]);
  await inBatches(c, SQL_PRUNE_LISTS, [cutoff]);
  return pruned;
}

async function inBatches(c: Pg, sql: string, params: unknown[]): Promise<number> {
  let total = 0;
  for (;;) {
    const n = (await c.query(sql, params)).rowCount ?? 0;
    total += n;
    if (n < PRUNE_BATCH) return total;
  }
}
