// A send worker thread: its own SQLite connection, renderer (compiled from the templates the main thread
// sends, so MJML never loads here), SMTP pool and logger, running the same claim -> render -> send ->
// record loop as the main thread (send-loop.ts). Started by send-workers.ts through send-worker.mjs.
//
// Messages: main -> worker  { type: 'abort' }
//           worker -> main  { type: 'progress', delta } | { type: 'done', summary } | { type: 'failed', message }
import { parentPort, workerData } from 'node:worker_threads';
import { systemClock } from '../clock.ts';
import { openDatabase } from '../db/open.ts';
import { errorMessage } from '../errors.ts';
import { Links } from '../links.ts';
import { createLogger } from '../log.ts';
import { createSmtpMailer } from '../mail/smtp-mailer.ts';
import type { Mailer } from '../mail/types.ts';
import { Tokens } from '../tokens.ts';
import { RelayWatch } from './relay-watch.ts';
import { WriteTurn } from './write-turn.ts';
import { LockBudget } from './lock-budget.ts';
import { createRenderer } from '../render/render.ts';
import { runSendLoop } from './send-loop.ts';
import { GcMeter } from './gc-meter.ts';
import type { ProgressDelta } from './send-types.ts';
import { workerCardCacheMb, type WorkerMessage, type WorkerSetup } from './send-workers.ts';

/** Progress is forwarded at most this often (the main thread adds it up). */
const PROGRESS_EVERY_MS = 100;

async function main(setup: WorkerSetup): Promise<void> {
  const port = parentPort!;
  const post = (m: WorkerMessage) => port.postMessage(m);
  const aborter = new AbortController();
  port.on('message', (m: { type: string }) => {
    if (m.type === 'abort') aborter.abort();
  });

  const { config } = setup;
  const logger = createLogger(config.LOG_LEVEL, { file: config.LOG_FILE }).child({ thread: setup.index });
  let mailer: Mailer | undefined;
  let db: ReturnType<typeof openDatabase> | undefined;
  let pending: ProgressDelta = { done: 0, sent: 0, failed: 0 };
  const flush = () => {
    if (pending.done === 0 && pending.sent === 0 && pending.failed === 0) return;
    post({ type: 'progress', delta: pending });
    pending = { done: 0, sent: 0, failed: 0 };
  };
  const ticker = setInterval(flush, PROGRESS_EVERY_MS);
  try {
    db = openDatabase(setup.databasePath, { migrate: false, busyTimeoutMs: config.DB_BUSY_TIMEOUT_MS });
    const links = new Links(config.PUBLIC_URL, new Tokens(setup.secret), systemClock);
    const renderer = await createRenderer({
      sources: setup.templates,
      logger,
      fullPapers: config.DIGEST_FULL_PAPERS,
      cardCacheBytes: workerCardCacheMb(config) * 1024 * 1024,
    });
    mailer = createSmtpMailer({
      url: setup.smtpUrl,
      from: config.MAIL_FROM,
      poolSize: setup.poolSize,
      ratePerSecond: setup.ratePerSecond,
      timeoutMs: config.SMTP_TIMEOUT_MS,
      dkim: config.dkim,
      logger,
      allowPlainAuth: config.SMTP_ALLOW_PLAIN_AUTH,
    });
    const gc = new GcMeter(setup.index);
    const summary = await runSendLoop(
      { db, mailer, renderer, links, clock: systemClock, config, logger },
      {
        concurrency: setup.poolSize,
        relay: new RelayWatch(config.RELAY_DOWN_AFTER, setup.relayMemory),
        writeTurn: new WriteTurn(setup.turnMemory),
        lockBudget: new LockBudget(config.DB_BUSY_TIMEOUT_MS ?? 0, setup.lockMemory),
        claimant: setup.claimant,
        signal: aborter.signal,
        retryWindowMs: setup.retryWindowMs,
        random: Math.random,
        onProgress: (d) => {
          pending.done += d.done;
          pending.sent += d.sent;
          pending.failed += d.failed;
        },
      },
    );
    summary.gc = [gc.stop()];
    flush();
    post({ type: 'done', summary });
  } catch (e) {
    flush();
    logger.error({ err: e }, 'send worker stopped');
    post({ type: 'failed', message: errorMessage(e) });
  } finally {
    clearInterval(ticker);
    await mailer?.close();
    db?.close();
  }
}

await main(workerData as WorkerSetup);
