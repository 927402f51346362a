// Sends what the ledger says is due. The work itself (claim a row by compare-and-set, render, build,
// send, record the outcome; retries, relay-down pause, SIGTERM grace) is the loop in send-loop.ts. This
// file decides where it runs: in this thread alone, or in this thread plus SEND_WORKERS-1 worker threads
// (send-workers.ts) when the run is big enough to pay for starting them and everything a worker needs
// can be rebuilt there. See ledger/port.ts for the state machine and what happens after a crash.
import { systemClock } from '../clock.ts';
import { readSetting } from '../db/settings-table.ts';
import { Links } from '../links.ts';
import { Tokens } from '../tokens.ts';
import { claimantId } from '../ledger/index.ts';
import { openSendLedger } from './send-ledger.ts';
import { RelayWatch } from './relay-watch.ts';
import { readTemplateSources } from '../render/render-templates.ts';
import { runSendLoop, type LoopDeps } from './send-loop.ts';
import type { ProgressDelta, SendProgress, SendSummary } from './send-types.ts';
import { sendWithWorkers, type WorkerConfig } from './send-workers.ts';
import { GC_SHARE_WARN, GcMeter, gcShare } from './gc-meter.ts';

export type { SenderConfig, SendProgress, SendSummary } from './send-types.ts';

export interface SendDeps extends LoopDeps {
  /**
   * Where worker threads send (App.smtpUrl): each worker opens its own pool to it. Without it the run
   * stays in this thread and uses `mailer` (tests that pass their own mailer, renderer or clock).
   */
  smtpUrl?: () => Promise<string>;
}

export interface SendOptions {
  signal?: AbortSignal;
  onProgress?: (p: SendProgress) => void;
  /** How long (real time) the run keeps waiting for retries to come due. Default 10 minutes; 0 = never wait. */
  retryWindowMs?: number;
  /** Jitter source (tests; this thread only). */
  random?: () => number;
  /** Fewest open rows for which worker threads are started (default PARALLEL_MIN_ROWS; tests lower it). */
  parallelMinRows?: number;
}

export const DEFAULT_RETRY_WINDOW_MS = 10 * 60 * 1000;
/**
 * Below this many open rows a run stays in one thread: starting a worker (tsx, SQLite, templates, an
 * SMTP pool) costs a few hundred milliseconds, which one thread spends on a few hundred digests anyway.
 */
export const PARALLEL_MIN_ROWS = 1_000;


export async function sendPending(deps: SendDeps, opts: SendOptions = {}): Promise<SendSummary> {
  const { config, logger } = deps;

  const total = openSendLedger(deps.db).openCount();
  const retryWindowMs = opts.retryWindowMs ?? config.SMTP_RETRY_WINDOW_MS ?? DEFAULT_RETRY_WINDOW_MS;
  const random = opts.random ?? Math.random;
  const claimant = claimantId();

  const parallel = await parallelSetup(deps, total, opts.parallelMinRows ?? PARALLEL_MIN_ROWS);
  let summary: SendSummary;
  if (typeof parallel === 'string') {
    logger.debug({ rows: total, why: parallel }, 'sending in one thread');
    const progress: SendProgress = { total, done: 0, sent: 0, failed: 0 };
    const gc = new GcMeter(0);
    summary = await runSendLoop(deps, {
      concurrency: config.SMTP_POOL_SIZE,
      relay: new RelayWatch(config.RELAY_DOWN_AFTER),
      claimant,
      signal: opts.signal,
      retryWindowMs,
      random,
      onProgress: (d: ProgressDelta) => {
        progress.done += d.done;
        progress.sent += d.sent;
        progress.failed += d.failed;
        opts.onProgress?.({ ...progress });
      },
    });
    summary.threads = 1;
    summary.sentPerThread = [summary.sent];
    summary.gc = [gc.stop()];
  } else {
    summary = await sendWithWorkers(deps, {
      ...parallel,
      claimant,
      retryWindowMs,
      total,
      signal: opts.signal,
      random,
      onProgress: opts.onProgress,
    });
  }
  logger.info({ ...summary }, 'sending finished');
  // A thread that spent this much of a long run collecting garbage had too little heap for what it holds:
  // the operator sees it (the run is slower than it should be, and SEND_WORKER_HEAP_MB is the lever).
  for (const t of summary.gc ?? []) {
    if (t.wallMs >= 10_000 && gcShare(t) > GC_SHARE_WARN) {
      logger.warn(
        { thread: t.thread, gcShare: Number(gcShare(t).toFixed(2)), heapLimitMb: t.heapLimitMb, peakUsedMb: t.peakUsedMb },
        'a sending thread spent much of its time collecting garbage: its heap is too small for this run (SEND_WORKER_HEAP_MB)',
      );
    }
  }
  return summary;
}

type Parallel = Pick<Parameters<typeof sendWithWorkers>[1], 'threads' | 'databasePath' | 'smtpUrl' | 'secret' | 'templates' | 'config'>;

/** What the worker threads need, or why this run stays in one thread. */
async function parallelSetup(deps: SendDeps, rows: number, minRows: number): Promise<Parallel | string> {
  const { config, db } = deps;
  const threads = Math.min(config.SEND_WORKERS ?? 1, config.SMTP_POOL_SIZE);
  if (threads < 2) return 'SEND_WORKERS=1 (or an SMTP pool of one connection)';
  if (rows < minRows) return `a small run (${rows} rows, workers start from ${minRows})`;
  if (!deps.smtpUrl) return 'no SMTP URL for worker threads';
  if (db.memory) return 'an in-memory database cannot be shared with worker threads';
  if (deps.clock !== systemClock) return 'a clock other than the system clock';
  if ((config.SMTP_RATE_PER_SECOND ?? 0) > 0) return 'SMTP_RATE_PER_SECOND is set: one pool keeps the rate';
  if (config.PUBLIC_URL === undefined || config.SMTP_TIMEOUT_MS === undefined || config.LOG_LEVEL === undefined) {
    return 'the configuration lacks what worker threads need';
  }
  const secret = config.SECRET_KEY ?? readSetting(db, 'secret_key');
  if (!secret) return 'no link secret';
  // The workers sign links with this secret and PUBLIC_URL: they must come out as the caller's do.
  const probe = { id: 1, tokenSalt: 'probe' };
  if (new Links(config.PUBLIC_URL, new Tokens(secret), systemClock).unsubscribe(probe) !== deps.links.unsubscribe(probe)) {
    return 'the links given are not the ones PUBLIC_URL and the secret make';
  }
  const workerConfig: WorkerConfig = {
    ...config,
    PUBLIC_URL: config.PUBLIC_URL,
    SMTP_TIMEOUT_MS: config.SMTP_TIMEOUT_MS,
    LOG_LEVEL: config.LOG_LEVEL,
    dkim: config.dkim,
  };
  return {
    threads,
    databasePath: db.name,
    smtpUrl: await deps.smtpUrl(),
    secret,
    templates: await readTemplateSources(),
    config: workerConfig,
  };
}
