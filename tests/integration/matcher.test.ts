// Topic queries against a real SQLite file holding the real Daily Papers listing: FTS5's own side (random
// syntax never an SQLite error, tokenizer parity, highlights) and matchPending. The topic language's
// acceptance cases, on both engines: matching-engines.test.ts.
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/open.ts';
import { createHighlighter } from '../../src/match/highlight.ts';
import { foldToken, stemToken, tokenRegex } from '../../src/match/normalize.ts';
import { matchPending, removeUnusedQueries } from '../../src/match/matcher.ts';
import { parseTopic } from '../../src/match/parse.ts';
import { tempDatabase, type TempDb } from '../helpers/seed.ts';
import {
  FIXTURE,
  addBatch,
  addPaper,
  addSubscriber,
  addTopic,
  grep,
  loadFixture,
  matchedIndices,
} from './matcher-fixture.ts';

let t: TempDb;
let db: Db;
let reader: number;

beforeAll(() => {
  t = tempDatabase('matcher-');
  db = t.db;
  loadFixture(db, addBatch(db, '2025-11-25'));
  reader = addSubscriber(db, 'reader@example.org');
});
afterAll(() => t.cleanup());

/** Gives the confirmed reader the topic, runs the matcher, returns the fixture indices it matched. */
function matches(text: string): number[] {
  const queryId = addTopic(db, reader, text);
  const result = matchPending(db);
  expect(result.failed).toBe(0);
  return matchedIndices(db, queryId);
}

const intersect = (a: number[], b: number[]) => a.filter((x) => b.includes(x));

describe('topic language against FTS5', () => {
  it('accepts or cleanly rejects random strings of special characters (never an SQLite error)', () => {
    let seed = 42;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const pieces = ['"', '(', ')', '-', '*', ':', '^', '{', '}', ' ', ' ', 'OR', 'AND', 'NOT', 'NEAR', 'title:', 'author:', 'rl', 'game', 'é', "'", ','];
    const probe = db.prepare(`SELECT count(*) AS n FROM papers_fts WHERE papers_fts MATCH ?`);
    let accepted = 0;
    for (let n = 0; n < 500; n++) {
      const text = Array.from({ length: 1 + Math.floor(random() * 12) }, () => pieces[Math.floor(random() * pieces.length)]).join('');
      let fts: string;
      try {
        fts = parseTopic(text).fts;
      } catch (e) {
        expect((e as { code?: string }).code, text).toBe('TOPIC_INVALID');
        continue;
      }
      accepted++;
      expect(() => probe.get(fts), `${text} -> ${fts}`).not.toThrow();
    }
    expect(accepted).toBeGreaterThan(100);
  });

  it('stems and folds every word of the listing exactly as the FTS5 tokenizer does (highlighter parity)', () => {
    db.exec(`CREATE VIRTUAL TABLE stem_probe USING fts5 (w, tokenize = 'porter unicode61 remove_diacritics 2');
             CREATE VIRTUAL TABLE stem_probe_terms USING fts5vocab (stem_probe, 'instance');`);
    const words = [...new Set(FIXTURE.flatMap((p) => [...`${p.title} ${p.abstract} Pokémon naïvely données Œuvres cafés`.matchAll(tokenRegex())].map((m) => m[0])))];
    const insert = db.prepare('INSERT INTO stem_probe (rowid, w) VALUES (?, ?)');
    db.transaction(() => words.forEach((w, i) => insert.run(i + 1, w)))();
    const sqlite = new Map(
      (db.prepare('SELECT doc, term FROM stem_probe_terms').all() as Array<{ doc: number; term: string }>).map((r) => [r.doc, r.term]),
    );
    const differing = words.filter((w, i) => sqlite.get(i + 1) !== stemToken(foldToken(w)));
    expect(words.length).toBeGreaterThan(2500);
    expect(differing).toEqual([]);
  });

  it('highlights words in every paper FTS5 matched, and none in those it did not', () => {
    // (a title: term is highlighted in abstracts too: the highlighter is not told which field it marks)
    for (const topic of ['navigated', 'games', '"human feedback"', 'pok*', 'multi-agent', '"imperfect information"', 'negotiated', 'chess OR poker']) {
      const highlight = createHighlighter([topic]);
      const matched = matches(topic);
      FIXTURE.forEach((p, i) => {
        const hit = [...highlight(p.title), ...highlight(p.abstract)].some((s) => s.hit);
        expect(hit, `${topic} on #${i} ${p.title}`).toBe(matched.includes(i));
      });
    }
  });
});

describe('matchPending', () => {
  let m: TempDb;
  beforeAll(() => {
    m = tempDatabase('matcher-');
    loadFixture(m.db, addBatch(m.db, '2025-11-25'));
  });
  afterAll(() => m.cleanup());

  it('runs a query shared by two subscribers once, and matching again adds nothing', () => {
    const alice = addSubscriber(m.db, 'alice@example.org');
    const bob = addSubscriber(m.db, 'bob@example.org');
    const q1 = addTopic(m.db, alice, 'Self-Play games');
    const q2 = addTopic(m.db, bob, '  games   "self play" ');
    expect(q2).toBe(q1);
    expect(m.db.prepare('SELECT count(*) AS n FROM queries').get()).toEqual({ n: 1 });

    // A second connection to the same file that records every statement it executes.
    const executed: string[] = [];
    const traced = new Database(m.path, { verbose: (sql) => executed.push(String(sql)) });
    try {
      const first = matchPending(traced);
      expect(first).toMatchObject({ queries: 1, failed: 0 });
      expect(first.matches).toBe(intersect(grep(/self[- ]play/i), grep(/\bgames?\b/i)).length);
      expect(executed.filter((sql) => sql.includes('MATCH'))).toHaveLength(1);

      const second = matchPending(traced);
      expect(second).toMatchObject({ queries: 0, matches: 0, failed: 0 });
    } finally {
      traced.close();
    }
    expect(matchedIndices(m.db, q1)).toEqual(intersect(grep(/self[- ]play/i), grep(/\bgames?\b/i)));
    const { maxId } = m.db.prepare('SELECT max(id) AS maxId FROM papers').get() as { maxId: number };
    expect(m.db.prepare('SELECT matched_through AS through FROM queries WHERE id = ?').get(q1)).toEqual({ through: maxId });
  });

  it('matches only the papers a query has not seen when a new batch arrives', () => {
    const before = m.db.prepare('SELECT count(*) AS n FROM query_matches').get() as { n: number };
    const batch = addBatch(m.db, '2025-11-26');
    addPaper(m.db, batch, {
      key: '2511.09999',
      title: 'Self-Play Fine-Tuning for Board Games',
      abstract: 'We study self-play in board games such as chess and Go.',
    });
    addPaper(m.db, batch, { key: '2511.09998', title: 'Unrelated Optics', abstract: 'Lenses and mirrors.' });
    const result = matchPending(m.db);
    expect(result).toMatchObject({ queries: 1, matches: 1, failed: 0 });
    expect(m.db.prepare('SELECT count(*) AS n FROM query_matches').get()).toEqual({ n: before.n + 1 });
  });

  it('ignores queries that only unconfirmed or unsubscribed subscribers use', () => {
    const pending = addSubscriber(m.db, 'pending@example.org', 'pending');
    const gone = addSubscriber(m.db, 'gone@example.org', 'unsubscribed');
    const q = addTopic(m.db, pending, 'chess');
    addTopic(m.db, gone, 'chess');
    expect(matchPending(m.db)).toMatchObject({ queries: 0, matches: 0 });
    expect(matchedIndices(m.db, q)).toEqual([]);

    m.db.prepare(`UPDATE subscribers SET status = 'confirmed' WHERE id = ?`).run(pending);
    expect(matchPending(m.db)).toMatchObject({ queries: 1, matches: 2 }); // ChessQA + the new board-games paper
  });

  it('stores bm25 scores, better (lower) for a title hit than for an abstract-only hit', () => {
    const q = m.db.prepare(`SELECT id FROM queries WHERE fts = ?`).get(parseTopic('chess').fts) as { id: number };
    const scores = m.db
      .prepare(
        `SELECT p.paper_key AS key, m.score FROM query_matches m JOIN papers p ON p.id = m.paper_id WHERE m.query_id = ?`,
      )
      .all(q.id) as Array<{ key: string; score: number }>;
    const byKey = Object.fromEntries(scores.map((s) => [s.key, s.score]));
    expect(byKey['fx-52']).toBeLessThan(0);
    expect(byKey['2511.09999']).toBeLessThan(0);
    expect(byKey['fx-52']!).toBeLessThan(byKey['2511.09999']!); // "ChessQA … Chess Understanding" in the title
  });

  it('can run inside a caller savepoint that is then rolled back (dry run)', () => {
    const carol = addSubscriber(m.db, 'carol@example.org');
    const q = addTopic(m.db, carol, 'poker');
    m.db.exec('SAVEPOINT dry_run');
    expect(matchPending(m.db)).toMatchObject({ queries: 1, matches: 2 });
    m.db.exec('ROLLBACK TO dry_run; RELEASE dry_run');
    expect(matchedIndices(m.db, q)).toEqual([]);
    expect(matchPending(m.db)).toMatchObject({ queries: 1, matches: 2 });
  });

  it('skips a query SQLite refuses, logs it, and still matches the others', () => {
    const erin = addSubscriber(m.db, 'erin@example.org');
    const bad = Number(m.db.prepare(`INSERT INTO queries (fts) VALUES ('"unterminated')`).run().lastInsertRowid);
    m.db.prepare(`INSERT INTO topics (subscriber_id, query_id, text, position) VALUES (?, ?, 'legacy', 0)`).run(erin, bad);
    const good = addTopic(m.db, erin, 'curriculum');
    const warnings: unknown[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => warnings.push(JSON.parse(line)) });
    expect(matchPending(m.db, { logger })).toMatchObject({ queries: 1, failed: 1, matches: grep(/\bcurriculum/i).length });
    expect(matchedIndices(m.db, good)).toEqual(grep(/\bcurriculum/i));
    expect(m.db.prepare('SELECT matched_through AS through FROM queries WHERE id = ?').get(bad)).toEqual({ through: 0 });
    expect(warnings).toEqual([expect.objectContaining({ queryId: bad, msg: 'topic query failed in FTS5; skipped' })]);
    m.db.prepare('DELETE FROM topics WHERE query_id = ?').run(bad);
    m.db.prepare('DELETE FROM queries WHERE id = ?').run(bad);
  });

  it('removes queries no topic uses any more, with their matches, and keeps the others', () => {
    const dave = addSubscriber(m.db, 'dave@example.org');
    const q = addTopic(m.db, dave, 'negotiated');
    matchPending(m.db);
    expect(matchedIndices(m.db, q)).toEqual([17, 63]);
    const queriesBefore = (m.db.prepare('SELECT count(*) AS n FROM queries').get() as { n: number }).n;

    expect(removeUnusedQueries(m.db)).toBe(0);
    m.db.prepare('DELETE FROM topics WHERE query_id = ?').run(q);
    expect(removeUnusedQueries(m.db)).toBe(1);
    expect(m.db.prepare('SELECT count(*) AS n FROM queries').get()).toEqual({ n: queriesBefore - 1 });
    expect(m.db.prepare('SELECT count(*) AS n FROM query_matches WHERE query_id = ?').get(q)).toEqual({ n: 0 });
    expect(m.db.prepare('SELECT count(*) AS n FROM query_matches').get()).not.toEqual({ n: 0 });
  });
});
