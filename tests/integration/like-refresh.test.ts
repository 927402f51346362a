// A like: topic saved on a young database (one day of papers) finds the same papers as one saved later:
// its terms are chosen again once the index has grown (LIKE_REFRESH_GROWTH), and the example is never
// listed as its own match. Real sample abstracts, a real SQLite file with FTS5.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { ingestBatch } from '../../src/ingest/ingest.ts';
import { readBatchFile } from '../../src/ingest/readers/batch.ts';
import { ensureQuery, matchPending } from '../../src/match/matcher.ts';
import { parseTopic } from '../../src/match/parse.ts';
import { tempDatabase, type TempDb } from '../helpers/seed.ts';

const sample = JSON.parse(readFileSync(new URL('../../samples/daily-papers-sample.json', import.meta.url), 'utf8')) as {
  papers: Array<{ id: string; title: string }>;
};
const clock = { now: () => new Date('2025-11-26T12:00:00Z') };
const CRAFT_GUI = sample.papers.find((p) => p.title.startsWith('CRAFT-GUI'))!.id;
let t: TempDb | undefined;
afterEach(() => t?.cleanup());

/** Saves like:CRAFT-GUI after `first` papers have arrived, then the rest arrive; what it matched. */
function savedAfter(first: number): { titles: string[]; terms: string[] } {
  t = tempDatabase('digest-like-refresh-');
  const db = t.db;
  ingestBatch(db, readBatchFile({ source: 'hf-daily', date: '2025-11-24', papers: sample.papers.slice(0, first) }), clock);
  const text = `like:${CRAFT_GUI}`;
  const qid = ensureQuery(db, parseTopic(text));
  db.prepare(`INSERT INTO subscribers (email, status, token_salt, timezone, created_at) VALUES ('r@example.org', 'confirmed', 's', 'UTC', '2025-11-24')`).run();
  db.prepare(`INSERT INTO topics (subscriber_id, query_id, text, position) VALUES (1, ?, ?, 0)`).run(qid, text);
  matchPending(db);
  if (first < sample.papers.length) {
    ingestBatch(db, readBatchFile({ source: 'hf-daily', date: '2025-11-25', papers: sample.papers.slice(first) }), clock);
    matchPending(db);
  }
  const titles = (db.prepare(`SELECT p.title FROM query_matches m JOIN papers p ON p.id = m.paper_id WHERE m.query_id = ?`).all(qid) as Array<{ title: string }>).map((r) => r.title);
  const terms = (JSON.parse((db.prepare('SELECT like_terms FROM queries WHERE id = ?').get(qid) as { like_terms: string }).like_terms) as Array<{ s: string }>).map((x) => x.s);
  return { titles, terms };
}

describe('like: on a database that grows after it was saved', () => {
  it('chooses its terms again on the grown index and finds what a topic saved on the full listing finds', () => {
    const late = savedAfter(sample.papers.length);
    const early = savedAfter(12);
    expect(early.terms).toEqual(late.terms);
    // Among the papers that arrived after the early save: the same matches as the late save's.
    const after = new Set(sample.papers.slice(12).map((p) => p.title));
    expect(early.titles.filter((x) => after.has(x)).sort()).toEqual(late.titles.filter((x) => after.has(x)).sort());
    expect(early.titles.some((x) => x.startsWith('GUI-G1'))).toBe(true);
    expect(early.titles.some((x) => x.startsWith('ARPO'))).toBe(true);
  });

  it('never lists the example as its own match', () => {
    const { titles } = savedAfter(12);
    expect(titles.some((x) => x.startsWith('CRAFT-GUI'))).toBe(false);
  });
});
