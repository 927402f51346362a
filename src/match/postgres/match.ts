// matchPending (matcher.ts) on PostgreSQL: each pending distinct query runs once over the papers it has
// not seen, in a private in-memory FTS5 index of the store's whole corpus (match-in-memory.ts: same
// pairs and the same bm25 scores as SQLite's own index), and the rows go back into query_matches, the
// queries' matched_through moves to the run's newest paper, all in ONE transaction.
// Matchers queue on a transaction advisory lock: a second process waits, then finds nothing pending.
// The same index gives each new paper its tf-idf vector (paper_terms, the reader models' input: paper-terms.ts).
import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { inTransaction } from '../../db/postgres/pool.ts';
import type { Logger } from '../../log.ts';
import { MatchIndex, type LikeExample, type MatchPaper, type MatchQuery, type MatchRow } from '../match-in-memory.ts';
import type { MatchResult } from '../matcher.ts';
import { indexPaperTermsPg, paperTermsFrom } from './paper-terms.ts';

/** First half of the two-int advisory lock key of matching ("mtch"). */
const MATCH_LOCK_CLASS = 0x6d746368;
const SQL_MATCH_LOCK = `SELECT pg_advisory_xact_lock(${MATCH_LOCK_CLASS}, hashtext(current_schema()))`;
/** The same lock without waiting (unused.ts: removing queries never runs beside a matcher writing their matches). */
export const SQL_TRY_MATCH_LOCK = `SELECT pg_try_advisory_xact_lock(${MATCH_LOCK_CLASS}, hashtext(current_schema())) AS ok`;

const SQL_MAX_PAPER = `SELECT coalesce(max(id), 0) AS id FROM papers`;

/** matcher.ts's SQL_SELECT_PENDING_QUERIES in PostgreSQL's words. */
const SQL_PENDING_QUERIES = `
  SELECT q.id, q.fts AS key, coalesce(q.match_expr, q.fts) AS fts, q.matched_through AS "matchedThrough",
         q.min_upvotes AS "minUpvotes", q.like_self AS "likeSelf", q.like_corpus AS "likeCorpus"
  FROM queries q
  WHERE q.matched_through < $1
    AND EXISTS (SELECT 1 FROM topics t JOIN subscribers s ON s.id = t.subscriber_id
                WHERE t.query_id = q.id AND s.status = 'confirmed')
  ORDER BY q.id`;

/** The corpus, a page at a time by id (keyset): only one page of papers is in JS memory at once. */
const SQL_CORPUS_PAGE = `
  SELECT id, paper_key AS "paperKey", title, abstract, authors, categories, upvotes
  FROM papers WHERE id > $1 AND id <= $2 ORDER BY id LIMIT $3`;
const CORPUS_PAGE = 5_000;

const SQL_LIKE_EXAMPLES = `SELECT paper_key AS "paperKey", title, abstract FROM like_examples`;

const SQL_INSERT_MATCHES = `
  INSERT INTO query_matches (query_id, paper_id, score)
  SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::double precision[])
  ON CONFLICT DO NOTHING`;
/** Rows per INSERT of matches. */
const MATCH_CHUNK = 20_000;

const SQL_ADVANCE = `UPDATE queries SET matched_through = $1 WHERE id = ANY($2::bigint[])`;

const SQL_REFRESH_LIKE = `
  UPDATE queries SET match_expr = $2, like_self = $3, like_terms = $4, like_corpus = $5 WHERE id = $1`;

export interface PgMatchOptions {
  logger?: Logger;
}

async function loadCorpus(c: pg.PoolClient, index: MatchIndex, to: number): Promise<void> {
  for (let after = 0; ; ) {
    const page = (await c.query<MatchPaper>(SQL_CORPUS_PAGE, [after, to, CORPUS_PAGE])).rows;
    if (page.length === 0) return;
    index.add(page);
    after = page[page.length - 1]!.id;
  }
}

async function insertMatches(c: pg.PoolClient, rows: MatchRow[]): Promise<number> {
  let added = 0;
  for (let i = 0; i < rows.length; i += MATCH_CHUNK) {
    const part = rows.slice(i, i + MATCH_CHUNK);
    const r = await c.query(SQL_INSERT_MATCHES, [part.map((x) => x.queryId), part.map((x) => x.paperId), part.map((x) => x.score)]);
    added += r.rowCount ?? 0;
  }
  return added;
}

/** Matches every pending distinct query against the papers it has not seen; returns what matchPending returns. */
export async function matchPendingPg(pool: pg.Pool | pg.PoolClient, options: PgMatchOptions = {}): Promise<MatchResult> {
  const started = performance.now();
  const result = await inTransaction(pool, async (c) => {
    await c.query(SQL_MATCH_LOCK);
    const to = (await c.query<{ id: number }>(SQL_MAX_PAPER)).rows[0]!.id;
    const pending = (await c.query<MatchQuery>(SQL_PENDING_QUERIES, [to])).rows;
    const termsFrom = await paperTermsFrom(c, to);
    if (pending.length === 0 && termsFrom === null) return { queries: 0, matches: 0, failed: 0 };
    const index = new MatchIndex();
    try {
      await loadCorpus(c, index, to);
      if (termsFrom !== null) await indexPaperTermsPg(c, index.db, termsFrom, to);
      const likeExamples = pending.some((q) => q.likeSelf !== null) ? (await c.query<LikeExample>(SQL_LIKE_EXAMPLES)).rows : [];
      const found = index.match(pending, {
        to,
        likeExamples,
        onFailed: (queryId, cause) => options.logger?.warn({ queryId, err: cause }, 'topic query failed in FTS5; skipped'),
      });
      const matches = await insertMatches(c, found.rows);
      for (const l of found.refreshed) await c.query(SQL_REFRESH_LIKE, [l.queryId, l.matchExpr, l.likeSelf, l.likeTerms, l.likeCorpus]);
      if (found.matched.length > 0) await c.query(SQL_ADVANCE, [to, found.matched]);
      return { queries: found.matched.length, matches, failed: found.failed.length };
    } finally {
      index.close();
    }
  });
  const ms = Math.round((performance.now() - started) * 100) / 100;
  options.logger?.debug({ ...result, ms }, 'matched pending topic queries (PostgreSQL)');
  return { ...result, ms };
}
