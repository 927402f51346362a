// What a worker copies from PostgreSQL for one claimed batch (batch-mirror.ts): set queries over the batch's
// digest ids ($1), or over the papers not yet mirrored ($1), never one per row or per paper. {cols} is the
// mirror table's column list (the same names on both engines: db/migrations-pg/014_init.sql).

export const MIRRORED = ['digests', 'subscribers', 'topics', 'queries', 'digest_suggestions', 'query_lists', 'batches', 'papers', 'query_matches'] as const;
export type MirroredTable = (typeof MIRRORED)[number];

const ROWS = `SELECT id FROM digests WHERE id = ANY($1::bigint[])`;
const SUBSCRIBERS = `SELECT subscriber_id FROM digests WHERE id = ANY($1::bigint[])`;

/** Per batch: the rows, their subscribers as they are now, their topics with those topics' queries, their suggestions. */
export const PG_MIRROR = {
  digests: `SELECT {cols} FROM digests WHERE id = ANY($1::bigint[])`,
  subscribers: `SELECT {cols} FROM subscribers WHERE id IN (${SUBSCRIBERS})`,
  topics: `SELECT {cols} FROM topics WHERE subscriber_id IN (${SUBSCRIBERS})`,
  queries: `SELECT {cols} FROM queries WHERE id IN (SELECT query_id FROM topics WHERE subscriber_id IN (${SUBSCRIBERS}))`,
  digest_suggestions: `SELECT {cols} FROM digest_suggestions WHERE digest_id IN (${ROWS})`,
  /** $1: list ids (a reference row's, not yet mirrored). */
  query_lists: `SELECT {cols} FROM query_lists WHERE id = ANY($1::bigint[])`,
} as const;

const MATCHED_QUERIES = `SELECT query_id FROM query_matches WHERE paper_id = ANY($1::bigint[])`;

/**
 * Per batch, the papers not yet mirrored ($1 paper ids) and what the loader reads with each. The topic
 * naming a matched query is the one SQLite's `LIMIT 1` in view.ts SQL_PAPER_TOPICS finds first through
 * its index topics_query (query_id, subscriber_id): the lowest subscriber's.
 */
export const PG_MIRROR_PAPERS = {
  papers: `SELECT {cols} FROM papers WHERE id = ANY($1::bigint[])`,
  batches: `SELECT {cols} FROM batches WHERE id IN (SELECT first_batch_id FROM papers WHERE id = ANY($1::bigint[]))`,
  query_matches: `SELECT {cols} FROM query_matches WHERE paper_id = ANY($1::bigint[])`,
  queries: `SELECT {cols} FROM queries WHERE id IN (${MATCHED_QUERIES})`,
  topics: `SELECT DISTINCT ON (query_id) {cols} FROM topics WHERE query_id IN (${MATCHED_QUERIES}) ORDER BY query_id, subscriber_id, id`,
} as const;
