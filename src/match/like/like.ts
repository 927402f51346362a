// like:<arXiv id>[,<id>…] topics: papers that resemble the examples.
//
// When a like: topic is saved, the examples' most distinctive terms (terms.ts: tf-idf over the FTS5
// index's document frequencies) become one FTS5 OR query over title and abstract, stored on the
// distinct query (queries.match_expr). Matching runs it once per distinct example query, like any
// other query, and keeps the papers whose bm25 score reaches LIKE_THRESHOLD of the examples' own score
// (queries.like_self): a paper on the same problem shares several rare terms and scores close to the
// example; a paper sharing only a common word or two does not.
// Tuned on the 71 sample abstracts (checked in tests/integration/like.test.ts): see LIKE_THRESHOLD.
import type { Db } from '../../db/open.ts';
import { statement } from '../../db/statements.ts';
import { AppError } from '../../errors.ts';
import { corpusStats, countStems, distinctiveTerms, estimatedSelfScore, type WeightedTerm } from './terms.ts';
import type { Paper } from '../../types.ts';

/** Terms in a like: query. More terms find more paraphrases but let more common-ish words in. */
export const LIKE_TERMS = 16;
/**
 * A paper matches when its bm25 score is at least this fraction of the examples' own score: it keeps the
 * papers on the example's problem and leaves the next ones out on the sample listing.
 * Measured: BENCHMARKS.md § Why the code is shaped this way, like.ts.
 */
export const LIKE_THRESHOLD = 0.18;

export const LIKE_UNKNOWN = 'LIKE_UNKNOWN';

/**
 * A like: topic's terms are chosen again when the index has grown by this factor since they were last
 * chosen: document frequencies from a few days of papers make generic words look rare, and the terms
 * picked then would stay for good.
 */
export const LIKE_REFRESH_GROWTH = 1.25;

/** What a like: query stores on its queries row. */
export interface LikeQuery {
  /** FTS5 expression: `{title abstract} : ("w1" OR "w2" …)`. */
  matchExpr: string;
  /** Papers in the index when the terms were chosen (queries.like_corpus). */
  corpus: number;
  /** The examples' own bm25 score for that expression (mean over the examples; negative). */
  selfScore: number;
  terms: WeightedTerm[];
}

interface Example {
  key: string;
  /** papers.id when the example is an indexed paper (its own score is then read from FTS5). */
  paperId: number | null;
  title: string;
  abstract: string;
}

const SQL_PAPER_EXAMPLE = `SELECT id, title, abstract FROM papers WHERE paper_key = ?`;
const SQL_FETCHED_EXAMPLE = `SELECT title, abstract FROM like_examples WHERE paper_key = ?`;
/**
 * The example's own score. A range, not `rowid = ?`: with MATCH, SQLite 3.53's FTS5 ignores an equality
 * on rowid bound as a parameter and answers every matching row (checked; ranges are honoured).
 */
const SQL_SELF_SCORE = `
  SELECT bm25(papers_fts, 3.0, 1.0, 1.0, 1.0) AS score FROM papers_fts
  WHERE papers_fts MATCH @fts AND rowid >= @id AND rowid <= @id`;
const SQL_INSERT_FETCHED = `
  INSERT INTO like_examples (paper_key, title, abstract, fetched_at) VALUES (?, ?, ?, ?)
  ON CONFLICT (paper_key) DO NOTHING`;

export function unknownExample(id: string, detail = ''): AppError {
  return new AppError(
    LIKE_UNKNOWN,
    `like:${id}: paper ${id} is not in this digest's database${detail === '' ? '' : ` and ${detail}`}; check the id or use another example`,
    { where: { field: 'topics' } },
  );
}

function findExample(db: Db, key: string): Example | undefined {
  const p = statement<[string], Pick<Paper, 'id' | 'title' | 'abstract'>>(db, SQL_PAPER_EXAMPLE).get(key);
  if (p) return { key, paperId: p.id, title: p.title, abstract: p.abstract };
  const f = statement<[string], { title: string; abstract: string }>(db, SQL_FETCHED_EXAMPLE).get(key);
  return f ? { key, paperId: null, ...f } : undefined;
}

/** Ids of `ids` that are neither papers nor fetched examples. */
export function missingExamples(db: Db, ids: readonly string[]): string[] {
  return ids.filter((id) => findExample(db, id) === undefined);
}

/** Looks an example up (the configured arXiv source); null when the source does not know it. */
export type ExampleFetcher = (id: string) => Promise<{ title: string; abstract: string } | null>;

/**
 * Makes sure every example of a like: topic can be read: the ones not in the database are looked up
 * with `fetcher` and kept in like_examples (never in papers: an old paper must not reach a digest).
 * Throws LIKE_UNKNOWN (400) naming the first id that cannot be found, before anything is written.
 */
export async function ensureExamples(db: Db, ids: readonly string[], fetcher: ExampleFetcher | undefined, now: Date): Promise<void> {
  const found: Array<{ id: string; title: string; abstract: string }> = [];
  for (const id of missingExamples(db, ids)) {
    if (fetcher === undefined) throw unknownExample(id, 'no arXiv source is configured to look it up');
    let got: { title: string; abstract: string } | null;
    try {
      got = await fetcher(id);
    } catch (cause) {
      throw new AppError(LIKE_UNKNOWN, `like:${id}: paper ${id} is not in this digest's database and arXiv could not be asked (${(cause as Error).message}); try again later`, {
        temporary: true,
        cause,
      });
    }
    if (got === null || got.title.trim() === '') throw unknownExample(id, 'arXiv does not know it either');
    found.push({ id, ...got });
  }
  if (found.length === 0) return;
  const insert = statement(db, SQL_INSERT_FETCHED);
  db.transaction(() => {
    for (const f of found) insert.run(f.id, f.title, f.abstract, now.toISOString());
  })();
}

/** Keeps one looked-up example in like_examples (never in papers); a second store of it changes nothing. */
export function storeExample(db: Db, id: string, got: { title: string; abstract: string }, now: Date): void {
  statement(db, SQL_INSERT_FETCHED).run(id, got.title, got.abstract, now.toISOString());
}

/** Builds the stored query of a like: topic. Throws LIKE_UNKNOWN when an example is not known. */
export function buildLikeQuery(db: Db, ids: readonly string[]): LikeQuery {
  const examples = ids.map((id) => findExample(db, id) ?? throwUnknown(id));
  const stats = corpusStats(db);
  // Each example's terms, merged: a term distinctive of several examples adds up.
  const merged = new Map<string, WeightedTerm>();
  for (const ex of examples) {
    // An indexed example holds each of its own terms: a term must be in at least one other paper.
    const minDf = ex.paperId === null ? 1 : 2;
    for (const t of distinctiveTerms(ex.title, ex.abstract, stats, { k: LIKE_TERMS * 2, minDf })) {
      const m = merged.get(t.stem);
      if (m) m.weight += t.weight;
      else merged.set(t.stem, { ...t });
    }
  }
  const terms = [...merged.values()].sort((a, b) => b.weight - a.weight || (a.stem < b.stem ? -1 : 1)).slice(0, LIKE_TERMS);
  if (terms.length === 0) {
    throw new AppError(LIKE_UNKNOWN, `like:${ids.join(',')}: the example has no word that any other paper uses yet; try another example`, {
      where: { field: 'topics' },
    });
  }
  const matchExpr = `{title abstract} : (${terms.map((t) => `"${t.word.replaceAll('"', '""')}"`).join(' OR ')})`;
  const scores = examples.map((ex) => {
    if (ex.paperId !== null) {
      const row = statement<{ fts: string; id: number }, { score: number }>(db, SQL_SELF_SCORE).get({ fts: matchExpr, id: ex.paperId });
      if (row) return row.score;
    }
    // Not indexed (looked up from arXiv): bm25 estimated from its own term counts.
    const counts = countStems(ex.title, ex.abstract);
    const own = terms.filter((t) => counts.has(t.stem)).map((t) => ({ ...t, tf: counts.get(t.stem)!.tf }));
    return estimatedSelfScore(own, stats.n);
  });
  const selfScore = scores.reduce((a, b) => a + b, 0) / scores.length;
  return { matchExpr, corpus: stats.n, selfScore, terms };
}

function throwUnknown(id: string): never {
  throw unknownExample(id);
}

/** queries.like_terms: the words (what highlighting marks), stems and weights. */
export function termsJson(terms: WeightedTerm[]): string {
  return JSON.stringify(terms.map((t) => ({ w: t.word, s: t.stem, x: Math.round(t.weight * 1000) / 1000 })));
}
