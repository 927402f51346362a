// The ledger's claim-and-record path on PostgreSQL with N worker processes (issue 39): an edition of
// --rows digests planned in a fresh schema, then --workers processes run the real worker loop with a
// mailer that answers at once (bench/pg-ledger-child.ts). No render, no SMTP: what claiming and recording
// cost, and whether they could be what limits a send run.
//   npm run bench:pg -- --rows 100000 --workers 4 [--lanes 5] [--repeat 3]
// --render [--profile broad|friendly] [--papers 1000]: the real digests instead (BENCH_RENDER=1 in the
// children): an edition of --rows subscribers planned on SQLite (bench/plan-setup.ts, planDigests), moved
// with `digest copy`'s code, each worker reading its batches' rows, papers and lists and rendering them
// (the mailer still answers at once: no SMTP, no MIME encoding).
// DATABASE_URL (postgres://…) or the local server; the schema is dropped afterwards.
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { migratePostgres } from '../src/db/postgres/migrate.ts';
import { planEdition } from '../src/ledger/postgres/plan.ts';
import { seedSubscribers } from '../tests/helpers/pg-seed.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../src/clock.ts';
import { openDatabase } from '../src/db/open.ts';
import { copySqliteToPostgres } from '../src/db/postgres/copy.ts';
import { planDigests } from '../src/plan/planner.ts';
import { buildPlanDatabase } from './plan-setup.ts';
import { postgresCpuMs, postgresCpuSince } from './pg-server-cpu.ts';
import { availableParallelism } from 'node:os';
import { withScratchSchema } from './pg-scratch.ts';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '100000' },
    workers: { type: 'string', default: '1' },
    lanes: { type: 'string', default: '5' },
    repeat: { type: 'string', default: '1' },
    render: { type: 'boolean', default: false },
    profile: { type: 'string', default: 'broad' },
    papers: { type: 'string', default: '1000' },
  },
});
const url = /^postgres(ql)?:\/\//.test(process.env.DATABASE_URL ?? '') ? process.env.DATABASE_URL! : 'postgres://root@127.0.0.1:5432/test';
const rows = Number(values.rows);
const lanes = Number(values.lanes);
const workerCounts = values.workers.split(',').map(Number);

interface ChildResult {
  rows: number;
  wallMs: number;
  cpuMs: number;
  peakRssMb: number;
  buildMs: number;
  serverCpuMs: number | null;
}

const withSchema = <T,>(fn: (schema: string, pool: pg.Pool) => Promise<T>): Promise<T> => withScratchSchema(url, { max: 2 }, fn);

/** BENCH_CPU_PROF=<dir>: each worker writes a V8 CPU profile there (bench/profile-summary.ts reads it). */
const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];

function startChild(schema: string) {
  const child = spawn(process.execPath, [...profile, '--import', 'tsx', 'bench/pg-ledger-child.ts'], {
    env: {
      ...process.env,
      DATABASE_URL: url,
      DATABASE_SCHEMA: schema,
      WORKER_LANES: String(lanes),
      LOG_LEVEL: 'silent',
      ...(values.render ? { BENCH_RENDER: '1', PUBLIC_URL: 'https://digest.example.org', SMTP_URL: 'smtp://127.0.0.1:9', SECRET_KEY: 'b'.repeat(40) } : {}),
    },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let out = '';
  const ready = new Promise<void>((r) => child.stdout.on('data', (c: Buffer) => ((out += c.toString()), out.includes('ready\n') && r())));
  const done = new Promise<ChildResult>((resolve, reject) =>
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop()!)) : reject(new Error(`worker exited ${code}`)))),
  );
  return { child, ready, done };
}

async function run(workers: number): Promise<void> {
  await withSchema(async (schema, pool) => {
    const p0 = performance.now();
    if (values.render) await plannedOnSqlite(pool);
    else {
      await migratePostgres(pool);
      await seedSubscribers(pool, rows);
      await planEdition(pool, { edition: '2026-11-27', toPaper: 40 });
    }
    const planMs = performance.now() - p0;
    await pool.query('VACUUM ANALYZE digests'); // as autovacuum would have by the time a real edition is sent
    const children = Array.from({ length: workers }, () => startChild(schema));
    await Promise.all(children.map((c) => c.ready));
    const t0 = performance.now();
    const pg0 = postgresCpuMs();
    for (const c of children) c.child.stdin.write('go\n');
    const results = await Promise.all(children.map((c) => c.done));
    const wallMs = performance.now() - t0;
    const pg1 = postgresCpuMs();
    const serverMs = results.every((r) => r.serverCpuMs !== null) ? results.reduce((n, r) => n + r.serverCpuMs!, 0) : null;
    const workerMs = results.reduce((n, r) => n + r.cpuMs, 0);
    // Our backends are gone by now (the workers ended their pools): theirs is serverMs, the rest of the server's here.
    const pgMs = pg0 && pg1 && serverMs !== null ? postgresCpuSince(pg0, pg1) + serverMs : null;
    const left = (await pool.query(`SELECT count(*)::int AS n FROM digests WHERE status <> 'sent'`)).rows[0].n;
    const total = results.reduce((n, r) => n + r.rows, 0);
    const line = {
      mode: values.render ? `render ${values.profile}` : 'claim-only',
      workers,
      lanes,
      rows: total,
      notSent: left,
      rowsPerSec: Math.round(total / (wallMs / 1000)),
      wallMsPerDigestPerWorker: +((wallMs * workers) / total).toFixed(3),
      workerCpuUsPerDigest: Math.round((workerMs * 1000) / total),
      // The workers' backends only; and every postgres process's CPU as a share of the machine (other sessions too).
      serverCpuUsPerDigest: serverMs === null ? null : Math.round((serverMs * 1000) / total),
      postgresShareOfMachine: pgMs === null ? null : +(pgMs / (wallMs * availableParallelism())).toFixed(2),
      // What the machine's cores would do if the workers and their backends had them to themselves.
      cpuCeilingRowsPerSec: serverMs === null ? null : Math.round((total * availableParallelism() * 1000) / (workerMs + serverMs)),
      buildUsPerDigest: Math.round((results.reduce((n, r) => n + r.buildMs, 0) * 1000) / total),
      peakRssMbPerWorker: Math.round(Math.max(...results.map((r) => r.peakRssMb))),
      planMs: Math.round(planMs),
    };
    console.log(JSON.stringify(line));
  });
}

/** --render: an edition planned on SQLite (real rows: reference and plain lists, topics), copied into the schema. */
async function plannedOnSqlite(pool: pg.Pool): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-pg-render-'));
  const db = openDatabase(join(dir, 'plan.sqlite'));
  try {
    const clock = new ManualClock('2025-11-25T12:00:00Z');
    buildPlanDatabase(db, { subscribers: rows, papers: Number(values.papers), profile: values.profile!, clock });
    await planDigests(db, { clock, mode: 'now' });
    const copied = await copySqliteToPostgres(db, pool);
    if (!copied.ok) throw new Error('copy to PostgreSQL: counts differ');
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

for (let i = 0; i < Number(values.repeat); i++) for (const w of workerCounts) await run(w);
