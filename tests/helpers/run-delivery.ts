// A stand-alone delivery run for child-process tests (kill -9, SIGTERM, two processes at once):
// the same composition as `digest run` without fetching sources. Configuration from the environment.
//   node --import tsx tests/helpers/run-delivery.ts
// Prints one JSON line {"plan":…, "send":…, "recovered":…} on stdout; exit 1 with a message when paused.
import { systemClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/db/open.ts';
import { planEdition } from '../../src/digest/planner.ts';
import { createRenderer } from '../../src/digest/render.ts';
import { recoverStale, sendPending } from '../../src/digest/sender.ts';
import { Links } from '../../src/links.ts';
import { createLogger } from '../../src/log.ts';
import { createSmtpMailer } from '../../src/mail/smtp-mailer.ts';
import { Tokens } from '../../src/tokens.ts';
import { matchPending } from '../../src/topics/matcher.ts';

const config = loadConfig();
const logger = createLogger(config.LOG_LEVEL);
const db = openDatabase(config.DATABASE_PATH);
const clock = systemClock;
const links = new Links(config.PUBLIC_URL, new Tokens(config.SECRET_KEY ?? 'x'.repeat(32)), clock);
const renderer = await createRenderer();
const mailer = createSmtpMailer({
  url: config.SMTP_URL ?? 'smtp://127.0.0.1:25',
  from: config.MAIL_FROM,
  poolSize: config.SMTP_POOL_SIZE,
  ratePerSecond: config.SMTP_RATE_PER_SECOND,
  timeoutMs: config.SMTP_TIMEOUT_MS,
  dkim: config.dkim,
  logger,
});

const controller = new AbortController();
process.once('SIGTERM', () => controller.abort());

const recovered = recoverStale(db, clock, { logger });
matchPending(db);
const plan = planEdition(db, { clock, due: process.env.RUN_DUE === '1', logger });
// Tell the parent test the ledger is written (it may now kill or signal us).
process.stderr.write('planned\n');
const retryWindowMs = process.env.RETRY_WINDOW_MS ? Number(process.env.RETRY_WINDOW_MS) : undefined;
const send = await sendPending(
  { db, mailer, renderer, links, clock, config, logger },
  { signal: controller.signal, retryWindowMs },
);
process.stdout.write(`${JSON.stringify({ plan, send, recovered })}\n`);
await mailer.close();
db.close();
if (send.paused) process.stderr.write(`error: sending paused: ${send.pauseReason}\n`);
// Exit now: after a shutdown grace ran out, an abandoned send may still hold a socket open.
process.exit(send.paused ? 1 : 0);
