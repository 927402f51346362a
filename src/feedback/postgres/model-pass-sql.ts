// The statements of the reader models' pass on PostgreSQL (model-pass.ts): what it copies into its
// in-memory mirror (set queries over a batch's rows or readers, $1; {cols} is the mirror table's column
// list) and how it writes the result back. The mirror's own statements (SQLite) are at the end.
import { CONTEXT_DIGESTS } from '../training.ts';

/** The tables the mirror holds. */
export const PASS_MIRRORED = [
  'subscribers', 'topics', 'feedback', 'reader_models', 'digests', 'digest_suggestions', 'query_lists', 'papers', 'paper_terms', 'query_matches',
] as const;

/**
 * The rows planned after $1 by this transaction (xmin: a planner running without the lock beside it may
 * commit rows with higher ids, which are its own to reorder) whose reader has a model or votes
 * (model-pass.ts SQL_ROWS's readers).
 */
export const SQL_PASS_ROWS = `
  SELECT d.id, d.subscriber_id AS sid, d.from_paper AS "fromPaper", d.to_paper AS "toPaper"
  FROM digests d
  WHERE d.id > $1 AND d.items IS NOT NULL AND d.xmin = pg_current_xact_id()::xid
    AND (EXISTS (SELECT 1 FROM reader_models m WHERE m.subscriber_id = d.subscriber_id)
         OR EXISTS (SELECT 1 FROM feedback f WHERE f.subscriber_id = d.subscriber_id))
  ORDER BY d.id`;

/**
 * Of the readers $1, those whose model is not newer than their newest vote, or who voted and have none: SQLite
 * trains at each vote (feedback/profile.ts); votes reach PostgreSQL without this process, so it trains here.
 * A vote stamped the instant of the last training (>=, not >) may not have been in it: trained again.
 */
export const SQL_STALE_READERS = `
  SELECT f.subscriber_id AS sid FROM feedback f
  LEFT JOIN reader_models m ON m.subscriber_id = f.subscriber_id
  WHERE f.subscriber_id = ANY($1::bigint[])
  GROUP BY f.subscriber_id, m.trained_at
  HAVING m.trained_at IS NULL OR max(f.at) >= m.trained_at`;

/** Per batch: the readers ($1 subscriber ids) as they are now, with their topics, votes and models. */
export const PG_READERS = {
  subscribers: `SELECT {cols} FROM subscribers WHERE id = ANY($1::bigint[])`,
  topics: `SELECT {cols} FROM topics WHERE subscriber_id = ANY($1::bigint[])`,
  feedback: `SELECT {cols} FROM feedback WHERE subscriber_id = ANY($1::bigint[])`,
  reader_models: `SELECT {cols} FROM reader_models WHERE subscriber_id = ANY($1::bigint[])`,
} as const;

/** The batch's new rows ($1 digest ids). */
export const SQL_NEW_ROWS = `SELECT {cols} FROM digests WHERE id = ANY($1::bigint[])`;
/** The readers' ($1) newest shown digests: what training.ts SQL_RECENT_DIGESTS reads as context. */
export const SQL_CONTEXT_ROWS = `
  SELECT {cols} FROM (
    SELECT d.*, row_number() OVER (PARTITION BY d.subscriber_id ORDER BY d.id DESC) AS k
    FROM digests d WHERE d.subscriber_id = ANY($1::bigint[]) AND d.items IS NOT NULL AND d.status <> 'planned'
  ) x WHERE x.k <= ${CONTEXT_DIGESTS}`;
export const SQL_SUGGESTIONS_OF = `SELECT {cols} FROM digest_suggestions WHERE digest_id = ANY($1::bigint[])`;
export const SQL_LISTS = `SELECT {cols} FROM query_lists WHERE id = ANY($1::bigint[])`;
export const SQL_TERMS_OF = `SELECT {cols} FROM paper_terms WHERE paper_id = ANY($1::bigint[])`;
/** The readers' ($1) queries' matches in the run's papers ($2, $3]: muted topics' papers and follow order. */
export const SQL_MATCHES = `
  SELECT {cols} FROM query_matches
  WHERE query_id IN (SELECT query_id FROM topics WHERE subscriber_id = ANY($1::bigint[])) AND paper_id > $2 AND paper_id <= $3`;
/** Once per run: the run's papers ($1, $2] and their vectors (the pass's paper index). */
export const SQL_RANGE_PAPERS = `SELECT {cols} FROM papers WHERE id > $1 AND id <= $2`;
export const SQL_RANGE_TERMS = `SELECT {cols} FROM paper_terms WHERE paper_id > $1 AND paper_id <= $2`;

/** Write-back: the suggestions of the batch's rows, its retrained models, the models training dropped. */
export const SQL_INSERT_SUGGESTIONS = `
  INSERT INTO digest_suggestions (digest_id, paper_id, score, reason_paper)
  SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::double precision[], $4::bigint[])
  ON CONFLICT DO NOTHING`;
export const SQL_SAVE_MODELS = `
  INSERT INTO reader_models (subscriber_id, bias, cal_a, cal_b, weights, positives, negatives, context, trained_at)
  SELECT * FROM unnest($1::bigint[], $2::double precision[], $3::double precision[], $4::double precision[], $5::text[],
                       $6::int[], $7::int[], $8::int[], $9::text[])
  ON CONFLICT (subscriber_id) DO UPDATE SET bias = excluded.bias, cal_a = excluded.cal_a, cal_b = excluded.cal_b,
    weights = excluded.weights, positives = excluded.positives, negatives = excluded.negatives,
    context = excluded.context, trained_at = excluded.trained_at`;
export const SQL_DROP_MODELS = `DELETE FROM reader_models WHERE subscriber_id = ANY($1::bigint[])`;

/** In the mirror (SQLite): what the pass left. */
export const MIRROR_ROWS_AFTER = `SELECT id, items, paper_count AS paperCount FROM digests WHERE id > ?`;
export const MIRROR_SUGGESTIONS_AFTER = `SELECT digest_id AS digestId, paper_id AS paperId, score, reason_paper AS reason FROM digest_suggestions WHERE digest_id > ? ORDER BY digest_id, paper_id`;
export const MIRROR_MODELS = `
  SELECT subscriber_id AS sid, bias, cal_a AS a, cal_b AS b, weights, positives, negatives, context, trained_at AS at
  FROM reader_models WHERE subscriber_id IN (SELECT value FROM json_each(?))`;
/** Readers leave the mirror after their batch (their rows go through the ledger's forgetMirroredRows). */
export const MIRROR_FORGET_READERS = ['subscribers', 'topics', 'feedback', 'reader_models'].map((t) => `DELETE FROM ${t}`);
