// `npm run bench:web-under-plan -- --subscribers 500000 [--papers 1000] [--profile friendly|broad|diverse] [--rate 40]`
//   friendly, broad: topics spread over a pool by a hash of the id (bench/plan-setup.ts); diverse: three of
//   3,000 quoted phrases each, skewed, as `npm run bench -- --topics-profile diverse` (bench/plan-population.ts)
//
// Does the web stall while a big edition is planned? Three processes, as in production: `digest serve`
// (web pages, its own SQLite connection), a planner writing the edition's ledger rows into the same
// database file (bench/plan-child.ts: what `digest run` or the scheduler's tick does), and this process
// sending HTTP requests at a steady rate (open loop: a slow answer does not slow the next request)
// before, during and after the plan. Requests: GET /health (a write, see src/web/routes/api.ts), GET /
// (a page), POST /subscribe (a write: a new subscriber). Reports status codes and latency percentiles
// per phase and route; the issue's bar: no 5xx, p99 under 200 ms.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ManualClock } from '../src/clock.ts';
import { openDatabase } from '../src/db/open.ts';
import { freePort } from '../tests/helpers/ports.ts';
import { buildZipfDatabase } from './plan-population.ts';
import { buildPlanDatabase } from './plan-setup.ts';

const { values: o } = parseArgs({
  options: {
    subscribers: { type: 'string', default: '200000' },
    papers: { type: 'string', default: '1000' },
    profile: { type: 'string', default: 'friendly' },
    rate: { type: 'string', default: '40' },
    settle: { type: 'string', default: '3000' },
    json: { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
});
const N = Number(o.subscribers);
const RATE = Number(o.rate);
const SETTLE_MS = Number(o.settle);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const AT = '2025-11-25T12:00:00Z';
const log = (l: string) => process.stdout.write(`${l}\n`);
const load = () => loadavg().map((x) => x.toFixed(1)).join(' ');

/** 'boot': the planner process is starting (tsx compiling: CPU, no lock yet); 'plan': it is writing. */
type Phase = 'before' | 'boot' | 'plan' | 'after';
interface Sample {
  phase: Phase;
  route: string;
  status: number; // 0 = no answer (network error)
  ms: number;
}

const dir = mkdtempSync(join(tmpdir(), 'bench-web-plan-'));
const path = join(dir, 'digest.sqlite');
const children: ChildProcess[] = [];
const cleanup = () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  if (!o.keep) rmSync(dir, { recursive: true, force: true });
};
process.on('exit', cleanup);

log(`load average at start: ${load()}`);
{
  const db = openDatabase(path);
  const clock = new ManualClock(AT);
  const setup =
    o.profile === 'diverse'
      ? buildZipfDatabase(db, { subscribers: N, papers: Number(o.papers), profile: 'diverse', learning: false, seed: 1, clock })
      : buildPlanDatabase(db, { subscribers: N, papers: Number(o.papers), profile: o.profile!, clock });
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  log(`setup: ${N.toLocaleString()} subscribers (${o.profile}), ${setup.matched.matches.toLocaleString()} matches, in ${((setup.setupMs + setup.matchMs) / 1000).toFixed(1)} s`);
}

/** Starts a child and resolves once a line of its stdout passes `ready`. */
function start(args: string[], env: Record<string, string>, ready: (line: string) => boolean, cwd = dir): Promise<{ child: ChildProcess; lines: string[] }> {
  const child = spawn(process.execPath, args, { cwd, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const lines: string[] = [];
  let err = '';
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (c: Buffer) => {
      for (const l of c.toString().split('\n').filter(Boolean)) {
        lines.push(l);
        if (ready(l)) resolve({ child, lines });
      }
    });
    child.on('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}: ${err.slice(-2000)}`)));
  });
}

const port = await freePort();
await start(
  // The sources (bin/digest-dev.js, through tsx), so the bench measures the tree as it is without a build;
  // the figures in BENCHMARKS.md were taken this way.
  [join(ROOT, 'bin', 'digest-dev.js'), 'serve'],
  {
    DATABASE_PATH: path,
    PORT: String(port),
    HOST: '127.0.0.1',
    MAIL_CATCHER_PORT: '0', // no SMTP_URL: confirmation emails go to the local catcher
    SECRET_KEY: 'bench-secret-0123456789abcdef0123456789',
    DIGEST_CRON: '0 0 1 1 *', // no tick of its own during the bench
    SUBSCRIBE_RATE_LIMIT: '100000',
    LOG_LEVEL: 'warn',
    SOURCES: '',
  },
  (l) => l.includes('paper digest at'),
);
const base = `http://127.0.0.1:${port}`;
log(`digest serve listening at ${base}; requests at ${RATE}/s`);

const samples: Sample[] = [];
let phase: Phase = 'before';
let seq = 0;
const inFlight = new Set<Promise<void>>();
const ROUTES = ['GET /health', 'GET /', 'POST /subscribe'] as const;
function fire(): void {
  const route = ROUTES[seq % ROUTES.length]!;
  const n = seq++;
  const at = phase;
  const started = performance.now();
  const init: RequestInit =
    route === 'POST /subscribe'
      ? { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ email: `web${n}@bench.example`, topics: ['diffusion'] }) }
      : {};
  const p = fetch(`${base}${route.split(' ')[1]}`, { ...init, signal: AbortSignal.timeout(10_000) })
    .then(async (res) => {
      await res.arrayBuffer();
      samples.push({ phase: at, route, status: res.status, ms: performance.now() - started });
    })
    .catch(() => {
      samples.push({ phase: at, route, status: 0, ms: performance.now() - started });
    })
    .finally(() => inFlight.delete(p));
  inFlight.add(p);
}
const timer = setInterval(fire, 1000 / RATE);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

await sleep(SETTLE_MS);
phase = 'boot';
const planner = await start(['--import', 'tsx', join(ROOT, 'bench', 'plan-child.ts'), path, AT], {}, (l) => l === 'planning', ROOT);
phase = 'plan';
const plan = await new Promise<{ planned: number; slots: number; ms: number; longestBlockMs: number }>((resolve, reject) => {
  planner.child.on('exit', (code) => {
    const line = planner.lines.find((l) => l.startsWith('{'));
    if (code !== 0 || !line) reject(new Error(`planner exited ${code}`));
    else resolve(JSON.parse(line));
  });
});
phase = 'after';
await sleep(SETTLE_MS);
clearInterval(timer);
await Promise.all(inFlight);

const pct = (xs: number[], p: number) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};
const summarise = (xs: Sample[]) => {
  const ms = xs.map((s) => s.ms);
  const statuses: Record<string, number> = {};
  for (const s of xs) statuses[s.status] = (statuses[s.status] ?? 0) + 1;
  return { requests: xs.length, statuses, fiveXX: xs.filter((s) => s.status >= 500 || s.status === 0).length, p50: pct(ms, 50), p99: pct(ms, 99), max: Math.max(...ms) };
};
const f = (x: number) => `${x.toFixed(0)} ms`;
log(`plan: ${plan.planned.toLocaleString()} digests (${plan.slots.toLocaleString()} slots) in ${(plan.ms / 1000).toFixed(1)} s; longest chunk transaction ${f(plan.longestBlockMs)}`);
const report: Record<string, unknown> = { subscribers: N, profile: o.profile, rate: RATE, plan, loadAtEnd: load(), phases: {} };
for (const ph of ['before', 'boot', 'plan', 'after'] as Phase[]) {
  const all = summarise(samples.filter((s) => s.phase === ph));
  (report.phases as Record<string, unknown>)[ph] = { all, ...Object.fromEntries(ROUTES.map((r) => [r, summarise(samples.filter((s) => s.phase === ph && s.route === r))])) };
  log(`${ph.padEnd(6)}: ${all.requests} requests, statuses ${JSON.stringify(all.statuses)}, 5xx/none ${all.fiveXX}; p50 ${f(all.p50)}, p99 ${f(all.p99)}, max ${f(all.max)}`);
  for (const r of ROUTES) {
    const s = summarise(samples.filter((x) => x.phase === ph && x.route === r));
    log(`          ${r.padEnd(16)} p50 ${f(s.p50)}, p99 ${f(s.p99)}, max ${f(s.max)}${s.fiveXX ? `, ${s.fiveXX} 5xx` : ''}`);
  }
}
log(`load average at end: ${load()}`);
if (o.json) writeFileSync(o.json, JSON.stringify(report, null, 2));
if (o.keep) log(`kept ${dir}`);
process.exit(0);
