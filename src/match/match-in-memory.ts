// Topic matching in a private `:memory:` SQLite FTS5 index, whatever store holds the papers: the store
// (SQLite file or PostgreSQL) hands over its papers and pending queries, and gets back the
// (query, paper, score) rows that matchPending would write into query_matches.
//
// The index must hold the store's whole corpus (every paper up to `to`), not only the run's new papers:
// bm25's idf and average lengths come from the indexed rows, the digest orders a subscriber's papers by
// their best score, and a like: query keeps a paper only when its score reaches a share of the example's.
// With the same rows indexed, the scores are the store's to the last bit (tests/integration/match-in-memory.test.ts;
// figures and the choice: BENCHMARKS.md, "PostgreSQL: where matching runs").
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { MIGRATIONS_DIR, type Db } from '../db/open.ts';
import { AppError } from '../errors.ts';
import { buildLikeQuery, LIKE_REFRESH_GROWTH, LIKE_THRESHOLD, termsJson } from './like/like.ts';
import { parseTopic } from './parse.ts';
import { SQL_MATCH, SQL_MATCH_LIKE, SQL_MATCH_UPVOTES } from './match-sql.ts';

/** A paper as papers_fts indexes it. authors and categories are the stored JSON arrays, as text. */
export interface MatchPaper {
  id: number;
  paperKey: string;
  title: string;
  abstract: string;
  authors: string;
  categories: string;
  upvotes: number;
}

/** A pending distinct query: a `queries` row (key = queries.fts, fts = coalesce(match_expr, fts)). */
export interface MatchQuery {
  id: number;
  key: string;
  fts: string;
  matchedThrough: number;
  minUpvotes: number;
  likeSelf: number | null;
  likeCorpus: number | null;
}

/** A like: query's example that is not a paper (the store's like_examples row). */
export interface LikeExample {
  paperKey: string;
  title: string;
  abstract: string;
}

export interface MatchRow {
  queryId: number;
  paperId: number;
  score: number;
}

/** A like: query whose terms were chosen again on today's corpus: the store saves it on its queries row. */
export interface RefreshedLike {
  queryId: number;
  matchExpr: string;
  likeSelf: number;
  likeTerms: string;
  likeCorpus: number;
}

export interface InMemoryResult {
  rows: MatchRow[];
  /** Queries matched (their matched_through moves to `to`). */
  matched: number[];
  /** Queries FTS5 refused: left as they were, as matchPending does. */
  failed: Array<{ queryId: number; message: string }>;
  refreshed: RefreshedLike[];
}

export interface InMemoryOptions {
  /** The newest paper id of the run (the store's max(papers.id)): each query runs over (matchedThrough, to]. */
  to: number;
  /** Examples of like: queries that are not papers (read only when a like: query's terms are chosen again). */
  likeExamples?: readonly LikeExample[];
  /**
   * Receives each query's rows as soon as they are found, instead of result.rows (which stays empty):
   * the caller writes them out and memory holds one query's matches at a time.
   */
  onRows?: (rows: MatchRow[]) => void;
  /** Called for every query FTS5 refused. */
  onFailed?: (queryId: number, cause: unknown) => void;
}

/** Statements of the store's migrations the index needs, read from them so that there is one definition. */
const SHARED_DDL: ReadonlyArray<{ file: string; re: RegExp }> = [
  { file: '001_init.sql', re: /CREATE VIRTUAL TABLE papers_fts\b[\s\S]*?\);/g },
  { file: '001_init.sql', re: /CREATE TRIGGER papers_fts_insert\b[\s\S]*?\bEND;/g },
  { file: '004_learning.sql', re: /CREATE TABLE like_examples\b[\s\S]*?\)\s*STRICT;/g },
  { file: '004_learning.sql', re: /CREATE VIRTUAL TABLE papers_vocab\b[^;]*;/g },
];

/**
 * The content table papers_fts points at: the columns matching reads (the index itself, bm25's and
 * like:'s inputs). The store's own `papers` has more (batches, urls, dates) that matching never reads.
 */
const SQL_CREATE_PAPERS = `
  CREATE TABLE papers (
    id INTEGER PRIMARY KEY, paper_key TEXT NOT NULL UNIQUE, title TEXT NOT NULL, abstract TEXT NOT NULL,
    authors TEXT NOT NULL, categories TEXT NOT NULL, upvotes INTEGER NOT NULL
  )`;
const SQL_INSERT_PAPER = `
  INSERT INTO papers (id, paper_key, title, abstract, authors, categories, upvotes)
  VALUES (@id, @paperKey, @title, @abstract, @authors, @categories, @upvotes)`;
const SQL_INSERT_EXAMPLE = `
  INSERT OR IGNORE INTO like_examples (paper_key, title, abstract, fetched_at) VALUES (@paperKey, @title, @abstract, '')`;
const SQL_PAPER_COUNT = `SELECT count(*) AS n FROM papers`;

/** Papers inserted per transaction while the index is built. */
const INSERT_CHUNK = 1000;

let ddlCache: string | null = null;

/** The shared statements, in order; throws when a migration no longer holds one (renamed, split). */
export function sharedIndexDdl(dir = MIGRATIONS_DIR): string {
  if (ddlCache !== null && dir === MIGRATIONS_DIR) return ddlCache;
  const parts = SHARED_DDL.map(({ file, re }) => {
    const found = readFileSync(join(dir, file), 'utf8').match(re);
    if (found?.length !== 1) {
      throw new AppError('MATCH_INDEX_DDL', `${file}: expected one statement matching ${re.source}, found ${found?.length ?? 0}`);
    }
    return found[0];
  });
  const ddl = [SQL_CREATE_PAPERS + ';', ...parts].join('\n');
  if (dir === MIGRATIONS_DIR) ddlCache = ddl;
  return ddl;
}

/**
 * A private in-memory index. Fill it with add() (in chunks, e.g. from a database cursor, so only one
 * chunk of papers is in JS memory at a time), run match(), then close() it.
 */
export class MatchIndex {
  readonly db: Db;
  private readonly insert: Database.Statement;

  constructor() {
    this.db = new Database(':memory:');
    this.db.exec(sharedIndexDdl());
    this.insert = this.db.prepare(SQL_INSERT_PAPER);
  }

  /** Adds papers to the corpus (ids as in the store; any order). */
  add(papers: Iterable<MatchPaper>): void {
    let chunk: MatchPaper[] = [];
    const flush = this.db.transaction((rows: MatchPaper[]) => {
      for (const p of rows) this.insert.run(p);
    });
    for (const p of papers) {
      chunk.push(p);
      if (chunk.length >= INSERT_CHUNK) {
        flush(chunk);
        chunk = [];
      }
    }
    if (chunk.length > 0) flush(chunk);
  }

  /** Runs each query over its unseen papers, as matchPending does, without writing anything. */
  match(queries: readonly MatchQuery[], options: InMemoryOptions): InMemoryResult {
    if (options.likeExamples?.length) {
      const add = this.db.prepare(SQL_INSERT_EXAMPLE);
      this.db.transaction(() => options.likeExamples!.forEach((e) => add.run(e)))();
    }
    const plain = this.db.prepare(SQL_MATCH);
    const withUpvotes = this.db.prepare(SQL_MATCH_UPVOTES);
    const like = this.db.prepare(SQL_MATCH_LIKE);
    const result: InMemoryResult = { rows: [], matched: [], failed: [], refreshed: [] };
    const corpus = (this.db.prepare(SQL_PAPER_COUNT).get() as { n: number }).n;
    for (const q of queries) {
      if (q.matchedThrough >= options.to) continue;
      const params = { fts: q.fts, from: q.matchedThrough, to: options.to };
      let found: Array<{ paperId: number; score: number }>;
      try {
        if (q.likeSelf !== null) {
          const examples = parseTopic(q.key).like ?? [];
          const current = this.refreshedLike(q, examples, corpus, result.refreshed);
          const threshold = LIKE_THRESHOLD * current.likeSelf;
          found = like.all({ ...params, fts: current.fts, threshold, minUpvotes: q.minUpvotes, examples: JSON.stringify(examples) }) as typeof found;
        } else if (q.minUpvotes > 0) found = withUpvotes.all({ ...params, minUpvotes: q.minUpvotes }) as typeof found;
        else found = plain.all(params) as typeof found;
      } catch (cause) {
        result.failed.push({ queryId: q.id, message: (cause as Error).message });
        options.onFailed?.(q.id, cause);
        continue;
      }
      const rows = found.map((r) => ({ queryId: q.id, paperId: r.paperId, score: r.score }));
      if (options.onRows) options.onRows(rows);
      else for (const r of rows) result.rows.push(r);
      result.matched.push(q.id);
    }
    return result;
  }

  /** matcher.ts's refreshedLike on this corpus: the new terms are returned for the store to save. */
  private refreshedLike(q: MatchQuery, examples: string[], corpus: number, out: RefreshedLike[]): { fts: string; likeSelf: number } {
    if (q.likeCorpus !== null && corpus < q.likeCorpus * LIKE_REFRESH_GROWTH) return { fts: q.fts, likeSelf: q.likeSelf! };
    try {
      const built = buildLikeQuery(this.db, examples);
      out.push({ queryId: q.id, matchExpr: built.matchExpr, likeSelf: built.selfScore, likeTerms: termsJson(built.terms), likeCorpus: built.corpus });
      return { fts: built.matchExpr, likeSelf: built.selfScore };
    } catch {
      // As matchPending: an example that can no longer be read keeps the stored terms.
      return { fts: q.fts, likeSelf: q.likeSelf! };
    }
  }

  close(): void {
    this.db.close();
  }
}

/**
 * The matches of `queries` over `papers` (the store's whole corpus up to options.to), computed in a
 * private in-memory index that is closed before returning.
 */
export function matchInMemory(papers: Iterable<MatchPaper>, queries: readonly MatchQuery[], options: InMemoryOptions): InMemoryResult {
  const index = new MatchIndex();
  try {
    index.add(papers);
    return index.match(queries, options);
  } finally {
    index.close();
  }
}
