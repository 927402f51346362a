// removeUnusedQueries (matcher.ts) on PostgreSQL: queries no topic uses any more go, with their matches
// (query_matches cascades), so the queries table does not grow with every topic anyone ever typed.
// Decisions:
// - batches of UNUSED_BATCH queries, one short transaction each: a query may carry thousands of matches.
// - each batch holds the matching lock (try: a matcher running now leaves the removal to the next tick), so
//   no matcher inserts matches for a query being deleted.
// - FOR UPDATE SKIP LOCKED: a door or import saving a topic holds its query row FOR KEY SHARE until the topic
//   is written (subscribers/records/postgres.ts ensureQuery; the import's chunk: keepQueries), so a query
//   being adopted again is skipped.
import type pg from 'pg';
import { SQL_TRY_MATCH_LOCK } from './match.ts';

const UNUSED_BATCH = 200;

const SQL_DELETE_UNUSED = `
  DELETE FROM queries WHERE id IN (
    SELECT q.id FROM queries q
    WHERE NOT EXISTS (SELECT 1 FROM topics t WHERE t.query_id = q.id)
    ORDER BY q.id LIMIT ${UNUSED_BATCH} FOR UPDATE OF q SKIP LOCKED)`;

/**
 * Deletes queries (and their matches) that no topic uses any more. Returns how many queries went.
 * `c` is a connection outside any transaction (the upkeep's, holding its session lock): each batch is its own.
 */
export async function removeUnusedQueriesPg(c: pg.PoolClient): Promise<number> {
  let removed = 0;
  for (;;) {
    const n = await oneBatch(c);
    if (n < 0) return removed;
    removed += n;
    if (n < UNUSED_BATCH) return removed;
  }
}

/** One batch in its own transaction; -1 when a matcher holds the matching lock. */
async function oneBatch(c: pg.PoolClient): Promise<number> {
  await c.query('BEGIN');
  try {
    const n = (await c.query<{ ok: boolean }>(SQL_TRY_MATCH_LOCK)).rows[0]!.ok ? ((await c.query(SQL_DELETE_UNUSED)).rowCount ?? 0) : -1;
    await c.query('COMMIT');
    return n;
  } catch (e) {
    await c.query('ROLLBACK').catch(() => {});
    throw e;
  }
}
