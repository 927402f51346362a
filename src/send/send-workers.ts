// A send run over several threads: worker threads (send-worker.ts) each run the send loop
// (send-loop.ts) with their own SQLite connection, renderer and SMTP pool, so rendering, message building
// and nodemailer's per-byte work use every core. Claims are compare-and-set in SQLite, so the threads share
// the rows as safely as several `digest run` processes do; whichever thread is free takes the next row.
// This thread sends nothing while they run: it adds up progress and summaries, forwards an abort
// (SIGTERM) to the workers, and the relay-down streak is shared (relay-watch.ts). Should a worker die
// (a crash, its heap limit), the others take its rows, and if none is left this thread finishes the run.
//
// Memory is a budget: each worker's V8 heap is capped (resourceLimits, SEND_WORKER_HEAP_MB). The send loop
// allocates a digest's worth of short-lived strings per message and V8 lets an uncapped heap grow to
// several times its live data before collecting.
// Measured: BENCHMARKS.md § Why the code is shaped this way, send-workers.ts.
// The cap is sized from what the thread holds (workerHeapMb), and the card cache from the cap
// (workerCardCacheMb), so neither a population nor a setting leaves a thread collecting most of the time.
import { Worker } from 'node:worker_threads';
import { DEFAULT_RENDER_CACHE_MB, type DkimConfig } from '../config.ts';
import type { Logger } from '../log.ts';
import { RelayWatch } from './relay-watch.ts';
import { WriteTurn } from './write-turn.ts';
import { LockBudget } from './lock-budget.ts';
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
  /** The threads' turns at the ledger (write-turn.ts). */
  turnMemory: SharedArrayBuffer;
  /** The run's wait for another process's lock (lock-budget.ts). */
  lockMemory: SharedArrayBuffer;
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

/**
 * What a sending thread holds besides its card cache (MB): modules, templates and shapes, statements, the
 * loader's papers, the highlighters, the messages in flight. Measured: a thread's live heap after a full
 * collection, with few cards cached, 16-25 MB on broad and diverse ledgers (BENCHMARKS.md).
 */
export const THREAD_BASE_MB = 24;
/**
 * Heap cap over live data. A cap near the live data makes V8 collect over and over long before it runs
 * out: with RENDER_CACHE_MB + 64 (96 MB) a diverse run's threads, ~75 MB live, spent ~50% of their time in
 * GC. Twice the live data keeps them under 10% (BENCHMARKS.md), and V8 only grows the heap that far when
 * the live data needs it.
 */
export const GC_HEADROOM = 2;
/** The least card cache a thread gets when SEND_WORKER_HEAP_MB leaves little room (MB). */
const MIN_CARD_CACHE_MB = 4;

/**
 * A worker's old-generation heap cap (SEND_WORKER_HEAP_MB), by default sized from what it holds: its card
 * cache (RENDER_CACHE_MB, which counts what the cards take on the heap) and THREAD_BASE_MB, with
 * GC_HEADROOM. A worker over it dies (ERR_WORKER_OUT_OF_MEMORY) and the run goes on without it (see the
 * head of this file).
 */
export function workerHeapMb(config: Pick<WorkerConfig, 'RENDER_CACHE_MB' | 'SEND_WORKER_HEAP_MB'>): number {
  return config.SEND_WORKER_HEAP_MB ?? Math.ceil(GC_HEADROOM * ((config.RENDER_CACHE_MB ?? DEFAULT_RENDER_CACHE_MB) + THREAD_BASE_MB));
}

/**
 * A worker's card cache (MB): RENDER_CACHE_MB, or less when SEND_WORKER_HEAP_MB is set too small to hold
 * it with THREAD_BASE_MB and GC_HEADROOM: a cache the heap cannot hold makes the thread thrash in GC.
 */
export function workerCardCacheMb(config: Pick<WorkerConfig, 'RENDER_CACHE_MB' | 'SEND_WORKER_HEAP_MB'>): number {
  const wanted = config.RENDER_CACHE_MB ?? DEFAULT_RENDER_CACHE_MB;
  const room = Math.floor(workerHeapMb(config) / GC_HEADROOM - THREAD_BASE_MB);
  return Math.max(MIN_CARD_CACHE_MB, Math.min(wanted, room));
}

/** Splits `total` into `parts` near-equal whole shares, the larger ones first. */
export function shares(total: number, parts: number): number[] {
  return Array.from({ length: parts }, (_, i) => Math.floor(total / parts) + (i < total % parts ? 1 : 0));
}

/** The run-wide state the threads share through SharedArrayBuffers. */
interface SharedRunState {
  relay: RelayWatch;
  turn: WriteTurn;
  lockBudget: LockBudget;
}

export async function sendWithWorkers(deps: LoopDeps, run: ParallelRun): Promise<SendSummary> {
  const { logger } = deps;
  const shared: SharedRunState = {
    relay: new RelayWatch(run.config.RELAY_DOWN_AFTER),
    turn: new WriteTurn(),
    lockBudget: new LockBudget(run.config.DB_BUSY_TIMEOUT_MS ?? 0),
  };
  const { relay, lockBudget } = shared;
  const pool = shares(run.config.SMTP_POOL_SIZE, run.threads);
  const progress: SendProgress = { total: run.total, done: 0, sent: 0, failed: 0 };
  const onDelta = (d: ProgressDelta) => {
    progress.done += d.done;
    progress.sent += d.sent;
    progress.failed += d.failed;
    run.onProgress?.({ ...progress });
  };

  const workers = pool.map((poolSize, i) => startWorker(workerSetup(run, shared, i + 1, poolSize), onDelta, logger));
  const forwardAbort = () => {
    for (const w of workers) w.worker.postMessage({ type: 'abort' });
  };
  run.signal?.addEventListener('abort', forwardAbort, { once: true });
  logger.info({ threads: run.threads, pool, rows: run.total }, 'sending with worker threads');

  try {
    const results = await Promise.all(workers.map((w) => w.result(run.signal, run.config.SHUTDOWN_GRACE_MS + STRAGGLER_MS)));
    const done = results.filter((r): r is SendSummary => r !== undefined);
    const perThread = results.map((r) => r?.sent ?? 0);
    if (done.length < results.length && !run.signal?.aborted && !relay.paused && !lockBudget.spent) {
      // A worker died: what it had not claimed is still open. This thread sends it (its claims in flight
      // become unknown at the next run, as after any crash: never resent).
      logger.warn({ died: results.length - done.length }, 'a send worker died; this thread sends the rest of the run');
      const own = await runSendLoop(deps, {
        concurrency: run.config.SMTP_POOL_SIZE,
        relay,
        lockBudget,
        claimant: run.claimant,
        signal: run.signal,
        retryWindowMs: run.retryWindowMs,
        random: run.random,
        onProgress: onDelta,
      });
      done.push(own);
      perThread.push(own.sent);
    }
    const summary = combine(done);
    summary.threads = results.length;
    summary.sentPerThread = perThread;
    summary.aborted = run.signal?.aborted === true;
    return summary;
  } finally {
    run.signal?.removeEventListener('abort', forwardAbort);
    await Promise.all(workers.map((w) => w.worker.terminate()));
  }
}

function workerSetup(run: ParallelRun, shared: SharedRunState, index: number, poolSize: number): WorkerSetup {
  return {
    index,
    databasePath: run.databasePath,
    smtpUrl: run.smtpUrl,
    secret: run.secret,
    templates: run.templates,
    config: run.config,
    poolSize,
    ratePerSecond: 0,
    claimant: run.claimant,
    relayMemory: shared.relay.memory,
    turnMemory: shared.turn.memory,
    lockMemory: shared.lockBudget.memory,
    retryWindowMs: run.retryWindowMs,
  };
}

interface StartedWorker {
  worker: Worker;
  /** The worker's summary; undefined when it failed or had to be stopped (logged). */
  result(signal: AbortSignal | undefined, graceMs: number): Promise<SendSummary | undefined>;
}

function startWorker(setup: WorkerSetup, onDelta: (d: ProgressDelta) => void, logger: Logger): StartedWorker {
  const worker = new Worker(BOOTSTRAP, { workerData: setup, resourceLimits: { maxOldGenerationSizeMb: workerHeapMb(setup.config) } });
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
    if (p.gc) (total.gc ??= []).push(...p.gc);
  }
  total.threads = parts.length;
  return total;
}
