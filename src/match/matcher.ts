// Matching papers against topic queries in SQLite. Each DISTINCT query (queries.fts) runs once
// over the papers it has not seen yet, however many subscribers share it; fan-out to subscribers
// is a SQL join done by the planner (topics.query_id), never subscribers x papers in JS.
import { performance } from 'node:perf_hooks';
import { statement } from '../db/statements.ts';
import { paperFromRow, type PaperRow } from '../db/paper-row.ts';
import type { Db } from '../db/open.ts';
import { invalid } from '../errors.ts';
import type { Logger } from '../log.ts';
import { indexPaperTerms } from './paper-terms.ts';
import { buildLikeQuery, LIKE_REFRESH_GROWTH, LIKE_THRESHOLD, termsJson } from './like/like.ts';
import { parseTopic, type ParsedTopic } from './parse.ts';
import { BM25, SQL_MATCH, SQL_MATCH_LIKE, SQL_MATCH_UPVOTES } from './match-sql.ts';
import type { Paper } from '../types.ts';


/** Id of a distinct query by its canonical FTS5 expression. */
const SQL_SELECT_QUERY_ID = `SELECT id FROM queries WHERE fts = ?`;

/**
 * Registers a distinct query; a second subscriber typing the same query finds the same row. match_expr
 * is set when the key is not itself the FTS5 expression (upvotes>=, like:); a like: query's terms and
 * own score are computed once, when its first subscriber saves it.
 */
const SQL_INSERT_QUERY = `
  INSERT INTO queries (fts, match_expr, min_upvotes, like_self, like_terms, like_corpus)
  VALUES (@key, @matchExpr, @minUpvotes, @likeSelf, @likeTerms, @likeCorpus) ON CONFLICT (fts) DO NOTHING`;

/** A like: query's terms chosen again on today's index (see LIKE_REFRESH_GROWTH). */
const SQL_REFRESH_LIKE = `
  UPDATE queries SET match_expr = @matchExpr, like_self = @likeSelf, like_terms = @likeTerms, like_corpus = @likeCorpus
  WHERE id = @queryId`;
const SQL_PAPER_COUNT = `SELECT count(*) AS n FROM papers`;

/** The newest paper: matching runs up to it and no further, so papers ingested meanwhile wait for the next run. */
const SQL_SELECT_MAX_PAPER_ID = `SELECT coalesce(max(id), 0) AS maxId FROM papers`;

/**
 * Distinct queries that at least one topic of a confirmed subscriber uses (muted or not, so that
 * unmuting needs no catch-up) and that have not been matched up to @maxId yet.
 */
export const SQL_SELECT_PENDING_QUERIES = `
  SELECT q.id, q.fts AS key, coalesce(q.match_expr, q.fts) AS fts, q.matched_through AS matchedThrough,
         q.min_upvotes AS minUpvotes, q.like_self AS likeSelf, q.like_corpus AS likeCorpus
  FROM queries q
  WHERE q.matched_through < @maxId
    AND EXISTS (SELECT 1 FROM topics t JOIN subscribers s ON s.id = t.subscriber_id
                WHERE t.query_id = q.id AND s.status = 'confirmed')
  ORDER BY q.id`;

/** One FTS5 run of one query over the papers it has not seen, written straight into query_matches. */
const SQL_INSERT_QUERY_MATCHES = `
  INSERT OR IGNORE INTO query_matches (query_id, paper_id, score)
  SELECT @queryId, paperId, score FROM (${SQL_MATCH})`;

/** The same with upvotes>=N (match-sql.ts). */
const SQL_INSERT_QUERY_MATCHES_UPVOTES = `
  INSERT OR IGNORE INTO query_matches (query_id, paper_id, score)
  SELECT @queryId, paperId, score FROM (${SQL_MATCH_UPVOTES})`;

/** A like: query's papers above its threshold, never its own examples (match-sql.ts). */
const SQL_INSERT_LIKE_MATCHES = `
  INSERT OR IGNORE INTO query_matches (query_id, paper_id, score)
  SELECT @queryId, paperId, score FROM (${SQL_MATCH_LIKE})`;

/** Records how far a query has been matched. */
const SQL_UPDATE_MATCHED_THROUGH = `UPDATE queries SET matched_through = @to WHERE id = @queryId`;

/**
 * Papers of batches dated on or after @since (first seen then, or seen again then) that a query
 * matches. Shared by the count and the page below.
 */
const SQL_PREVIEW_WHERE = `
  FROM (SELECT rowid AS id, ${BM25} AS score FROM papers_fts WHERE papers_fts MATCH @fts) c
  JOIN papers p ON p.id = c.id
  WHERE p.upvotes >= @minUpvotes AND (@threshold IS NULL OR c.score <= @threshold)
    AND p.paper_key NOT IN (SELECT value FROM json_each(@examples))
    AND (EXISTS (SELECT 1 FROM batches b WHERE b.id = p.first_batch_id AND b.date >= @since)
         OR EXISTS (SELECT 1 FROM batch_papers bp JOIN batches b ON b.id = bp.batch_id
                    WHERE bp.paper_id = p.id AND b.date >= @since))`;

/** How many papers a previewed query matches. */
const SQL_COUNT_PREVIEW = `SELECT count(*) AS total ${SQL_PREVIEW_WHERE}`;

/** The best @limit of them, in digest order: upvotes, then relevance. */
const SQL_SELECT_PREVIEW = `
  SELECT p.id, p.title, p.url, p.abstract, p.authors, p.upvotes, p.published_at AS publishedAt
  ${SQL_PREVIEW_WHERE}
  ORDER BY p.upvotes DESC, c.score, p.id
  LIMIT @limit`;

/** Matches of queries no topic uses any more (deleted explicitly, whatever PRAGMA foreign_keys says). */
const SQL_DELETE_UNUSED_MATCHES = `
  DELETE FROM query_matches
  WHERE query_id IN (SELECT q.id FROM queries q WHERE NOT EXISTS (SELECT 1 FROM topics t WHERE t.query_id = q.id))`;

/** Queries no topic uses any more (the subscribers who typed them left or edited their topics). */
const SQL_DELETE_UNUSED_QUERIES = `
  DELETE FROM queries WHERE NOT EXISTS (SELECT 1 FROM topics t WHERE t.query_id = queries.id)`;

/**
 * Id of the distinct query of a parsed topic (its key, ParsedTopic.fts), inserted if new. A new like:
 * query needs its examples in the database (ensureExamples first); else LIKE_UNKNOWN is thrown.
 */
export function ensureQuery(db: Db, parsed: string | Pick<ParsedTopic, 'fts' | 'match' | 'minUpvotes' | 'like'>): number {
  // A string is a plain FTS5 expression (callers from before filters existed: tests, bench).
  const topic = typeof parsed === 'string' ? { fts: parsed, match: parsed, minUpvotes: 0, like: null } : parsed;
  return db.transaction(() => {
    const known = statement<[string], { id: number }>(db, SQL_SELECT_QUERY_ID).get(topic.fts);
    if (known) return known.id;
    const like = topic.like === null ? null : buildLikeQuery(db, topic.like);
    statement(db, SQL_INSERT_QUERY).run({
      key: topic.fts,
      matchExpr: like?.matchExpr ?? (topic.match === topic.fts ? null : topic.match),
      minUpvotes: topic.minUpvotes,
      likeSelf: like?.selfScore ?? null,
      likeTerms: like === null ? null : termsJson(like.terms),
      likeCorpus: like?.corpus ?? null,
    });
    return statement<[string], { id: number }>(db, SQL_SELECT_QUERY_ID).get(topic.fts)!.id;
  })();
}

export interface MatchResult {
  /** Distinct queries run. */
  queries: number;
  /** query_matches rows added. */
  matches: number;
  ms: number;
  /** Queries SQLite refused (logged, left unmatched so a fix can catch them up). */
  failed: number;
}

export interface MatchOptions {
  logger?: Logger;
}

interface PendingQuery {
  id: number;
  fts: string;
  matchedThrough: number;
  minUpvotes: number;
  likeSelf: number | null;
  key: string;
  likeCorpus: number | null;
}

/**
 * Runs every pending distinct query once over the papers it has not seen (ids in
 * (matched_through, max(papers.id)]) and records the matches, all in one transaction.
 */
export function matchPending(db: Db, options: MatchOptions = {}): MatchResult {
  const started = performance.now();
  const run = db.transaction(() => {
    const { maxId } = statement<[], { maxId: number }>(db, SQL_SELECT_MAX_PAPER_ID).get()!;
    const pending = statement<{ maxId: number }, PendingQuery>(db, SQL_SELECT_PENDING_QUERIES).all({ maxId });
    // Each new paper's term vector, the reader models' input (paper_terms): once per paper, ~0.15 ms each.
    indexPaperTerms(db, maxId);
    const plain = statement(db, SQL_INSERT_QUERY_MATCHES);
    const withUpvotes = statement(db, SQL_INSERT_QUERY_MATCHES_UPVOTES);
    const like = statement(db, SQL_INSERT_LIKE_MATCHES);
    const advance = statement(db, SQL_UPDATE_MATCHED_THROUGH);
    let matches = 0;
    let failed = 0;
    for (const q of pending) {
      try {
        const params = { queryId: q.id, fts: q.fts, from: q.matchedThrough, to: maxId };
        if (q.likeSelf !== null) {
          const examples = parseTopic(q.key).like ?? [];
          const current = refreshedLike(db, q, examples, options);
          const threshold = LIKE_THRESHOLD * current.likeSelf;
          matches += like.run({ ...params, fts: current.fts, threshold, minUpvotes: q.minUpvotes, examples: JSON.stringify(examples) }).changes;
        } else if (q.minUpvotes > 0) matches += withUpvotes.run({ ...params, minUpvotes: q.minUpvotes }).changes;
        else matches += plain.run(params).changes;
      } catch (cause) {
        // A failing statement undoes only itself; the other queries still run.
        failed++;
        options.logger?.warn({ queryId: q.id, fts: q.fts, err: cause }, 'topic query failed in FTS5; skipped');
        continue;
      }
      advance.run({ queryId: q.id, to: maxId });
    }
    return { queries: pending.length - failed, matches, failed };
  });
  const result = run.immediate();
  const ms = Math.round((performance.now() - started) * 100) / 100;
  options.logger?.debug({ ...result, ms }, 'matched pending topic queries');
  return { ...result, ms };
}

/**
 * A like: query's expression and own score, its terms chosen again first when the index has grown by
 * LIKE_REFRESH_GROWTH since they were (or was never recorded). An example that can no longer be read keeps
 * the stored terms.
 */
function refreshedLike(db: Db, q: PendingQuery, examples: string[], options: MatchOptions): { fts: string; likeSelf: number } {
  const n = statement<[], { n: number }>(db, SQL_PAPER_COUNT).get()!.n;
  if (q.likeCorpus !== null && n < q.likeCorpus * LIKE_REFRESH_GROWTH) return { fts: q.fts, likeSelf: q.likeSelf! };
  try {
    const built = buildLikeQuery(db, examples);
    statement(db, SQL_REFRESH_LIKE).run({
      queryId: q.id,
      matchExpr: built.matchExpr,
      likeSelf: built.selfScore,
      likeTerms: termsJson(built.terms),
      likeCorpus: built.corpus,
    });
    return { fts: built.matchExpr, likeSelf: built.selfScore };
  } catch (cause) {
    options.logger?.warn({ queryId: q.id, err: cause }, 'like: terms could not be chosen again; the stored ones are used');
    return { fts: q.fts, likeSelf: q.likeSelf! };
  }
}

export interface PreviewOptions {
  /** YYYY-MM-DD: only papers of batches dated on or after this day. */
  since: string;
  /** At most this many papers (0 to 100). */
  limit: number;
  /** Also count the matches of batches dated on or after this day (YYYY-MM-DD), as `volume`. */
  volumeSince?: string;
}

/** A previewed paper: what the subscribe page's live builder lists. */
export type PreviewPaper = Pick<Paper, 'id' | 'title' | 'url' | 'abstract' | 'authors' | 'upvotes' | 'publishedAt'>;

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const MAX_PREVIEW_LIMIT = 100;

/**
 * What a typed topic would have matched among recent papers (the subscribe page's live builder).
 * Throws the parse error (TOPIC_INVALID) as is.
 */
export function previewTopic(db: Db, text: string, options: PreviewOptions): { total: number; papers: PreviewPaper[] } {
  const { total, papers } = previewTopicDetails(db, text, options);
  return { total, papers };
}

/** previewTopic, plus what the topic builder shows beside it: the words to highlight and the volume. */
export function previewTopicDetails(db: Db, text: string, options: PreviewOptions): PreviewResult {
  if (!ISO_DATE.test(options.since) || Number.isNaN(Date.parse(options.since))) {
    throw invalid('PREVIEW_INVALID', `since must be a date YYYY-MM-DD, got '${options.since}'`);
  }
  if (!Number.isInteger(options.limit) || options.limit < 0 || options.limit > MAX_PREVIEW_LIMIT) {
    throw invalid('PREVIEW_INVALID', `limit must be an integer from 0 to ${MAX_PREVIEW_LIMIT}, got ${options.limit}`);
  }
  const topic = parseTopic(text);
  return db.transaction(() => {
    // A like: topic previews with the query it would store (examples must be in the database).
    const like = topic.like === null ? null : buildLikeQuery(db, topic.like);
    const params = {
      fts: like?.matchExpr ?? topic.match!,
      minUpvotes: topic.minUpvotes,
      threshold: like === null ? null : LIKE_THRESHOLD * like.selfScore,
      examples: JSON.stringify(topic.like ?? []),
      since: options.since,
      limit: options.limit,
    };
    const count = statement<Omit<typeof params, 'limit'>, { total: number }>(db, SQL_COUNT_PREVIEW);
    const { limit: _limit, ...countParams } = params;
    const { total } = count.get(countParams)!;
    const rows = statement<typeof params, PaperRow<keyof PreviewPaper>>(db, SQL_SELECT_PREVIEW).all(params);
    const result: PreviewResult = {
      total,
      papers: rows.map(paperFromRow),
      highlight: like === null ? text : like.terms.map((t) => `"${t.word}"`).join(' OR '),
    };
    if (options.volumeSince !== undefined) result.volume = count.get({ ...countParams, since: options.volumeSince })!.total;
    return result;
  })();
}

export interface PreviewResult {
  total: number;
  papers: PreviewPaper[];
  /** The query whose words to highlight (a like: topic: the OR of its terms). */
  highlight: string;
  /** Papers matched since options.volumeSince (the topic builder's "papers a day" figure). */
  volume?: number;
}

/** Deletes queries (and their matches) that no topic uses any more. Returns how many queries went. */
export function removeUnusedQueries(db: Db): number {
  return db.transaction(() => {
    statement(db, SQL_DELETE_UNUSED_MATCHES).run();
    return statement(db, SQL_DELETE_UNUSED_QUERIES).run().changes;
  })();
}
