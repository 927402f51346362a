// One thread's share of a send run: claim a row (compare-and-set), load it, render, send, record the
// outcome; `concurrency` such loops at once (this thread's share of the SMTP pool). The main thread runs
// it alone (SEND_WORKERS=1, small runs) or beside worker threads that run it too (send-workers.ts):
// claims are compare-and-set in SQLite, so several loops never take the same row.
//
// 4xx / connection problems are retried with backoff (within this run while they come due inside the
// retry window, else by a later run); 5xx fail the row and count toward suppressing the address;
// RELAY_DOWN_AFTER connection failures in a row (across threads, see relay-watch.ts) pause the run; an
// aborted signal stops claiming and waits SHUTDOWN_GRACE_MS for the sends in flight. See ledger.ts for
// the state machine, what happens after a crash, and why "sent" marks are not batched (a lane records
// its delivery in the same transaction as its next claim instead).
import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock } from '../clock.ts';
import { storageFault } from '../db/faults.ts';
import type { Db } from '../db/open.ts';
import { errorMessage } from '../errors.ts';
import type { Links } from '../links.ts';
import type { Logger } from '../log.ts';
import { toMailError, type MailError } from '../mail/errors.ts';
import { domainOf } from '../mail/smtp-mailer.ts';
import type { Mailer, SentMail } from '../mail/types.ts';
import { Ledger, type SentRecord } from './ledger.ts';
import { afterFailure } from './retry-policy.ts';
import type { RelayWatch } from './relay-watch.ts';
import type { WriteTurn } from './write-turn.ts';
import { ledgerWriters, LockBudget } from './lock-budget.ts';
import type { RenderedEmail, Renderer } from '../render/render.ts';
import { emptySummary, type ProgressDelta, type SenderConfig, type SendSummary } from './send-types.ts';
import { DigestLoader, type LoadedDigest } from '../render/view.ts';
import { verpFrom } from '../bounces/verp.ts';
import { classifyFailure, enhancedStatus } from '../bounces/classify.ts';
import { recordBounce } from '../bounces/service.ts';
import { DigestMail } from './digest-mail.ts';

/** A digest handed to the mailer: what the send loop needs of it until the relay has answered. */
interface InFlight {
  row: LoadedDigest['row'];
  subscriber: LoadedDigest['subscriber'];
  sending: Promise<SentMail>;
  /** Gives the rendered email's scratch buffers back to the renderer. */
  release: (() => void) | undefined;
}

export interface LoopDeps {
  db: Db;
  mailer: Mailer;
  renderer: Pick<Renderer, 'digest' | 'emailPapers'>;
  links: Links;
  clock: Clock;
  config: SenderConfig;
  logger: Logger;
}

export interface LoopOptions {
  /** Rows in flight at once in this thread (its share of SMTP_POOL_SIZE). */
  concurrency: number;
  relay: RelayWatch;
  /** Turns at the ledger shared with the run's other sending threads (write-turn.ts); none when alone. */
  writeTurn?: WriteTurn | undefined;
  /** The run's wait for another process's lock, shared with its other threads (lock-budget.ts); default: this loop's own. */
  lockBudget?: LockBudget | undefined;
  /** Who the claims are recorded for (one per process: see ledger.ts claimantId). */
  claimant: string;
  signal?: AbortSignal | undefined;
  /** How long (real time) to keep waiting for retries to come due; 0 = never wait. */
  retryWindowMs: number;
  random: () => number;
  onProgress?: ((delta: ProgressDelta) => void) | undefined;
}

/**
 * Longest a failure-path write (retry, failed, given back) blocks this thread waiting for the lock. The
 * claim and the "sent" record, once per digest, wait asynchronously instead (up to DB_BUSY_TIMEOUT_MS).
 */
const SYNC_WRITE_WAIT_MS = 250;

/** Longest single sleep while waiting for a retry, so progress and aborts stay responsive. */
const MAX_NAP_MS = 1000;

export async function runSendLoop(deps: LoopDeps, opts: LoopOptions): Promise<SendSummary> {
  const { db, clock, config, logger } = deps;
  const relay = opts.relay;
  const summary = emptySummary();
  summary.renderMs = 0;
  const ledger = new Ledger(db, opts.claimant);
  const loader = new DigestLoader(db, deps.links);
  const signal = opts.signal;
  const startedMono = performance.now();
  const fromDomain = domainOf(config.MAIL_FROM);
  // Each digest's envelope sender carries its signed tag (BOUNCE_ADDRESS set): bounces map back to the row.
  const verp = verpFrom(config);
  const inFlight = new Set<number>();
  const leftForRetry = new Set<number>();
  /** Set once the run has returned: late outcomes are only logged. */
  let abandoned = false;
  let gaveBackStreak = false;
  /** Set when the database could not be written (full, read-only, locked too long): every lane stops. */
  let storageStopped = false;
  const budget = opts.lockBudget ?? new LockBudget(config.DB_BUSY_TIMEOUT_MS ?? 0);
  // write: a synchronous path's (failures), blocking at most SYNC_WRITE_WAIT_MS; ledgerWrite: the
  // once-per-digest writes (claim, record + claim), waited for asynchronously in this thread's turn.
  const writers = ledgerWriters(db, budget, opts.writeTurn, SYNC_WRITE_WAIT_MS);
  const { write, ledgerWrite } = writers;
  const stopping = () => relay.paused || storageStopped || signal?.aborted === true;

  /**
   * The ledger could not be written: stop claiming (what is left waits for the next run, which must be
   * told: the run reports the fault and `digest run` exits non-zero). Not a storage fault: a bug, rethrown.
   */
  const stopOnStorageFault = (e: unknown, digest: number | undefined, what: string): void => {
    const fault = storageFault(e);
    if (!fault) throw e;
    // Stopped on a lock (even a short synchronous wait's): the run's other writes must not wait for it again.
    if (fault.fault === 'DB_LOCKED') budget.spend();
    if (!storageStopped) {
      storageStopped = true;
      summary.storageFault = fault.message;
      summary.storageFaultCode = fault.fault;
      logger.error({ code: fault.fault, digest }, `sending stopped: ${fault.message} (${what}); the rest waits for the next run`);
    }
  };
  const progress = (done: number, sent: number, failed: number) => opts.onProgress?.({ done, sent, failed });
  const settle = (id: number, outcome: 'sent' | 'failed' | 'other') => {
    leftForRetry.delete(id);
    progress(1, outcome === 'sent' ? 1 : 0, outcome === 'failed' ? 1 : 0);
  };

  /** Relay down: the row goes back to 'retry' without burning the attempt, due at once next run. */
  const giveBack = (id: number, response: string) => {
    write(() => ledger.giveBack(id, `relay down, not counted as an attempt: ${response}`, clock.now()));
    if (!leftForRetry.has(id)) {
      // It had just used its last attempt and was counted failed: it is open again after all.
      summary.failed--;
      progress(-1, 0, -1);
      leftForRetry.add(id);
    }
  };

  /** Once per run and thread: this thread's rows of the streak that paused the run go back. */
  const giveBackMyStreak = (response: string) => {
    if (gaveBackStreak) return;
    gaveBackStreak = true;
    for (const id of relay.takeMyStreak()) giveBack(id, response);
  };

  /** A connection-level failure counts toward "relay down"; at RELAY_DOWN_AFTER in a row the run pauses. */
  const relayTrouble = (id: number, response: string, retried: boolean) => {
    const tripped = retried ? relay.connectionFailed(id) : relay.noAnswer();
    if (relay.paused) {
      // Paused already: this row goes back (with the rest of this thread's streak the first time).
      if (gaveBackStreak) {
        if (retried) giveBack(id, response);
      } else giveBackMyStreak(response);
    } else if (tripped && relay.pause()) {
      summary.paused = true;
      summary.pauseReason = `relay down: ${relay.streak} connection failures in a row (last: ${response})`;
      logger.error({ reason: summary.pauseReason }, 'sending paused');
      giveBackMyStreak(response);
    }
  };

  const onFailure = ({ row, subscriber }: InFlight, err: MailError) => {
    const failure = { code: err.responseCode ?? null, response: err.response.slice(0, 1000) };
    const decision = afterFailure(err.kind, row.attempts, config, clock.now(), opts.random);
    if (decision.action === 'unknown') {
      // The relay may have queued it: never resent; the watermark stays, so its papers ride in the next
      // digest (exactly what a crash mid-send leaves, see ledger.ts).
      write(() => ledger.markUnknown(row.id, `outcome unknown: ${err.response}; not resent, papers carried to the next edition`.slice(0, 1000)));
      summary.unknown++;
      settle(row.id, 'other');
      logger.warn(
        { digest: row.id, subscriber: subscriber.id, response: err.response },
        'relay answer lost after the whole message was sent: digest marked unknown, not resent (its papers ride in the next digest)',
      );
      relayTrouble(row.id, err.response, false);
      return;
    }
    logger.info({ digest: row.id, kind: err.kind, code: err.responseCode, response: err.response }, 'send failed');
    if (decision.action === 'fail') {
      relay.answered();
      const status = enhancedStatus(err.response);
      const kind = classifyFailure(status, err.response, true);
      if (kind !== 'hard') {
        // A policy block or a full mailbox: recorded as a bounce of that kind (an alarm, or the soft window), not as a hard failure.
        const report = { digestId: row.id, kind, channel: 'send' as const, status, detail: err.response };
        const refused = db.transaction(() => (ledger.markRefused(row.id, failure) ? recordBounce({ db, clock, logger, config }, report) : 'none'));
        if (write(() => refused()) === 'suppressed') summary.newlySuppressed++;
      } else if (write(() => ledger.markFailed(row.id, subscriber.id, failure, config.HARD_FAILURES_TO_SUPPRESS, clock.now()))) {
        summary.newlySuppressed++;
        logger.warn({ subscriber: subscriber.id }, 'address suppressed after repeated permanent failures');
      }
      summary.failed++;
      settle(row.id, 'failed');
      return;
    }
    const status = write(() => ledger.markRetry(row.id, failure, decision.action === 'retry' ? decision.at : null));
    if (status === 'retry') {
      leftForRetry.add(row.id);
    } else if (status === 'failed') {
      summary.failed++;
      settle(row.id, 'failed');
    }
    if (err.kind !== 'connection') {
      relay.answered();
      return;
    }
    relayTrouble(row.id, err.response, true);
  };

  /** Nothing was sent, and sending cannot work (unreadable row, render error): failed, no hard failure. */
  const broken = (id: number, what: string, e: unknown) => {
    logger.error({ digest: id, err: e }, what);
    write(() => ledger.markBroken(id, `${what}: ${errorMessage(e)}`.slice(0, 1000)));
    summary.failed++;
    settle(id, 'failed');
  };

  const render = (view: LoadedDigest['view']): RenderedEmail => {
    const started = performance.now();
    try {
      return deps.renderer.digest(view);
    } finally {
      summary.renderMs! += performance.now() - started;
    }
  };

  const startSend = ({ row, subscriber, view }: LoadedDigest, mail: RenderedEmail): Promise<SentMail> =>
    deps.mailer.send(
      new DigestMail(
        subscriber.email,
        mail,
        `digest-${row.id}.${row.edition}@${fromDomain}`,
        { url: view.links.unsubscribe, mailto: config.UNSUBSCRIBE_MAILTO },
        verp?.envelopeFor(row.id, row.verpNonce),
      ),
    );

  /**
   * Loads, renders and hands one claimed row to the mailer; undefined when there is nothing to send (the
   * row is settled already). Synchronous on purpose: the view and the rendered bodies are locals of this
   * call only, so nothing but the row's ids and the recipient lives while the relay works. Held across the
   * send's await (in the async caller's frame), a broad digest's view and paper list outlived the young
   * generation (see BENCHMARKS.md: ~20% of what a broad run allocated survived scavenges).
   */
  const startDigest = (id: number): InFlight | undefined => {
    let loaded: LoadedDigest | undefined;
    try {
      loaded = loader.load(id, { papers: deps.renderer.emailPapers });
    } catch (e) {
      broken(id, 'cannot load the digest', e);
      return undefined;
    }
    if (!loaded) return undefined; // the row was deleted (subscriber erased) after the claim
    const { row, subscriber, view } = loaded;
    if (subscriber.status !== 'confirmed') {
      write(() => ledger.markSkipped(id, `not sent: the address is ${subscriber.status}`));
      summary.suppressed++;
      settle(id, 'other');
      return undefined;
    }
    let mail: RenderedEmail;
    try {
      mail = render(view);
    } catch (e) {
      broken(id, 'render failed', e);
      return undefined;
    }
    // Its scratch buffers go back to the renderer once the mailer is done with the message (sent or not).
    const release = mail.release?.bind(mail);
    let sending: Promise<SentMail>;
    try {
      sending = startSend(loaded, mail);
    } catch (e) {
      sending = Promise.reject(e); // handled as a failed send, as one the mailer rejects
    }
    return { row, subscriber, sending, release };
  };

  /** Sends one claimed row. Returns the delivery for the lane to record (see lane), or undefined. */
  const handle = async (id: number): Promise<SentRecord | undefined> => {
    const flight = startDigest(id);
    if (!flight) return undefined;
    let sent;
    try {
      sent = await flight.sending;
    } catch (e) {
      if (!abandoned) onFailure(flight, toMailError(e));
      return undefined;
    } finally {
      flight.release?.();
    }
    if (abandoned) {
      logger.warn({ digest: id }, 'a send finished after the shutdown grace; left as unknown');
      return undefined;
    }
    relay.delivered();
    const { row, subscriber } = flight;
    return { id: row.id, subscriberId: subscriber.id, toPaper: row.toPaper, messageId: sent.messageId, response: sent.response, at: clock.now() };
  };

  /** A delivery was recorded (counted even if the row was no longer ours to mark: the email went out). */
  const recorded = (r: SentRecord) => {
    summary.sent++;
    settle(r.id, 'sent');
  };

  /** How long to wait for more work, or undefined when this run is done. */
  const napFor = (): number | undefined => {
    const next = ledger.nextRetryAt();
    if (!next) return undefined;
    const ms = Math.max(0, next.getTime() - clock.now().getTime());
    if (performance.now() - startedMono + ms > opts.retryWindowMs) return undefined;
    return Math.min(Math.max(ms, 1), MAX_NAP_MS);
  };

  // A lane claims a row, sends it, and records the delivery in the same transaction as its next claim
  // (ledger.recordSentThenClaim): nothing runs in between, so the row is recorded as early as it would
  // be on its own. Should recording fail, the row stays 'sending' (later 'unknown'), never retried.
  const lane = async () => {
    let delivered: SentRecord | undefined;
    while (true) {
      if (stopping()) {
        if (delivered) {
          const d = delivered;
          try {
            await ledgerWrite(() => ledger.markSent(d.id, d.subscriberId, d.toPaper, d.messageId, d.response, d.at));
            recorded(d);
          } catch (e) {
            logger.error({ err: e, digest: d.id }, 'cannot record a delivered digest: it stays in flight (later unknown)');
            stopOnStorageFault(e, d.id, 'recording a delivered digest; it becomes unknown at the next run, not resent');
          }
        }
        break;
      }
      let id: number | undefined;
      try {
        // Waits for a lock by trying again (the event loop runs in between), never in one long block.
        if (delivered) {
          const d = delivered;
          id = (await ledgerWrite(() => ledger.recordSentThenClaim(d, clock.now()))).next;
          recorded(d);
        } else {
          id = await ledgerWrite(() => ledger.claimNext(clock.now()));
        }
      } catch (e) {
        // A delivered row that cannot be recorded stays 'sending': the next run marks it unknown (never resent).
        stopOnStorageFault(e, delivered?.id, delivered ? 'recording a delivered digest; it becomes unknown at the next run, not resent' : 'claiming the next digest');
        break;
      } finally {
        delivered = undefined;
      }
      if (id === undefined) {
        const nap = napFor();
        if (nap === undefined) break;
        await sleep(nap, undefined, { signal }).catch(() => undefined);
        continue;
      }
      inFlight.add(id);
      try {
        delivered = await handle(id);
      } catch (e) {
        // A database error while recording an outcome, or a bug: leave the row 'sending' for recoverStale.
        if (storageFault(e)) stopOnStorageFault(e, id, 'recording an outcome');
        else logger.error({ digest: id, err: e }, 'unexpected error while sending a digest');
      } finally {
        inFlight.delete(id);
      }
    }
    // Paused by another thread: give back this thread's part of the streak too.
    if (relay.paused) giveBackMyStreak('the relay looked down to another sending thread');
  };

  const lanes = Promise.all(Array.from({ length: Math.max(1, opts.concurrency) }, lane));
  let finished: boolean;
  try {
    finished = await Promise.race([lanes.then(() => true), graceAfterAbort(signal, config.SHUTDOWN_GRACE_MS)]);
  } finally {
    writers.restore();
  }
  if (!finished) {
    abandoned = true;
    for (const id of inFlight) {
      ledger.markUnknown(id, 'outcome unknown: still in flight when the shutdown grace ran out; not resent, papers carried to the next edition');
      summary.unknown++;
      settle(id, 'other');
    }
  }
  summary.paused = summary.paused || relay.paused;
  summary.aborted = signal?.aborted === true;
  summary.retrying = leftForRetry.size;
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
