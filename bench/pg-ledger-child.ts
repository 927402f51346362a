// One worker of bench/pg-ledger.ts: the real PostgreSQL worker loop (src/send/postgres/worker.ts) with a
// mailer that answers at once. Claim-only (default): a fixed message per row, so what is measured is the
// claim-and-record path alone (no render, no SMTP). BENCH_RENDER=1: the real digests (pg-digests.ts: the
// batch's reads, load, render, the mail), still no SMTP. Waits for "go" on stdin, then prints one JSON
// line: rows, wall and CPU time (its own, and its PostgreSQL backends' when the server is local), peak RSS.
import { createInterface } from 'node:readline';
import { PgLedger } from '../src/ledger/postgres/ledger.ts';
import { ClaimantLock } from '../src/ledger/postgres/liveness.ts';
import { createPool } from '../src/db/postgres/pool.ts';
import { runPgWorker } from '../src/send/postgres/worker.ts';
import { createPgDigests, type DigestSource } from '../src/send/postgres/pg-digests.ts';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/log.ts';
import type { Mailer } from '../src/mail/types.ts';
import { BackendCpu } from './pg-server-cpu.ts';
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Claim-only: a fixed message per row, nothing read but the claim. */
const fixedMessages: DigestSource = {
  prepare: async () => {},
  build: (row) => ({
    kind: 'mail',
    mail: { to: `s${row.subscriber_id}@example.org`, subject: row.edition, text: `${row.id}`, html: `<p>${row.id}</p>`, messageId: `d${row.id}@x` },
    release: undefined,
  }),
  close: () => {},
};

const url = process.env.DATABASE_URL ?? '';
const lanes = Number(process.env.WORKER_LANES ?? 5);
const pool = createPool(url, { max: 4 });
const serverCpu = new BackendCpu(pool);
const ledger = new PgLedger(pool);
const lock = new ClaimantLock(url, ledger.claimant, process.env.DATABASE_SCHEMA);
let n = 0;
const mailer: Mailer = {
  send: async (m) => ({ messageId: m.messageId ?? String(++n), response: '250 2.0.0 Ok: queued' }),
  close: async () => {},
};
const render = process.env.BENCH_RENDER === '1';
const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent' });
const source = render ? await createPgDigests(pool, config, createLogger('silent')) : fixedMessages;
// The time in build (load + render + the mail: synchronous, so this thread's own work), apart from the rest.
let buildMs = 0;
const digests: DigestSource = {
  prepare: (rows) => source.prepare(rows),
  build: (row) => {
    const t = performance.now();
    try {
      return source.build(row);
    } finally {
      buildMs += performance.now() - t;
    }
  },
  close: () => source.close(),
};
await lock.hold();
await pool.query('SELECT 1');
process.stdout.write('ready\n');
await new Promise<void>((resolve) => {
  const rl = createInterface({ input: process.stdin });
  rl.once('line', () => (rl.close(), process.stdin.destroy(), resolve()));
});
// BENCH_RUN_PROF=<dir>: a V8 CPU profile of the run alone (from "go" to the last record), not of start-up.
const prof = process.env.BENCH_RUN_PROF ? new Session() : undefined;
if (prof) (prof.connect(), await prof.post('Profiler.enable'), await prof.post('Profiler.start'));
serverCpu.start();
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const r = await runPgWorker({ pool, ledger, mailer, digests, lanes, untilEmpty: true, retry: config });
const wallMs = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
const serverCpuMs = serverCpu.stop();
if (prof) writeFileSync(join(process.env.BENCH_RUN_PROF!, `run-${process.pid}.cpuprofile`), JSON.stringify((await prof.post('Profiler.stop')).profile));
digests.close();
await lock.release();
await pool.end();
process.stdout.write(
  `${JSON.stringify({ rows: r.sent, wallMs, cpuMs: (cpu.user + cpu.system) / 1000, peakRssMb: process.resourceUsage().maxRSS / 1024, buildMs, serverCpuMs })}\n`,
);
