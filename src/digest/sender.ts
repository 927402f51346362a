// Sends what the ledger says is due: claim a row (compare-and-set), render, send, record the outcome.
// As many rows in flight as the SMTP pool has connections. 4xx / connection problems are retried
// with backoff (within this run while they come due inside a bounded window, else by a later run);
// 5xx fail the row and count toward suppressing the address; RELAY_DOWN_AFTER connection failures in a
// row pause the run; an aborted signal (SIGTERM) stops claiming and waits SHUTDOWN_GRACE_MS for the
// sends in flight. See ledger.ts for the state machine and what happens after a crash.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/open.ts';
import { errorMessage } from '../errors.ts';
import type { Links } from '../links.ts';
import type { Logger } from '../log.ts';
import { toMailError, type MailError } from '../mail/errors.ts';
import { domainOf } from '../mail/smtp-mailer.ts';
import type { Mailer } from '../mail/types.ts';
import { retryDelayMs } from './backoff.ts';
import { Ledger } from './ledger.ts';
import type { Renderer } from './render.ts';
import { loadDigest, type LoadedDigest } from './view.ts';

export { recoverStale, claimantId } from './ledger.ts';

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
  | 'SHUTDOWN_GRACE_MS'
> &
  Partial<Pick<Config, 'SMTP_RETRY_WINDOW_MS'>>;

export interface SendDeps {
  db: Db;
  mailer: Mailer;
  renderer: Pick<Renderer, 'digest'>;
  links: Links;
  clock: Clock;
  config: SenderConfig;
  logger: Logger;
}

export interface SendProgress {
  /** Rows open when the run started (planned, retry, sending). */
  total: number;
  /** Rows settled by this run (sent, failed, suppressed, unknown). */
  done: number;
  sent: number;
  failed: number;
}

export interface SendOptions {
  signal?: AbortSignal;
  /** Render what is due without claiming or sending anything. */
  dryRun?: boolean;
  onProgress?: (p: SendProgress) => void;
  /** How long (real time) the run keeps waiting for retries to come due. Default 10 minutes; 0 = never wait. */
  retryWindowMs?: number;
  /** Jitter source (tests). */
  random?: () => number;
}

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
  /** dryRun only: rows that would be sent now. */
  wouldSend?: number;
}

export const DEFAULT_RETRY_WINDOW_MS = 10 * 60 * 1000;
/** Longest single sleep while waiting for a retry, so progress and aborts stay responsive. */
const MAX_NAP_MS = 1000;

/** Rows due now, for a dry run (nothing claimed). */
const SQL_DUE_ROWS = `
  SELECT id FROM digests
  WHERE status IN ('planned', 'retry') AND (next_attempt_at IS NULL OR next_attempt_at <= ?)
  ORDER BY id`;

export async function sendPending(deps: SendDeps, opts: SendOptions = {}): Promise<SendSummary> {
  const { db, clock, config, logger } = deps;
  const summary: SendSummary = {
    sent: 0, failed: 0, retrying: 0, suppressed: 0, newlySuppressed: 0, unknown: 0, paused: false, aborted: false,
  };
  if (opts.dryRun) return dryRun(deps, summary);

  const ledger = new Ledger(db);
  const signal = opts.signal;
  const random = opts.random ?? Math.random;
  const retryWindowMs = opts.retryWindowMs ?? config.SMTP_RETRY_WINDOW_MS ?? DEFAULT_RETRY_WINDOW_MS;
  const startedMono = performance.now();
  const fromDomain = domainOf(config.MAIL_FROM);
  const progress: SendProgress = { total: ledger.openCount(), done: 0, sent: 0, failed: 0 };
  const inFlight = new Set<number>();
  const leftForRetry = new Set<number>();
  /** Rows of the current run of consecutive connection failures. */
  let streak: number[] = [];
  /** Set once sendPending has returned: late outcomes are only logged. */
  let abandoned = false;

  const stopping = () => summary.paused || signal?.aborted === true;
  const settle = (id: number, outcome: 'sent' | 'failed' | 'other') => {
    leftForRetry.delete(id);
    progress.done++;
    if (outcome === 'sent') progress.sent++;
    if (outcome === 'failed') progress.failed++;
    opts.onProgress?.({ ...progress });
  };

  /** Relay down: the row goes back to 'retry' without burning the attempt, due at once next run. */
  const giveBack = (id: number, err: MailError) => {
    ledger.giveBack(id, `relay down, not counted as an attempt: ${err.response}`, clock.now());
    if (!leftForRetry.has(id)) {
      // It had just used its last attempt and was counted failed: it is open again after all.
      summary.failed--;
      progress.failed--;
      progress.done--;
      leftForRetry.add(id);
    }
  };

  const pause = (err: MailError) => {
    summary.paused = true;
    summary.pauseReason = `relay down: ${streak.length} connection failures in a row (last: ${err.response})`;
    logger.error({ reason: summary.pauseReason }, 'sending paused');
    for (const id of streak) giveBack(id, err);
  };

  const onFailure = (loaded: LoadedDigest, err: MailError) => {
    const { row, subscriber } = loaded;
    const failure = { code: err.responseCode ?? null, response: err.response.slice(0, 1000) };
    logger.info({ digest: row.id, kind: err.kind, code: err.responseCode, response: err.response }, 'send failed');
    if (err.kind === 'permanent') {
      streak = [];
      if (ledger.markFailed(row.id, subscriber.id, failure, config.HARD_FAILURES_TO_SUPPRESS, clock.now())) {
        summary.newlySuppressed++;
        logger.warn({ subscriber: subscriber.id }, 'address suppressed after repeated permanent failures');
      }
      summary.failed++;
      settle(row.id, 'failed');
      return;
    }
    const attempt = row.attempts + 1;
    const next = new Date(clock.now().getTime() + retryDelayMs(attempt, {
      baseMs: config.SMTP_RETRY_BASE_MS,
      maxMs: config.SMTP_RETRY_MAX_MS,
    }, random));
    const status = ledger.markRetry(row.id, failure, config.SMTP_MAX_ATTEMPTS, next);
    if (status === 'retry') {
      leftForRetry.add(row.id);
    } else if (status === 'failed') {
      summary.failed++;
      settle(row.id, 'failed');
    }
    if (err.kind !== 'connection') {
      streak = [];
      return;
    }
    streak.push(row.id);
    if (summary.paused) giveBack(row.id, err);
    else if (streak.length >= config.RELAY_DOWN_AFTER) pause(err);
  };

  /** Nothing was sent, and sending cannot work (unreadable row, render error): failed, no hard failure. */
  const broken = (id: number, what: string, e: unknown) => {
    logger.error({ digest: id, err: e }, what);
    ledger.markBroken(id, `${what}: ${errorMessage(e)}`.slice(0, 1000));
    summary.failed++;
    settle(id, 'failed');
  };

  const handle = async (id: number) => {
    let loaded: LoadedDigest | undefined;
    try {
      loaded = loadDigest(db, id, deps.links);
    } catch (e) {
      return broken(id, 'cannot load the digest', e);
    }
    if (!loaded) return; // the row was deleted (subscriber erased) after the claim
    const { row, subscriber, view } = loaded;
    if (subscriber.status !== 'confirmed') {
      ledger.markSkipped(id, `not sent: the address is ${subscriber.status}`);
      summary.suppressed++;
      settle(id, 'other');
      return;
    }
    let mail;
    try {
      mail = deps.renderer.digest(view);
    } catch (e) {
      return broken(id, 'render failed', e);
    }
    let sent;
    try {
      sent = await deps.mailer.send({
        to: subscriber.email,
        subject: mail.subject,
        html: mail.html,
        text: mail.text,
        messageId: `digest-${row.id}.${row.edition}@${fromDomain}`,
        listUnsubscribe: { url: view.links.unsubscribe, mailto: config.UNSUBSCRIBE_MAILTO },
      });
    } catch (e) {
      if (!abandoned) onFailure(loaded, toMailError(e));
      return;
    }
    if (abandoned) return logger.warn({ digest: id }, 'a send finished after the shutdown grace; left as unknown');
    streak = [];
    // Outside the try above: should recording fail, the row stays 'sending' (later 'unknown'), never retried.
    ledger.markSent(row.id, subscriber.id, row.toPaper, sent.messageId, sent.response, clock.now());
    summary.sent++;
    settle(id, 'sent');
  };

  /** How long to wait for more work, or undefined when this run is done. */
  const napFor = (): number | undefined => {
    const next = ledger.nextRetryAt();
    if (!next) return undefined;
    const ms = Math.max(0, next.getTime() - clock.now().getTime());
    if (performance.now() - startedMono + ms > retryWindowMs) return undefined;
    return Math.min(Math.max(ms, 1), MAX_NAP_MS);
  };

  const worker = async () => {
    while (!stopping()) {
      let id: number | undefined;
      try {
        id = ledger.claimNext(clock.now());
      } catch (e) {
        // The database stayed locked past busy_timeout: leave what is left to a later run.
        logger.error({ err: e }, 'cannot claim the next digest');
        return;
      }
      if (id === undefined) {
        const nap = napFor();
        if (nap === undefined) return;
        await sleep(nap, undefined, { signal }).catch(() => undefined);
        continue;
      }
      inFlight.add(id);
      try {
        await handle(id);
      } catch (e) {
        // A bug or a database error while recording: leave the row 'sending' for recoverStale.
        logger.error({ digest: id, err: e }, 'unexpected error while sending a digest');
      } finally {
        inFlight.delete(id);
      }
    }
  };

  const workers = Promise.all(Array.from({ length: Math.max(1, config.SMTP_POOL_SIZE) }, worker));
  const finished = await Promise.race([workers.then(() => true), graceAfterAbort(signal, config.SHUTDOWN_GRACE_MS)]);
  if (!finished) {
    abandoned = true;
    for (const id of inFlight) {
      ledger.markUnknown(id, 'outcome unknown: still in flight when the shutdown grace ran out; not resent, papers carried to the next edition');
      summary.unknown++;
      settle(id, 'other');
    }
  }
  summary.aborted = signal?.aborted === true;
  summary.retrying = leftForRetry.size;
  logger.info({ ...summary }, 'sending finished');
  return summary;
}

/** Resolves false SHUTDOWN_GRACE_MS after the signal aborts; never resolves without an abort. */
function graceAfterAbort(signal: AbortSignal | undefined, graceMs: number): Promise<false> {
  return new Promise((resolve) => {
    if (!signal) return;
    const start = () => {
      setTimeout(() => resolve(false), graceMs).unref();
    };
    if (signal.aborted) start();
    else signal.addEventListener('abort', start, { once: true });
  });
}

function dryRun(deps: SendDeps, summary: SendSummary): SendSummary {
  let would = 0;
  const ids = deps.db.prepare(SQL_DUE_ROWS).all(deps.clock.now().toISOString()) as { id: number }[];
  for (const { id } of ids) {
    const loaded = loadDigest(deps.db, id, deps.links);
    if (!loaded || loaded.subscriber.status !== 'confirmed') continue;
    deps.renderer.digest(loaded.view);
    would++;
  }
  return { ...summary, wouldSend: would };
}
