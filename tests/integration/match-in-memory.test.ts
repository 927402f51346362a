// Matching in a private in-memory FTS5 index gives the rows matchPending writes into a SQLite store's
// query_matches: same (query, paper) pairs, same bm25 scores, so the same digest order. Two runs (the
// second over a grown corpus, where like: queries choose their terms again), on the fixture listings, the
// README's examples, the matcher tests' topics and a few thousand generated topics.
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/open.ts';
import { ensureQuery, matchPending, SQL_SELECT_PENDING_QUERIES } from '../../src/match/matcher.ts';
import { parseTopic } from '../../src/match/parse.ts';
import { matchInMemory, type LikeExample, type MatchPaper, type MatchQuery, type MatchRow } from '../../src/match/match-in-memory.ts';
import { tempDatabase, type TempDb } from '../helpers/seed.ts';
import { FIXTURE, addBatch, addPaper, addSubscriber, authorsOf, categoriesOf, loadFixture } from './matcher-fixture.ts';
import { generatedTopics, LISTED_TOPICS } from './match-in-memory-topics.ts';

interface ListingPaper {
  id?: string;
  title: string;
  abstract: string;
  authors?: string[];
  categories?: string[];
  upvotes?: number;
}
const listing = (path: string | URL): ListingPaper[] => (JSON.parse(readFileSync(path, 'utf8')) as { papers: ListingPaper[] }).papers;
const BATCH_1 = listing(new URL('../fixtures/batches/2025-11-25.json', import.meta.url));
const BATCH_2 = listing(new URL('../fixtures/batches/2025-11-26.json', import.meta.url));
const SHARED = '/work/shared/fixtures/daily-papers-page.json';
const SHARED_PAGE = existsSync(SHARED) ? listing(SHARED) : [];

/** matcher.ts's pending queries: the same statement, so both paths match the same queries. */
const SQL_PENDING = SQL_SELECT_PENDING_QUERIES;
const SQL_CORPUS = `
  SELECT id, paper_key AS paperKey, title, abstract, authors, categories, upvotes FROM papers WHERE id <= ? ORDER BY id`;

let t: TempDb;
let db: Db;
let reader: number;

function addTopics(texts: readonly string[]): number {
  let added = 0;
  for (const text of texts) {
    let parsed;
    try {
      parsed = parseTopic(text);
    } catch {
      continue; // rejected topics never reach the store
    }
    const queryId = ensureQuery(db, parsed);
    added += db.prepare(`INSERT OR IGNORE INTO topics (subscriber_id, query_id, text, position) VALUES (?, ?, ?, 0)`).run(reader, queryId, text).changes;
  }
  return added;
}

interface Run {
  store: MatchRow[];
  memory: MatchRow[];
  pending: MatchQuery[];
  corpus: MatchPaper[];
  maxId: number;
  refreshedInMemory: number;
}

/** One run on both paths: the pending queries and the corpus read first, then matchPending on the store. */
function runBoth(): Run {
  const maxId = db.prepare<[], { m: number }>(`SELECT max(id) AS m FROM papers`).get()!.m;
  const pending = db.prepare<{ maxId: number }, MatchQuery>(SQL_PENDING).all({ maxId });
  const corpus = db.prepare<[number], MatchPaper>(SQL_CORPUS).all(maxId);
  const likeExamples = db.prepare<[], LikeExample>(`SELECT paper_key AS paperKey, title, abstract FROM like_examples`).all();
  const memory = matchInMemory(corpus, pending, { to: maxId, likeExamples });
  expect(memory.failed).toEqual([]);
  const before = new Set(pending.map((q) => q.id));
  const result = matchPending(db);
  expect(result.failed).toBe(0);
  const store = db
    .prepare<{ maxId: number }, MatchRow>(`SELECT query_id AS queryId, paper_id AS paperId, score FROM query_matches`)
    .all({ maxId })
    .filter((r) => before.has(r.queryId) && r.paperId > pending.find((q) => q.id === r.queryId)!.matchedThrough);
  // The like: queries whose terms were chosen again hold the same terms in the store.
  for (const r of memory.refreshed) {
    const row = db.prepare<[number], { m: string; s: number; c: number }>(`SELECT match_expr AS m, like_self AS s, like_corpus AS c FROM queries WHERE id = ?`).get(r.queryId)!;
    expect({ m: row.m, s: row.s, c: row.c }).toEqual({ m: r.matchExpr, s: r.likeSelf, c: r.likeCorpus });
  }
  return { store, memory: memory.rows, pending, corpus, maxId, refreshedInMemory: memory.refreshed.length };
}

const key = (r: MatchRow) => `${r.queryId}:${r.paperId}`;

function expectSameRows(store: MatchRow[], memory: MatchRow[]): void {
  expect(memory.length).toBe(store.length);
  const byKey = new Map(store.map((r) => [key(r), r.score]));
  let maxDiff = 0;
  for (const r of memory) {
    const s = byKey.get(key(r));
    expect(s, `pair ${key(r)} only in memory`).toBeDefined();
    maxDiff = Math.max(maxDiff, Math.abs(s! - r.score));
  }
  expect(maxDiff).toBeLessThanOrEqual(1e-9);
}

/** Each query's papers in digest order (best bm25 first, then id): what the planner's ORDER BY sees. */
function orderPerQuery(rows: MatchRow[]): Map<number, number[]> {
  const out = new Map<number, MatchRow[]>();
  for (const r of rows) out.set(r.queryId, [...(out.get(r.queryId) ?? []), r]);
  return new Map([...out].map(([q, rs]) => [q, rs.sort((a, b) => a.score - b.score || a.paperId - b.paperId).map((r) => r.paperId)]));
}

const runs: Run[] = [];

beforeAll(() => {
  t = tempDatabase('match-in-memory-');
  db = t.db;
  reader = addSubscriber(db, 'reader@example.org');
  // Run 1: the 71-paper sample; a like: example not yet a paper is a fetched example.
  loadFixture(db, addBatch(db, '2025-11-24'));
  const ex = BATCH_1[0]!;
  db.prepare(`INSERT INTO like_examples (paper_key, title, abstract, fetched_at) VALUES (?, ?, ?, '2025-11-24')`).run(ex.id, ex.title, ex.abstract);
  const words = [...FIXTURE, ...BATCH_1, ...BATCH_2].map((p) => `${p.title} ${p.abstract}`);
  const topics = [...LISTED_TOPICS, `like:${ex.id}`, `like:${ex.id} upvotes>=5`, ...generatedTopics(words, 3000, 39)];
  expect(addTopics(topics)).toBeGreaterThan(2500);
  runs.push(runBoth());
  // Run 2: two more days (and the shared page): the corpus grows by more than a quarter.
  const add = (date: string, papers: ListingPaper[], prefix: string) => {
    const batch = addBatch(db, date);
    db.transaction(() =>
      papers.forEach((p, i) =>
        addPaper(db, batch, {
          key: p.id ?? `${prefix}-${i}`,
          title: p.title,
          abstract: p.abstract,
          authors: p.authors ?? authorsOf(i),
          categories: p.categories ?? categoriesOf(i),
          upvotes: p.upvotes ?? 0,
        }),
      ),
    )();
  };
  add('2025-11-25', BATCH_1, 'b1');
  add('2025-11-26', BATCH_2, 'b2');
  add('2025-11-27', SHARED_PAGE, 'page');
  addTopics([`like:${BATCH_2[3]!.id}`, `like:${BATCH_1[2]!.id},${BATCH_2[5]!.id}`, ...generatedTopics(words, 300, 40)]);
  runs.push(runBoth());
}, 120_000);
afterAll(() => t.cleanup());

describe('matching in memory against the store', () => {
  it('first run: the same pairs and the same bm25 scores as query_matches', () => {
    const [run] = runs;
    expect(run!.pending.length).toBeGreaterThan(2500);
    expect(run!.store.length).toBeGreaterThan(10_000);
    expectSameRows(run!.store, run!.memory);
  });

  it('second run over a grown corpus: new papers only, like: terms chosen again the same way', () => {
    const run = runs[1]!;
    expect(run.refreshedInMemory).toBeGreaterThan(0);
    expect(run.store.length).toBeGreaterThan(1000);
    expectSameRows(run.store, run.memory);
  });

  it('every query lists its papers in the same order (the digest orders by score)', () => {
    for (const run of runs) expect(orderPerQuery(run.memory)).toEqual(orderPerQuery(run.store));
  });

  it('the acceptance topics match the same fixture papers', () => {
    const ids = new Map(
      db.prepare<[], { id: number; fts: string }>(`SELECT id, fts FROM queries`).all().map((q) => [q.fts, q.id]),
    );
    const acceptance = LISTED_TOPICS.flatMap((text) => {
      try {
        return [ids.get(parseTopic(text).fts)!];
      } catch {
        return [];
      }
    });
    expect(acceptance.length).toBeGreaterThan(40);
    const pick = (rows: MatchRow[]) => rows.filter((r) => acceptance.includes(r.queryId)).map(key).sort();
    expect(pick(runs[0]!.memory)).toEqual(pick(runs[0]!.store));
    expect(pick(runs[0]!.memory).length).toBeGreaterThan(100);
  });

  it('an index of the new papers alone keeps the plain pairs but not the scores: the corpus must be whole', () => {
    const run = runs[1]!;
    const from = runs[0]!.maxId;
    const plain = run.pending.filter((q) => q.likeSelf === null && q.matchedThrough === from);
    const alone = matchInMemory(run.corpus.filter((p) => p.id > from), plain, { to: run.maxId });
    const ids = new Set(plain.map((q) => q.id));
    const store = run.store.filter((r) => ids.has(r.queryId));
    expect(alone.rows.map(key).sort()).toEqual(store.map(key).sort());
    const byKey = new Map(store.map((r) => [key(r), r.score]));
    const differ = alone.rows.filter((r) => Math.abs(byKey.get(key(r))! - r.score) > 1e-9).length;
    expect(differ).toBeGreaterThan(alone.rows.length / 2);
  });
});
