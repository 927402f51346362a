// The PostgreSQL bench's child processes (bench/run-postgres.ts): the compiled CLI (bin/digest.js) for each
// setup step as an operator runs it (`digest migrate`, `import`, `ingest`, `plan`), and N `digest worker
// --once` processes sending the edition at once, each with bench/pg-worker-meter.mjs loaded (its CPU, peak
// RSS, time in ledger calls, messages and bytes handed to the relay). While the workers run, the CPU of
// their PostgreSQL backends is read from /proc (the server runs here; their pids from pg_stat_activity,
// where the pool names itself `paper-digest:<schema>`), and of every postgres process together.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { applicationName } from '../src/db/postgres/pool.ts';
import { postgresCpuMs, postgresCpuSince, processCpuMs } from './pg-server-cpu.ts';
import { procStats } from './postfix-sink.ts';

const BIN = fileURLToPath(new URL('../bin/digest.js', import.meta.url));
const METER = fileURLToPath(new URL('./pg-worker-meter.mjs', import.meta.url));

export interface CliStep {
  stdout: string;
  /** CPU of the command's own PostgreSQL backends (ms; read every 200 ms), when a watch was given. */
  backendsMs?: number | null;
  seconds: number;
  /** CPU of the command's process (user + system, every thread), from /proc at its last poll (≤ 100 ms short). */
  cpuSeconds: number;
  peakRssMb: number;
  /** CPU of the postgres processes alive before and after (other sessions, background workers; not this command's backends), ms; null: not readable here. */
  postgresMs: number | null;
}

/** `node [nodeArgs] bin/digest.js ...args` with `env` as its whole environment; rejects on a non-zero exit. */
export async function digestCli(args: string[], env: Record<string, string>, nodeArgs: string[] = [], watch?: BackendWatch): Promise<CliStep> {
  if (!watch) return cliOnce(args, env, nodeArgs);
  const poll = setInterval(() => void watch.poll(), 200);
  try {
    const step = await cliOnce(args, env, nodeArgs);
    return { ...step, backendsMs: watch.total() };
  } finally {
    clearInterval(poll);
  }
}

function cliOnce(args: string[], env: Record<string, string>, nodeArgs: string[]): Promise<CliStep> {
  const pg0 = postgresCpuMs();
  const t0 = performance.now();
  let peakRssMb = 0;
  let cpuSeconds = 0;
  return new Promise((resolve, reject) => {
    const child = execFile(process.execPath, [...nodeArgs, BIN, ...args], { env, maxBuffer: 1 << 26 }, (err, stdout, stderr) => {
      clearInterval(poll);
      const pg1 = postgresCpuMs();
      if (err) return reject(new Error(`digest ${args.join(' ')} failed: ${stderr || err.message}`));
      const seconds = (performance.now() - t0) / 1000;
      resolve({ stdout, seconds, cpuSeconds, peakRssMb, postgresMs: pg0 && pg1 ? postgresCpuSince(pg0, pg1) : null });
    });
    const poll = setInterval(() => {
      try {
        const s = procStats(child.pid!);
        peakRssMb = Math.max(peakRssMb, s.maxRssMb);
        cpuSeconds = s.cpuSeconds;
      } catch {
        // exited between two polls
      }
    }, 100);
  });
}

/** What pg-worker-meter.mjs wrote at a worker's exit. */
export interface WorkerMeter {
  ledger: Record<'claim' | 'record' | 'other', { calls: number; rows: number; ms: number }>;
  /** The batch mirror's reads (BatchMirror.prepare); absent in a meter older than it. */
  mirror?: { calls: number; rows: number; ms: number };
  /** Every pool statement by its first words: calls, ms from call to answer. */
  statements?: Record<string, { calls: number; ms: number }>;
  smtp: { messages: number; bytes: number };
  cpuMs: number;
  peakRssMb: number;
}

export interface WorkerRun {
  /** `sent N, retry N, failed N, unknown N, not confirmed N, given back N`, as the worker printed it. */
  counts: { sent: number; retry: number; failed: number; unknown: number; skipped: number; released: number };
  meter: WorkerMeter;
  /** From spawn to exit. */
  seconds: number;
}

export interface WorkersResult {
  workers: WorkerRun[];
  /** From the first spawn to the last exit. */
  seconds: number;
  /** CPU of the workers' own PostgreSQL backends (ms); null when none could be read (a remote server). */
  backendsMs: number | null;
  backends: number;
  /** CPU of the postgres processes alive before and after the run (other sessions, background workers), ms. */
  postgresMs: number | null;
}

/** N `digest worker --once --lanes L` at once, until each finds nothing left to claim. */
export async function runWorkers(
  n: number,
  lanes: number,
  env: Record<string, string>,
  dir: string,
  admin: pg.Client,
  schema: string,
): Promise<WorkersResult> {
  const backends = new BackendWatch(admin, applicationName(schema));
  const pg0 = postgresCpuMs();
  const t0 = performance.now();
  const poll = setInterval(() => void backends.poll(), 200);
  try {
    const runs = await Promise.all(
      Array.from({ length: n }, (_, i) => oneWorker(lanes, { ...env, BENCH_METER_FILE: join(dir, `worker-${i}.meter.json`) })),
    );
    const seconds = (performance.now() - t0) / 1000;
    const pg1 = postgresCpuMs();
    return { workers: runs, seconds, backendsMs: backends.total(), backends: backends.count(), postgresMs: pg0 && pg1 ? postgresCpuSince(pg0, pg1) : null };
  } finally {
    clearInterval(poll);
  }
}

async function oneWorker(lanes: number, env: Record<string, string>): Promise<WorkerRun> {
  const step = await digestCli(['worker', '--once', '--lanes', String(lanes)], env, ['--import', METER]);
  const m = /sent (\d+), retry (\d+), failed (\d+), unknown (\d+), not confirmed (\d+), given back (\d+)/.exec(step.stdout);
  if (!m) throw new Error(`digest worker: no summary line in ${JSON.stringify(step.stdout)}`);
  const [sent, retry, failed, unknown, skipped, released] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const meter = JSON.parse(readFileSync(env.BENCH_METER_FILE!, 'utf8')) as WorkerMeter;
  return { counts: { sent, retry, failed, unknown, skipped, released }, meter, seconds: step.seconds };
}

/**
 * The CPU of the backends whose application_name is the pool's, read every poll: a backend first seen
 * counts from zero (the workers' backends start with them), one gone keeps its last reading (at most one
 * poll, 200 ms, short: a worker ends its pool as it exits).
 */
export class BackendWatch {
  private readonly last = new Map<number, number>();
  private busy = false;
  private readable = false;

  constructor(
    private readonly admin: pg.Client,
    private readonly appName: string,
  ) {}

  async poll(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const r = await this.admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [this.appName]);
      for (const { pid } of r.rows) this.readOne(pid);
      for (const pid of this.last.keys()) this.readOne(pid);
    } catch {
      // a poll lost: the next one reads again
    } finally {
      this.busy = false;
    }
  }

  private readOne(pid: number): void {
    const cpu = processCpuMs(pid);
    if (cpu?.comm !== 'postgres') return;
    this.readable = true;
    this.last.set(pid, Math.max(this.last.get(pid) ?? 0, cpu.ms));
  }

  total(): number | null {
    if (!this.readable) return null;
    let ms = 0;
    for (const v of this.last.values()) ms += v;
    return ms;
  }

  count(): number {
    return this.last.size;
  }
}
