// Shapes shared by the sender (sender.ts), its per-thread loop (send-loop.ts) and its worker threads.
import type { Config } from '../config.ts';
import type { ThreadGc } from './gc-meter.ts';

/** What a send run reads from the configuration (worker threads get a copy of it). */
export type SenderConfig = Pick<
  Config,
  | 'MAIL_FROM'
  | 'UNSUBSCRIBE_MAILTO'
  | 'SMTP_POOL_SIZE'
  | 'SMTP_MAX_ATTEMPTS'
  | 'SMTP_RETRY_BASE_MS'
  | 'SMTP_RETRY_MAX_MS'
  | 'RELAY_DOWN_AFTER'
  | 'HARD_FAILURES_TO_SUPPRESS'
  | 'SOFT_BOUNCES_TO_SUPPRESS'
  | 'SOFT_BOUNCE_WINDOW_DAYS'
  | 'SHUTDOWN_GRACE_MS'
> &
  Partial<
    Pick<
      Config,
      | 'SMTP_RETRY_WINDOW_MS'
      | 'DB_BUSY_TIMEOUT_MS'
      // VERP envelope sender of each digest (src/bounces/verp.ts), when both are set:
      | 'BOUNCE_ADDRESS'
      // Only needed for worker threads (a run without them stays in one thread):
      | 'SEND_WORKERS'
      | 'PUBLIC_URL'
      | 'SECRET_KEY'
      | 'SMTP_RATE_PER_SECOND'
      | 'SMTP_TIMEOUT_MS'
      | 'LOG_LEVEL'
      | 'LOG_FILE'
      | 'SMTP_ALLOW_PLAIN_AUTH'
      | 'dkim'
      // The renderer's settings, so worker threads render as the main thread does:
      | 'DIGEST_FULL_PAPERS'
      | 'RENDER_CACHE_MB'
      | 'SEND_WORKER_HEAP_MB'
    >
  >;

export interface SendProgress {
  /** Rows open when the run started (planned, retry, sending). */
  total: number;
  /** Rows settled by this run (sent, failed, suppressed, unknown). */
  done: number;
  sent: number;
  failed: number;
}

/** A change to the progress counts (may be negative: a row counted failed can be given back). */
export type ProgressDelta = Omit<SendProgress, 'total'>;

export interface SendSummary {
  sent: number;
  /** Rows failed by this run: 5xx, or temporary failures past SMTP_MAX_ATTEMPTS. */
  failed: number;
  /** Rows this run left in 'retry' for a later run. */
  retrying: number;
  /** Rows not sent because the address was unsubscribed or suppressed after planning. */
  suppressed: number;
  /** Addresses suppressed by this run (HARD_FAILURES_TO_SUPPRESS reached). */
  newlySuppressed: number;
  /** Rows whose send was still in flight when the shutdown grace ran out. */
  unknown: number;
  /** The relay looked down: the run stopped claiming; a later run completes the edition. */
  paused: boolean;
  pauseReason?: string;
  /** The signal was aborted (SIGTERM): the run stopped claiming. */
  aborted: boolean;
  /** Threads that took part (1 = this thread only; more = worker threads too). */
  threads?: number;
  /** Digests sent by each thread, this one first. */
  sentPerThread?: number[];
  /**
   * The database could not be written (full disk, read-only, locked longer than DB_BUSY_TIMEOUT_MS):
   * the run stopped claiming; one line naming the cause. What is left waits for the next run.
   */
  storageFault?: string;
  storageFaultCode?: string;
  /** Time spent rendering digests, summed over threads (ms). */
  renderMs?: number;
  /** Each sending thread's time in V8's garbage collector (gc-meter.ts). */
  gc?: ThreadGc[];
}

export function emptySummary(): SendSummary {
  return { sent: 0, failed: 0, retrying: 0, suppressed: 0, newlySuppressed: 0, unknown: 0, paused: false, aborted: false };
}
