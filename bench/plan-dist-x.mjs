// `node bench/plan-dist.mjs <dist dir> <saved.sqlite> <scratch.sqlite>`: plans a copy of a database saved by
// bench/plan-save.ts with the build in <dist dir> (a `dist/` of `npm run build`; copy one aside, with a `db`
// link to the migrations beside it, to compare two commits), and prints the plan's CPU time, the model
// pass's, and a hash of every planned row and suggestion: two builds that plan the same digests print the
// same hashes. Alternate the builds run to run: the machine is shared (BENCHMARKS.md, reader models).
import { createHash } from 'node:crypto';
import { copyFileSync } from 'node:fs';
import { resolve } from 'node:path';

const [dist, saved, scratch] = process.argv.slice(2);
if (!scratch) throw new Error('usage: node bench/plan-dist.mjs <dist dir> <saved.sqlite> <scratch.sqlite>');
const load = (p) => import(resolve(dist, p));
const { openDatabase } = await load('db/open.js');
const { ManualClock } = await load('clock.js');
const { planDigests } = await load('plan/planner.js');
copyFileSync(saved, scratch);
const db = openDatabase(scratch);
let models; let chunks = 0; let slotsN = 0;
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const r = await planDigests(db, { clock: new ManualClock('2025-11-25T12:00:00Z'), mode: 'now', chunkSize: process.env.CHUNK ? Number(process.env.CHUNK) : undefined, onChunk: (ms, n) => { chunks++; slotsN += n; }, onModels: (m) => (models = m) });
const cpu = process.cpuUsage(cpu0);
const s = (x) => x.toFixed(2);
console.log(`${dist}: ${r.planned} digests, wall ${s((performance.now() - t0) / 1000)} s, CPU ${s((cpu.user + cpu.system) / 1e6)} s; model pass CPU ${s(models.cpuMs / 1000)} s for ${models.reranked} readers (${models.suggested} suggestions)`);
const hash = (sql) => {
  const h = createHash('sha256');
  for (const row of db.prepare(sql).raw().iterate()) h.update(JSON.stringify(row, (_k, v) => (v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v)));
  return h.digest('hex').slice(0, 16);
};
const rows = hash(`SELECT subscriber_id, items, paper_count, topic_ids, from_paper, to_paper FROM digests ORDER BY subscriber_id`);
const suggestions = hash(`SELECT d.subscriber_id, s.paper_id, s.score, s.reason_paper FROM digest_suggestions s JOIN digests d ON d.id = s.digest_id ORDER BY d.subscriber_id, s.paper_id`);
console.log(`  chunks ${chunks}`); console.log(`  rows ${rows}, suggestions ${suggestions}`);
db.close();
