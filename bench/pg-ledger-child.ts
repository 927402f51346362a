// One worker of bench/pg-ledger.ts: the real PostgreSQL worker loop (src/send/postgres/worker.ts) with a
// mailer that answers at once, so what is measured is the claim-and-record path alone (no render, no
// SMTP). Waits for "go" on stdin, then prints one JSON line: rows, wall and CPU time, peak RSS.
import { createInterface } from 'node:readline';
import { PgLedger } from '../src/ledger/postgres/ledger.ts';
import { ClaimantLock } from '../src/ledger/postgres/liveness.ts';
import { createPool } from '../src/db/postgres/pool.ts';
import { runPgWorker } from '../src/send/postgres/worker.ts';
import type { Mailer } from '../src/mail/types.ts';

const url = process.env.DATABASE_URL ?? '';
const lanes = Number(process.env.WORKER_LANES ?? 5);
const pool = createPool(url, { max: 3 });
const ledger = new PgLedger(pool);
const lock = new ClaimantLock(url, ledger.claimant, process.env.DATABASE_SCHEMA);
let n = 0;
const mailer: Mailer = {
  send: async (m) => ({ messageId: m.messageId ?? String(++n), response: '250 2.0.0 Ok: queued' }),
  close: async () => {},
};
await lock.hold();
await pool.query('SELECT 1');
process.stdout.write('ready\n');
await new Promise<void>((resolve) => {
  const rl = createInterface({ input: process.stdin });
  rl.once('line', () => (rl.close(), process.stdin.destroy(), resolve()));
});
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const r = await runPgWorker({ pool, ledger, mailer, lanes, untilEmpty: true });
const wallMs = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
await lock.release();
await pool.end();
process.stdout.write(
  `${JSON.stringify({ rows: r.sent, wallMs, cpuMs: (cpu.user + cpu.system) / 1000, peakRssMb: process.resourceUsage().maxRSS / 1024 })}\n`,
);
