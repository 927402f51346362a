// `npm run bench:plan -- --subscribers 100000 --papers 1000 --profile broad|friendly|diverse [--population zipf|hash] [--learning]`
//
// The plan stage alone, at scale: how long planning one day's slots takes, how long it holds the write
// lock at a stretch (the longest chunk transaction: what a web request in `digest serve` can wait for),
// and what the ledger costs on disk per row. Papers come from the same synthetic corpus as `npm run bench`.
//   --population zipf (default): the subscribers of `npm run bench` (bench/plan-population.ts)
//       friendly: three Zipf-drawn topics each, half of them with papers today (5-30 per digest)
//       broad:    three common phrases each (~190 papers per digest)
//       diverse:  three of 3,000 quoted phrases each, skewed (~185 papers per digest, ~one topic set per reader)
//   --population hash: bench/plan-setup.ts's older population (3 of a pool by a hash of the id:
//       only 40 (broad) or 400 (friendly) distinct topic sets; broad digests ~400 papers)
//   --learning: a third of the subscribers with a like: topic and a feedback profile (bench/learning.ts)
//   --votes random|interest: how those readers voted (random: flat models; interest: calibrated models whose
//       confident suggestions are ranked in the list)
//   --per-subscriber: plan every subscriber on their own (PlanOptions.perSubscriber), for comparison
//   --lists per-query|per-topic-set: how readers planned together share lists (PlanOptions.lists; default: the planner's)
//   --chunk N: a fixed chunk size; --seed N; --keep (keep the database)
//   --engine postgres: copy the population into a fresh PostgreSQL schema (DATABASE_URL, else the local
//       server), match it there from scratch and plan there (bench/plan-postgres.ts) instead of on SQLite
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { ManualClock } from '../src/clock.ts';
import { openDatabase } from '../src/db/open.ts';
import type { ModelPassTotals } from '../src/feedback/model-pass.ts';
import { planDigests } from '../src/plan/planner.ts';
import { TOPICS_PROFILES } from './generate.ts';
import { buildZipfDatabase } from './plan-population.ts';
import { buildPlanDatabase } from './plan-setup.ts';

const { values: o } = parseArgs({
  options: {
    subscribers: { type: 'string', default: '100000' },
    papers: { type: 'string', default: '1000' },
    profile: { type: 'string', default: 'broad' },
    population: { type: 'string', default: 'zipf' },
    learning: { type: 'boolean', default: false },
    votes: { type: 'string', default: 'random' },
    'per-subscriber': { type: 'boolean', default: false },
    lists: { type: 'string' },
    seed: { type: 'string', default: '1' },
    chunk: { type: 'string' },
    keep: { type: 'boolean', default: false },
    engine: { type: 'string', default: 'sqlite' },
  },
});
const N = Number(o.subscribers);
const PAPERS = Number(o.papers);
const log = (l: string) => process.stdout.write(`${l}\n`);
const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');

const dir = mkdtempSync(join(tmpdir(), 'bench-plan-'));
const path = join(dir, 'digest.sqlite');
const db = openDatabase(path);
const clock = new ManualClock('2025-11-25T12:00:00Z');
const profile = TOPICS_PROFILES.find((p) => p === o.profile) ?? 'friendly';
const setup =
  o.population === 'hash'
    ? { ...buildPlanDatabase(db, { subscribers: N, papers: PAPERS, profile: profile === 'diverse' ? 'broad' : profile, clock }), profiles: 0 }
    : buildZipfDatabase(db, { subscribers: N, papers: PAPERS, profile, learning: o.learning!, votes: o.votes === 'interest' ? 'interest' : 'random', seed: Number(o.seed), clock });
log(`setup: ${N.toLocaleString()} subscribers (${o.population} population), ${setup.topics} distinct topics (${profile}), ${PAPERS} papers, ${setup.profiles} profiles in ${(setup.setupMs / 1000).toFixed(1)} s`);
log(`match: ${setup.matched.queries} queries, ${setup.matched.matches.toLocaleString()} matches in ${(setup.matchMs / 1000).toFixed(2)} s`);
// Planning once per topic set (src/plan/groups.ts): how many distinct sets of unmuted queries the
// subscribers without a profile have (all watermarks are 0 here), and how many of them have a paper today.
const groups = db
  .prepare(
    `WITH k AS (SELECT s.id, (SELECT group_concat(t.query_id, ',' ORDER BY t.query_id) FROM topics t WHERE t.subscriber_id = s.id AND t.muted = 0) AS qkey
                FROM subscribers s WHERE s.status = 'confirmed' AND NOT EXISTS (SELECT 1 FROM reader_models rm WHERE rm.subscriber_id = s.id))
     SELECT count(*) AS subscribers, count(DISTINCT qkey) AS sets,
            count(DISTINCT CASE WHEN EXISTS (SELECT 1 FROM topics t JOIN query_matches m ON m.query_id = t.query_id WHERE t.subscriber_id = k.id) THEN qkey END) AS matched
     FROM k`,
  )
  .get() as { subscribers: number; sets: number; matched: number };
log(`groups: ${groups.subscribers.toLocaleString()} subscribers without a profile, ${groups.sets.toLocaleString()} distinct topic sets (${groups.matched.toLocaleString()} with a paper today)`);

if (o.engine === 'postgres') {
  await (await import('./plan-postgres.ts')).benchPlanPostgres(db, clock, log);
  db.close();
  if (!o.keep) rmSync(dir, { recursive: true, force: true });
  process.exit(0);
}
db.pragma('wal_checkpoint(TRUNCATE)');
const sizeBefore = statSync(path).size;
const loop = monitorEventLoopDelay({ resolution: 5 });
let longestChunk = 0;
let chunks = 0;
const loadBefore = load();
loop.enable();
const t0 = performance.now();
const cpu0 = process.cpuUsage();
let models: ModelPassTotals | undefined;
const r = await planDigests(db, {
  clock,
  onModels: (m) => (models = m),
  mode: 'now',
  perSubscriber: o['per-subscriber'],
  ...(o.lists === 'per-query' || o.lists === 'per-topic-set' ? { lists: o.lists } : {}),
  onChunk: (ms) => {
    chunks++;
    longestChunk = Math.max(longestChunk, ms);
  },
  ...(o.chunk ? { chunkSize: Number(o.chunk) } : {}),
});
const planMs = performance.now() - t0;
const planCpu = process.cpuUsage(cpu0);
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
const lists = db.prepare(`SELECT count(*) AS n, coalesce(sum(paper_count), 0) AS papers, coalesce(sum(length(items)), 0) AS bytes FROM query_lists`).get() as {
  n: number;
  papers: number;
  bytes: number;
};
log(`plan${o['per-subscriber'] ? ' (per subscriber)' : o.lists ? ` (${o.lists})` : ''}: ${r.planned.toLocaleString()} digests (${r.slots.toLocaleString()} slots) in ${(planMs / 1000).toFixed(2)} s = ${Math.round(r.planned / (planMs / 1000)).toLocaleString()} digests/s (load average ${loadBefore} before, ${load()} after); CPU ${((planCpu.user + planCpu.system) / 1e6).toFixed(2)} s (the machine is shared: CPU time is what the code costs)`);
if (models) log(`  reader models: ${(db.prepare('SELECT count(*) AS n FROM reader_models WHERE cal_a > 0').get() as { n: number }).n.toLocaleString()} calibrated (their confident suggestions ranked in the list)`);
if (models) log(`  of which reader models: ${(models.ms / 1000).toFixed(2)} s (CPU ${(models.cpuMs / 1000).toFixed(2)} s) for ${models.reranked.toLocaleString()} readers (${models.suggested.toLocaleString()} suggestions, ${models.trained} trained at plan time)`);
log(`  (reader, paper) items in the digests: ${r.items.toLocaleString()}; query lists written: ${lists.n.toLocaleString()} of ${lists.papers.toLocaleString()} papers (${(lists.bytes / 1e6).toFixed(1)} MB)`);
log(`  papers per digest: mean ${items.papers.toFixed(1)}, max ${items.most}`);
log(`  chunks: ${chunks}, longest chunk transaction ${longestChunk.toFixed(0)} ms`);
log(`  longest event-loop block while planning: ${(loop.max / 1e6).toFixed(0)} ms (p99 ${(loop.percentile(99) / 1e6).toFixed(0)} ms)`);
log(`  packed paper list: ${items.bytes.toFixed(0)} bytes per row (${(items.bytes / items.papers).toFixed(2)} per paper)`);
if (tableBytes !== undefined) log(`  ledger on disk (table + indexes): ${(tableBytes / r.planned).toFixed(0)} bytes per row`);
log(`  database growth for this edition: ${(growth / 1e6).toFixed(1)} MB (${(growth / r.planned).toFixed(0)} bytes per row)`);
db.close();
if (!o.keep) rmSync(dir, { recursive: true, force: true });
else log(`kept ${path}`);
