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
import { createLogger, type Logger } from '../log.ts';
import { createSmtpMailer } from '../mail/smtp-mailer.ts';
import type { Mailer } from '../mail/types.ts';
import { Tokens } from '../tokens.ts';
import { RelayWatch } from './relay-watch.ts';
import { WriteTurn } from './write-turn.ts';
import { LockBudget } from './lock-budget.ts';
import { createRenderer } from '../render/render.ts';
import { runSendLoop, type LoopOptions } from './send-loop.ts';
import { GcMeter } from './gc-meter.ts';
import type { ProgressDelta } from './send-types.ts';
import { workerCardCacheMb, type WorkerMessage, type WorkerSetup } from './send-workers.ts';

/** Progress is forwarded at most this often (the main thread adds it up). */
const PROGRESS_EVERY_MS = 100;

/** Progress deltas added up here and posted to the main thread at most every PROGRESS_EVERY_MS. */
class ProgressForwarder {
  private pending: ProgressDelta = { done: 0, sent: 0, failed: 0 };
  private readonly ticker = setInterval(() => this.flush(), PROGRESS_EVERY_MS);

  constructor(private readonly post: (m: WorkerMessage) => void) {}

  readonly add = (d: ProgressDelta): void => {
    this.pending.done += d.done;
    this.pending.sent += d.sent;
    this.pending.failed += d.failed;
  };

  flush(): void {
    const pending = this.pending;
    if (pending.done === 0 && pending.sent === 0 && pending.failed === 0) return;
    this.post({ type: 'progress', delta: pending });
    this.pending = { done: 0, sent: 0, failed: 0 };
  }

  stop(): void {
    clearInterval(this.ticker);
  }
}

function workerMailer(setup: WorkerSetup, logger: Logger): Mailer {
  const { config } = setup;
  return createSmtpMailer({
    url: setup.smtpUrl,
    from: config.MAIL_FROM,
    poolSize: setup.poolSize,
    ratePerSecond: setup.ratePerSecond,
    timeoutMs: config.SMTP_TIMEOUT_MS,
    dkim: config.dkim,
    logger,
    allowPlainAuth: config.SMTP_ALLOW_PLAIN_AUTH,
  });
}

/** This thread's share of the run, with the run-wide relay watch, write turns and lock budget. */
function workerLoopOptions(setup: WorkerSetup, signal: AbortSignal, onProgress: (d: ProgressDelta) => void): LoopOptions {
  const { config } = setup;
  return {
    concurrency: setup.poolSize,
    relay: new RelayWatch(config.RELAY_DOWN_AFTER, setup.relayMemory),
    writeTurn: new WriteTurn(setup.turnMemory),
    lockBudget: new LockBudget(config.DB_BUSY_TIMEOUT_MS ?? 0, setup.lockMemory),
    claimant: setup.claimant,
    signal,
    retryWindowMs: setup.retryWindowMs,
    random: Math.random,
    onProgress,
  };
}

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
  const progress = new ProgressForwarder(post);
  try {
    db = openDatabase(setup.databasePath, { migrate: false, busyTimeoutMs: config.DB_BUSY_TIMEOUT_MS });
    const links = new Links(config.PUBLIC_URL, new Tokens(setup.secret), systemClock);
    const renderer = await createRenderer({
      sources: setup.templates,
      logger,
      fullPapers: config.DIGEST_FULL_PAPERS,
      cardCacheBytes: workerCardCacheMb(config) * 1024 * 1024,
    });
    mailer = workerMailer(setup, logger);
    const gc = new GcMeter(setup.index);
    const summary = await runSendLoop(
      { db, mailer, renderer, links, clock: systemClock, config, logger },
      workerLoopOptions(setup, aborter.signal, progress.add),
    );
    summary.gc = [gc.stop()];
    progress.flush();
    post({ type: 'done', summary });
  } catch (e) {
    progress.flush();
    logger.error({ err: e }, 'send worker stopped');
    post({ type: 'failed', message: errorMessage(e) });
  } finally {
    progress.stop();
    await mailer?.close();
    db?.close();
  }
}

await main(workerData as WorkerSetup);
