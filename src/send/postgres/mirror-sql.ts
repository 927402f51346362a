// What a worker copies from PostgreSQL for one claimed batch (batch-mirror.ts): set queries over the batch's
// digest ids ($1), or over the papers not yet mirrored ($1), never one per row or per paper. {cols} is the
// mirror table's column list (the same names on both engines: db/migrations-pg/014_init.sql).

export const MIRRORED = ['digests', 'subscribers', 'topics', 'queries', 'digest_suggestions', 'query_lists', 'batches', 'papers', 'query_matches'] as const;
export type MirroredTable = (typeof MIRRORED)[number];

// Every set below is `= ANY(ARRAY(subquery))`: computed once, then probed through an index whatever the
// statistics say. `IN (subquery)` let the planner hash-join, and without statistics (a table never analyzed:
// autovacuum off, or just after an import) it read every reader's topics per batch, a cost that grew with the
// edition (20k: 60,000 topics read for a batch's dozen, 7-16 ms).
const SUBSCRIBERS = `ARRAY(SELECT subscriber_id FROM digests WHERE id = ANY($1::bigint[]))`;

/** Per batch: the rows, their subscribers as they are now, their topics with those topics' queries, their suggestions. */
export const PG_MIRROR = {
  digests: `SELECT {cols} FROM digests WHERE id = ANY($1::bigint[])`,
  subscribers: `SELECT {cols} FROM subscribers WHERE id = ANY(${SUBSCRIBERS})`,
  topics: `SELECT {cols} FROM topics WHERE subscriber_id = ANY(${SUBSCRIBERS})`,
  queries: `SELECT {cols} FROM queries WHERE id = ANY(ARRAY(SELECT query_id FROM topics WHERE subscriber_id = ANY(${SUBSCRIBERS})))`,
  digest_suggestions: `SELECT {cols} FROM digest_suggestions WHERE digest_id = ANY($1::bigint[])`,
  /** $1: list ids (a reference row's, not yet mirrored). */
  query_lists: `SELECT {cols} FROM query_lists WHERE id = ANY($1::bigint[])`,
} as const;

const MATCHED_QUERIES = `SELECT query_id FROM query_matches WHERE paper_id = ANY($1::bigint[])`;

/**
 * Per batch, the papers not yet mirrored ($1 paper ids) and what the loader reads with each. The topic
 * naming a matched query is the one SQLite's `LIMIT 1` in view.ts SQL_PAPER_TOPICS finds first through
 * its index topics_query (query_id, subscriber_id): the lowest subscriber's. All of one batch's statements
 * go in one round trip (batch-mirror.ts fetchAll).
 */
export const PG_MIRROR_PAPERS = {
  papers: `SELECT {cols} FROM papers WHERE id = ANY($1::bigint[])`,
  batches: `SELECT {cols} FROM batches WHERE id = ANY(ARRAY(SELECT first_batch_id FROM papers WHERE id = ANY($1::bigint[])))`,
  query_matches: `SELECT {cols} FROM query_matches WHERE paper_id = ANY($1::bigint[])`,
  queries: `SELECT {cols} FROM queries WHERE id = ANY(ARRAY(${MATCHED_QUERIES}))`,
  // One index probe per matched query (topics_query), not every reader's topic of it sorted: DISTINCT ON read
  // them all, a cost that grew with the edition. (subscriber_id, query_id) is unique: one row per probe.
  topics: `SELECT t.* FROM (SELECT DISTINCT query_id FROM query_matches WHERE paper_id = ANY($1::bigint[])) m
    CROSS JOIN LATERAL (SELECT {cols} FROM topics WHERE topics.query_id = m.query_id ORDER BY subscriber_id LIMIT 1) t`,
} as const;
