// The database of a planning benchmark (bench/plan.ts, bench/web-under-plan.ts): one day of synthetic
// papers (bench/corpus.ts), N confirmed subscribers with three topics each written set-based in SQL, and
// every topic matched. Ready for planDigests.
//   friendly: topics from the corpus's active pool (5-30 papers per digest)
//   broad:    3 common words each (about 150+ papers per digest out of 1,000)
import type { ManualClock } from '../src/clock.ts';
import type { Db } from '../src/db/open.ts';
import { ingestBatch } from '../src/ingest/ingest.ts';
import { ensureQuery, matchPending } from '../src/match/matcher.ts';
import { parseTopic } from '../src/match/parse.ts';
import { buildCorpus, loadAbstracts, seededRandom } from './corpus.ts';

export interface PlanSetup {
  /** Distinct topic queries in the pool. */
  topics: number;
  setupMs: number;
  matched: { queries: number; matches: number };
  matchMs: number;
}

export function buildPlanDatabase(db: Db, o: { subscribers: number; papers: number; profile: string; clock: ManualClock }): PlanSetup {
  const { clock } = o;
  const random = seededRandom(1);
  const corpus = buildCorpus(loadAbstracts(), o.papers, '2025-11-25', random);
  ingestBatch(db, { source: 'bench', date: '2025-11-25', papers: corpus.papers.map((p) => ({ ...p, key: p.id })) }, clock);

  // The topic pool: the corpus's active topics, or the words that appear in 4.5-7.5% of the papers (3 of them: about 150-200 papers a digest).
  let pool: string[];
  if (o.profile === 'broad') {
    const df = new Map<string, number>();
    for (const p of corpus.papers) for (const w of new Set(`${p.title} ${p.abstract}`.toLowerCase().match(/[a-z]{5,}/g) ?? [])) df.set(w, (df.get(w) ?? 0) + 1);
    pool = [...df].filter(([, n]) => n >= o.papers * 0.045 && n <= o.papers * 0.075).map(([w]) => w).slice(0, 40);
  } else {
    pool = corpus.activeTopics.slice(0, 400).map((t) => t.text);
  }
  const queryIds = pool.map((text) => ensureQuery(db, parseTopic(text).fts));
  db.exec(`CREATE TEMP TABLE pool (i INTEGER PRIMARY KEY, query_id INTEGER, text TEXT)`);
  const addPool = db.prepare(`INSERT INTO temp.pool (i, query_id, text) VALUES (?, ?, ?)`);
  pool.forEach((text, i) => addPool.run(i, queryIds[i], text));

  let t0 = performance.now();
  db.transaction(() => {
    db.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
       INSERT INTO subscribers (email, status, token_salt, timezone, delivery_hour, created_at, confirmed_at)
       SELECT 's' || i || '@bench.example', 'confirmed', hex(randomblob(16)), 'UTC', 7, ?, ?
       FROM n`,
    ).run(o.subscribers, clock.now().toISOString(), clock.now().toISOString());
    // Three different topics each, spread over the pool by a fixed hash of the id.
    db.prepare(
      `INSERT OR IGNORE INTO topics (subscriber_id, query_id, text, position)
       SELECT s.id, p.query_id, p.text, k.k
       FROM subscribers s, (SELECT 0 AS k UNION ALL SELECT 1 UNION ALL SELECT 2) k
       JOIN temp.pool p ON p.i = ((s.id * 2654435761 + k.k * 40503) % 4294967296) % ?`,
    ).run(pool.length);
  })();
  const setupMs = performance.now() - t0;
  db.exec(`DROP TABLE temp.pool`);

  t0 = performance.now();
  const matched = matchPending(db);
  return { topics: pool.length, setupMs, matched, matchMs: performance.now() - t0 };
}
