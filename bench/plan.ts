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
import { planDigests } from '../src/plan/planner.ts';
import { buildPlanDatabase } from './plan-setup.ts';

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
const setup = buildPlanDatabase(db, { subscribers: N, papers: PAPERS, profile: o.profile!, clock });
log(`setup: ${N.toLocaleString()} subscribers, ${setup.topics} distinct topics (${o.profile}), ${PAPERS} papers in ${(setup.setupMs / 1000).toFixed(1)} s`);
log(`match: ${setup.matched.queries} queries, ${setup.matched.matches.toLocaleString()} matches in ${(setup.matchMs / 1000).toFixed(2)} s`);

db.pragma('wal_checkpoint(TRUNCATE)');
const sizeBefore = statSync(path).size;
const loop = monitorEventLoopDelay({ resolution: 5 });
loop.enable();
const t0 = performance.now();
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
