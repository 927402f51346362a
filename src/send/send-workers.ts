// A send run over several threads: this thread runs its share of the loop (send-loop.ts) while worker
// threads (send-worker.ts) run theirs, each with its own SQLite connection, renderer and SMTP pool, so
// rendering, message building and nodemailer's per-byte work use every core. Claims are compare-and-set
// in SQLite, so the threads share the rows as safely as several `digest run` processes do; whichever
// thread is free takes the next row. This thread adds up progress and summaries, forwards an abort
// (SIGTERM) to the workers, and the relay-down streak is shared (relay-watch.ts).
import { Worker } from 'node:worker_threads';
import type { DkimConfig } from '../config.ts';
import type { Logger } from '../log.ts';
import { RelayWatch } from './relay-watch.ts';
import type { TemplateSources } from '../render/render-templates.ts';
import { runSendLoop, type LoopDeps } from './send-loop.ts';
import { emptySummary, type ProgressDelta, type SenderConfig, type SendProgress, type SendSummary } from './send-types.ts';

/** What every thread of a run shares. */
interface RunSetup {
  databasePath: string;
  smtpUrl: string;
  secret: string;
  templates: TemplateSources;
  config: WorkerConfig;
  claimant: string;
  retryWindowMs: number;
}

/** What a worker thread needs to rebuild everything it uses (structured-cloned into it). */
export interface WorkerSetup extends RunSetup {
  index: number;
  /** This thread's share of SMTP_POOL_SIZE: its connections and rows in flight. */
  poolSize: number;
  ratePerSecond: number;
  relayMemory: SharedArrayBuffer;
}

export type WorkerConfig = SenderConfig & {
  PUBLIC_URL: string;
  SMTP_TIMEOUT_MS: number;
  LOG_LEVEL: string;
  dkim: DkimConfig | undefined;
};

export type WorkerMessage =
  | { type: 'progress'; delta: ProgressDelta }
  | { type: 'done'; summary: SendSummary }
  | { type: 'failed'; message: string };

export interface ParallelRun extends RunSetup {
  threads: number;
  total: number;
  signal?: AbortSignal | undefined;
  random: () => number;
  onProgress?: ((p: SendProgress) => void) | undefined;
}

/** A worker that has not reported this long after the shutdown grace is stopped (its rows: recoverStale). */
const STRAGGLER_MS = 5_000;
/**
 * The worker's entry: next to this file. Compiled (dist/send-workers.js) it is send-worker.js, plain
 * JavaScript; from the TypeScript sources (tests, bin/digest-dev.js) send-worker.mjs, which registers tsx
 * first. A production worker so loads no compiler: ~30 MB less per thread than through tsx.
 */
const BOOTSTRAP = import.meta.url.endsWith('.ts')
  ? new URL('./send-worker.mjs', import.meta.url)
  : new URL('./send-worker.js', import.meta.url);

/** Splits `total` into `parts` near-equal whole shares, the larger ones first. */
export function shares(total: number, parts: number): number[] {
  return Array.from({ length: parts }, (_, i) => Math.floor(total / parts) + (i < total % parts ? 1 : 0));
}

export async function sendWithWorkers(deps: LoopDeps, run: ParallelRun): Promise<SendSummary> {
  const { logger } = deps;
  const relay = new RelayWatch(run.config.RELAY_DOWN_AFTER);
  const pool = shares(run.config.SMTP_POOL_SIZE, run.threads);
  const progress: SendProgress = { total: run.total, done: 0, sent: 0, failed: 0 };
  const onDelta = (d: ProgressDelta) => {
    progress.done += d.done;
    progress.sent += d.sent;
    progress.failed += d.failed;
    run.onProgress?.({ ...progress });
  };

  const workers = pool.slice(1).map((poolSize, i) =>
    startWorker(
      {
        index: i + 1,
        databasePath: run.databasePath,
        smtpUrl: run.smtpUrl,
        secret: run.secret,
        templates: run.templates,
        config: run.config,
        poolSize,
        ratePerSecond: 0,
        claimant: run.claimant,
        relayMemory: relay.memory,
        retryWindowMs: run.retryWindowMs,
      },
      onDelta,
      logger,
    ),
  );
  const forwardAbort = () => {
    for (const w of workers) w.worker.postMessage({ type: 'abort' });
  };
  run.signal?.addEventListener('abort', forwardAbort, { once: true });
  logger.info({ threads: run.threads, pool, rows: run.total }, 'sending with worker threads');

  try {
    const own = await runSendLoop(deps, {
      concurrency: pool[0]!,
      relay,
      claimant: run.claimant,
      signal: run.signal,
      retryWindowMs: run.retryWindowMs,
      random: run.random,
      onProgress: onDelta,
    });
    const results = await Promise.all(workers.map((w) => w.result(run.signal, run.config.SHUTDOWN_GRACE_MS + STRAGGLER_MS)));
    const summary = combine([own, ...results.filter((r): r is SendSummary => r !== undefined)]);
    summary.sentPerThread = [own.sent, ...results.map((r) => r?.sent ?? 0)];
    summary.aborted = run.signal?.aborted === true;
    return summary;
  } finally {
    run.signal?.removeEventListener('abort', forwardAbort);
    await Promise.all(workers.map((w) => w.worker.terminate()));
  }
}

interface StartedWorker {
  worker: Worker;
  /** The worker's summary; undefined when it failed or had to be stopped (logged). */
  result(signal: AbortSignal | undefined, graceMs: number): Promise<SendSummary | undefined>;
}

function startWorker(setup: WorkerSetup, onDelta: (d: ProgressDelta) => void, logger: Logger): StartedWorker {
  const worker = new Worker(BOOTSTRAP, { workerData: setup });
  const outcome = new Promise<SendSummary | undefined>((resolve) => {
    worker.on('message', (m: WorkerMessage) => {
      if (m.type === 'progress') onDelta(m.delta);
      else if (m.type === 'done') resolve(m.summary);
      else {
        logger.error({ thread: setup.index, reason: m.message }, 'a send worker failed; the other threads take its rows');
        resolve(undefined);
      }
    });
    worker.on('error', (err) => {
      logger.error({ thread: setup.index, err }, 'a send worker crashed; the other threads take its rows');
      resolve(undefined);
    });
    worker.on('exit', () => resolve(undefined));
  });
  return {
    worker,
    result(signal, graceMs) {
      // Without an abort the worker finishes its loop; after one, it gets the grace and a little more.
      const deadline = new Promise<undefined>((resolve) => {
        const arm = () => {
          const timer = setTimeout(() => {
            logger.error({ thread: setup.index }, 'a send worker did not stop in time; its rows in flight are left to recovery');
            resolve(undefined);
          }, graceMs);
          timer.unref();
          void outcome.then(() => clearTimeout(timer));
        };
        if (signal?.aborted) arm();
        else signal?.addEventListener('abort', arm, { once: true });
      });
      return Promise.race([outcome, deadline]);
    },
  };
}

/** Adds up the threads' summaries. */
function combine(parts: SendSummary[]): SendSummary {
  const total = emptySummary();
  total.renderMs = 0;
  for (const p of parts) {
    total.sent += p.sent;
    total.failed += p.failed;
    total.retrying += p.retrying;
    total.suppressed += p.suppressed;
    total.newlySuppressed += p.newlySuppressed;
    total.unknown += p.unknown;
    total.paused ||= p.paused;
    total.pauseReason ??= p.pauseReason;
    total.storageFault ??= p.storageFault;
    total.storageFaultCode ??= p.storageFaultCode;
    total.renderMs += p.renderMs ?? 0;
  }
  total.threads = parts.length;
  return total;
}
