// `npm run bench:plan -- --subscribers 200000 --papers 1000 --profile broad|friendly`
//
// The plan stage alone, at scale: how long planning one day's slots takes, how long it blocks the
// event loop at a stretch (the longest chunk transaction: what a web request in `digest serve` can
// wait for), and what the ledger costs on disk per row. Subscribers are written set-based in SQL (the
// importer is measured by `npm run bench`); papers come from the same synthetic corpus as that bench.
//   friendly: each subscriber has 3 topics from the corpus's active pool (5-30 papers per digest)
//   broad:    3 common words each (about 150+ papers per digest out of 1,000)
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { ManualClock } from '../src/clock.ts';
import { openDatabase } from '../src/db/open.ts';
import { ingestBatch } from '../src/ingest/ingest.ts';
import { planDigests } from '../src/plan/planner.ts';
import { ensureQuery, matchPending } from '../src/topics/matcher.ts';
import { parseTopic } from '../src/topics/parse.ts';
import { buildCorpus, loadAbstracts, seededRandom } from './corpus.ts';

const { values: o } = parseArgs({
  options: {
    subscribers: { type: 'string', default: '100000' },
    papers: { type: 'string', default: '1000' },
    profile: { type: 'string', default: 'broad' },
    chunk: { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
});
const N = Number(o.subscribers);
const PAPERS = Number(o.papers);
const log = (l: string) => process.stdout.write(`${l}\n`);

const dir = mkdtempSync(join(tmpdir(), 'bench-plan-'));
const path = join(dir, 'digest.sqlite');
const db = openDatabase(path);
const clock = new ManualClock('2025-11-25T12:00:00Z');
const random = seededRandom(1);
const corpus = buildCorpus(loadAbstracts(), PAPERS, '2025-11-25', random);
ingestBatch(
  db,
  { source: 'bench', date: '2025-11-25', papers: corpus.papers.map((p) => ({ ...p, key: p.id })) },
  clock,
);

// The topic pool: the corpus's active topics, or the words that appear in 4.5-7.5% of the papers (3 of them: about 150-200 papers a digest).
let pool: string[];
if (o.profile === 'broad') {
  const df = new Map<string, number>();
  for (const p of corpus.papers) for (const w of new Set(`${p.title} ${p.abstract}`.toLowerCase().match(/[a-z]{5,}/g) ?? [])) df.set(w, (df.get(w) ?? 0) + 1);
  pool = [...df].filter(([, n]) => n >= PAPERS * 0.045 && n <= PAPERS * 0.075).map(([w]) => w).slice(0, 40);
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
  ).run(N, clock.now().toISOString(), clock.now().toISOString());
  // Three different topics each, spread over the pool by a fixed hash of the id.
  db.prepare(
    `INSERT OR IGNORE INTO topics (subscriber_id, query_id, text, position)
     SELECT s.id, p.query_id, p.text, k.k
     FROM subscribers s, (SELECT 0 AS k UNION ALL SELECT 1 UNION ALL SELECT 2) k
     JOIN temp.pool p ON p.i = ((s.id * 2654435761 + k.k * 40503) % 4294967296) % ?`,
  ).run(pool.length);
})();
log(`setup: ${N.toLocaleString()} subscribers, ${pool.length} distinct topics (${o.profile}), ${PAPERS} papers in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

t0 = performance.now();
const matched = matchPending(db);
log(`match: ${matched.queries} queries, ${matched.matches.toLocaleString()} matches in ${((performance.now() - t0) / 1000).toFixed(2)} s`);

db.pragma('wal_checkpoint(TRUNCATE)');
const sizeBefore = statSync(path).size;
const loop = monitorEventLoopDelay({ resolution: 5 });
loop.enable();
t0 = performance.now();
const r = await planDigests(db, { clock, mode: 'now', ...(o.chunk ? { chunkSize: Number(o.chunk) } : {}) });
const planMs = performance.now() - t0;
loop.disable();
db.pragma('wal_checkpoint(TRUNCATE)');
const growth = statSync(path).size - sizeBefore;
const items = db.prepare(`SELECT avg(length(items)) AS bytes, avg(paper_count) AS papers, max(paper_count) AS most FROM digests`).get() as {
  bytes: number;
  papers: number;
  most: number;
};
let tableBytes: number | undefined;
try {
  tableBytes = (db.prepare(`SELECT sum(pgsize) AS b FROM dbstat WHERE name = 'digests' OR name LIKE 'digests_%' OR name LIKE 'sqlite_autoindex_digests%'`).get() as { b: number }).b;
} catch {
  tableBytes = undefined; // dbstat not compiled in
}
log(`plan: ${r.planned.toLocaleString()} digests (${r.slots.toLocaleString()} slots) in ${(planMs / 1000).toFixed(2)} s = ${Math.round(r.planned / (planMs / 1000)).toLocaleString()} digests/s`);
log(`  papers per digest: mean ${items.papers.toFixed(1)}, max ${items.most}`);
log(`  longest event-loop block while planning: ${(loop.max / 1e6).toFixed(0)} ms (p99 ${(loop.percentile(99) / 1e6).toFixed(0)} ms)`);
log(`  packed paper list: ${items.bytes.toFixed(0)} bytes per row (${(items.bytes / items.papers).toFixed(2)} per paper)`);
if (tableBytes !== undefined) log(`  ledger on disk (table + indexes): ${(tableBytes / r.planned).toFixed(0)} bytes per row`);
log(`  database growth for this edition: ${(growth / 1e6).toFixed(1)} MB (${(growth / r.planned).toFixed(0)} bytes per row)`);
db.close();
if (!o.keep) rmSync(dir, { recursive: true, force: true });
else log(`kept ${path}`);
