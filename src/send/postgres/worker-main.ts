// The PostgreSQL worker as a bare process of its own, for the multi-process stories (operators run `digest worker`):
//   DATABASE_URL=postgres://… [DATABASE_SCHEMA=…] SMTP_URL=smtp://… [WORKER_LANES=5] node dist/send/postgres/worker-main.js
// The service's settings come from the environment as for every command (config.ts: PUBLIC_URL, MAIL_FROM, SECRET_KEY…).
// Prints one JSON line with its counts when done (WORKER_UNTIL_EMPTY=1: when nothing is left to claim);
// SIGTERM stops it cleanly (sends in flight finish, unstarted claims go back).
import { loadConfig } from '../../config.ts';
import { createLogger } from '../../log.ts';
import { createSmtpMailer } from '../../mail/smtp-mailer.ts';
import { PgLedger } from '../../ledger/postgres/ledger.ts';
import { ClaimantLock } from '../../ledger/postgres/liveness.ts';
import { createPool } from '../../db/postgres/pool.ts';
import { createPgDigests } from './pg-digests.ts';
import { runPgWorker } from './worker.ts';

const config = loadConfig(process.env);
const logger = createLogger('silent');

const url = process.env.DATABASE_URL ?? '';
const lanes = Number(process.env.WORKER_LANES ?? 5);
const pool = createPool(url, { max: 4 });
const ledger = new PgLedger(pool);
const lock = new ClaimantLock(url, ledger.claimant, process.env.DATABASE_SCHEMA);
const mailer = createSmtpMailer({
  url: process.env.SMTP_URL ?? 'smtp://127.0.0.1:25',
  from: config.MAIL_FROM,
  poolSize: lanes,
  ratePerSecond: 0,
  timeoutMs: 10_000,
  dkim: config.dkim,
  logger,
});
const digests = await createPgDigests(pool, config, logger);
let stop = false;
process.on('SIGTERM', () => (stop = true));

await lock.hold();
process.stdout.write(`${JSON.stringify({ ready: ledger.claimant })}\n`);
const result = await runPgWorker({
  pool,
  ledger,
  mailer,
  digests,
  lanes,
  retry: config,
  untilEmpty: process.env.WORKER_UNTIL_EMPTY === '1',
  idleMs: 200,
  stopping: () => stop,
});
await mailer.close();
digests.close();
await lock.release();
await pool.end();
process.stdout.write(`${JSON.stringify({ done: ledger.claimant, ...result })}\n`);
