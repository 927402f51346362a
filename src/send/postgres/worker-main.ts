// The PostgreSQL worker as a bare process of its own, for the multi-process stories and bench:pg (operators run `digest worker`):
//   DATABASE_URL=postgres://… [DATABASE_SCHEMA=…] SMTP_URL=smtp://… [WORKER_LANES=5] node dist/send/postgres/worker-main.js
// Prints one JSON line with its counts when done (WORKER_UNTIL_EMPTY=1: when nothing is left to claim);
// SIGTERM stops it cleanly (sends in flight finish, unstarted claims go back).
import { createLogger } from '../../log.ts';
import { createSmtpMailer } from '../../mail/smtp-mailer.ts';
import { PgLedger } from '../../ledger/postgres/ledger.ts';
import { ClaimantLock } from '../../ledger/postgres/liveness.ts';
import { createPool } from '../../db/postgres/pool.ts';
import { runPgWorker } from './worker.ts';

const url = process.env.DATABASE_URL ?? '';
const lanes = Number(process.env.WORKER_LANES ?? 5);
const pool = createPool(url, { max: 3 });
const ledger = new PgLedger(pool);
const lock = new ClaimantLock(url, ledger.claimant, process.env.DATABASE_SCHEMA);
const mailer = createSmtpMailer({
  url: process.env.SMTP_URL ?? 'smtp://127.0.0.1:25',
  from: 'Paper Digest <digest@example.org>',
  poolSize: lanes,
  ratePerSecond: 0,
  timeoutMs: 10_000,
  logger: createLogger('silent'),
});
let stop = false;
process.on('SIGTERM', () => (stop = true));

await lock.hold();
process.stdout.write(`${JSON.stringify({ ready: ledger.claimant })}\n`);
const result = await runPgWorker({
  pool,
  ledger,
  mailer,
  lanes,
  untilEmpty: process.env.WORKER_UNTIL_EMPTY === '1',
  idleMs: 200,
  stopping: () => stop,
});
await mailer.close();
await lock.release();
await pool.end();
process.stdout.write(`${JSON.stringify({ done: ledger.claimant, ...result })}\n`);
