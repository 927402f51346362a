// One thread's send run, as the README tells it: claim a row (compare-and-set), load it, render it,
// deliver it, record the outcome (send-outcome.ts, which also decides retries, the relay-down pause and
// the storage-fault stop); `concurrency` lanes at once (this thread's share of the SMTP pool). The main
// thread runs it alone (SEND_WORKERS=1, small runs) or beside worker threads that run it too
// (send-workers.ts): claims are compare-and-set in SQLite, so several lanes never take the same row. An
// aborted signal stops claiming and waits SHUTDOWN_GRACE_MS for the sends in flight. See ledger/port.ts for
// the state machine and what happens after a crash; why "sent" marks are not batched (a lane records its
// delivery in the same transaction as its next claim instead): BENCHMARKS.md, "The ledger".
import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/open.ts';
import type { Links } from '../links.ts';
import type { Logger } from '../log.ts';
import { toMailError } from '../mail/errors.ts';
import type { Mailer, SentMail } from '../mail/types.ts';
import type { RelayWatch } from './relay-watch.ts';
import type { WriteTurn } from './write-turn.ts';
import type { SendLedger, SentRecord } from '../ledger/index.ts';
import { openSendLedger } from './send-ledger.ts';
import { ledgerWriters, LockBudget, type LedgerWriters } from './lock-budget.ts';
import type { RenderedEmail, Renderer } from '../render/render.ts';
import type { ProgressDelta, SenderConfig, SendSummary } from './send-types.ts';
import { DigestLoader, type LoadedDigest } from '../render/view.ts';
import { DigestMails } from './digest-mail.ts';
import { SendOutcomes } from './send-outcome.ts';

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
  /** Who the claims are recorded for (one per process: see ledger/claimant.ts claimantId). */
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
  return new SendRun(deps, opts).run();
}

/** In place of a claimed row when the claim could not be written: the lane stops. */
const STOPPED = -1;

/** One thread's send run: its lanes, what is in flight, and the outcomes (send-outcome.ts). */
class SendRun {
  private readonly ledger: SendLedger;
  private readonly loader: DigestLoader;
  private readonly outcomes: SendOutcomes;
  private readonly writers: LedgerWriters;
  private readonly inFlight = new Set<number>();
  /** Set once the run has returned: late outcomes are only logged. */
  private abandoned = false;
  private readonly startedMono = performance.now();
  private readonly mails: DigestMails;

  constructor(
    private readonly deps: LoopDeps,
    private readonly opts: LoopOptions,
  ) {
    const { db, config } = deps;
    this.ledger = openSendLedger(db, opts.claimant);
    this.loader = new DigestLoader(db, deps.links);
    this.mails = new DigestMails(config);
    const budget = opts.lockBudget ?? new LockBudget(config.DB_BUSY_TIMEOUT_MS ?? 0);
    // write: a synchronous path's (failures), blocking at most SYNC_WRITE_WAIT_MS; ledgerWrite: the
    // once-per-digest writes (claim, record + claim), waited for asynchronously in this thread's turn.
    this.writers = ledgerWriters(db, budget, opts.writeTurn, SYNC_WRITE_WAIT_MS);
    const { clock, logger } = deps;
    const { relay, random, onProgress } = opts;
    this.outcomes = new SendOutcomes({ db, clock, config, logger, ledger: this.ledger, relay, writers: this.writers, budget, random, onProgress });
  }

  /** Runs `concurrency` lanes until the work is done, the run stops, or the shutdown grace runs out. */
  async run(): Promise<SendSummary> {
    const { signal } = this.opts;
    const lanes = Promise.all(Array.from({ length: Math.max(1, this.opts.concurrency) }, () => this.lane()));
    let finished: boolean;
    try {
      finished = await Promise.race([lanes.then(() => true), graceAfterAbort(signal, this.deps.config.SHUTDOWN_GRACE_MS)]);
    } finally {
      this.writers.restore();
    }
    if (!finished) {
      this.abandoned = true;
      for (const id of this.inFlight) this.outcomes.abandoned(id);
    }
    return this.outcomes.finish(signal?.aborted === true);
  }

  private stopping(): boolean {
    return this.opts.relay.paused || this.outcomes.storageStopped || this.opts.signal?.aborted === true;
  }

  /**
   * A lane claims a row, delivers it, and records the delivery in the same transaction as its next claim
   * (ledger.recordSentThenClaim): nothing runs in between, so the row is recorded as early as it would
   * be on its own. Should recording fail, the row stays 'sending' (later 'unknown'), never retried.
   */
  private async lane(): Promise<void> {
    let delivered: SentRecord | undefined;
    while (!this.stopping()) {
      let id: number | undefined;
      try {
        // Waits for a lock by trying again (the event loop runs in between), never in one long block.
        id = await this.claim(delivered);
        if (delivered) this.outcomes.sent(delivered);
      } catch (e) {
        this.outcomes.claimFailed(e, delivered);
        id = STOPPED;
      }
      delivered = undefined;
      if (id === STOPPED) break;
      if (id === undefined) {
        if (await this.napped()) continue;
        break;
      }
      delivered = await this.deliver(id);
    }
    if (delivered) await this.recordLast(delivered);
    this.outcomes.laneDone();
  }

  /** Claim: the next row due, recording the lane's last delivery in the same transaction. */
  private async claim(delivered: SentRecord | undefined): Promise<number | undefined> {
    const { ledgerWrite } = this.writers;
    const { clock } = this.deps;
    if (!delivered) return ledgerWrite(() => this.ledger.claimNext(clock.now()));
    return (await ledgerWrite(() => this.ledger.recordSentThenClaim(delivered, clock.now()))).next;
  }

  /** Stopping with a delivery not yet recorded: recorded alone. */
  private async recordLast(d: SentRecord): Promise<void> {
    try {
      await this.writers.ledgerWrite(() => this.ledger.markSent(d.id, d.subscriberId, d.toPaper, d.messageId, d.response, d.at));
      this.outcomes.sent(d);
    } catch (e) {
      this.deps.logger.error({ err: e, digest: d.id }, 'cannot record a delivered digest: it stays in flight (later unknown)');
      this.outcomes.notRecorded(e, d.id);
    }
  }

  /** Deliver: one claimed row to the relay; the delivery for the lane to record, or undefined. */
  private async deliver(id: number): Promise<SentRecord | undefined> {
    this.inFlight.add(id);
    try {
      const flight = this.start(id);
      if (!flight) return undefined;
      let sent: SentMail;
      try {
        sent = await flight.sending;
      } catch (e) {
        if (!this.abandoned) this.outcomes.failed(flight, toMailError(e));
        return undefined;
      } finally {
        flight.release?.();
      }
      if (this.abandoned) {
        this.deps.logger.warn({ digest: id }, 'a send finished after the shutdown grace; left as unknown');
        return undefined;
      }
      this.opts.relay.delivered();
      const { row, subscriber } = flight;
      return { id: row.id, subscriberId: subscriber.id, toPaper: row.toPaper, messageId: sent.messageId, response: sent.response, at: this.deps.clock.now() };
    } catch (e) {
      // A database error while recording an outcome, or a bug: the row stays 'sending' for recoverStale.
      this.outcomes.unexpected(e, id);
      return undefined;
    } finally {
      this.inFlight.delete(id);
    }
  }

  /**
   * Load, render, and hand one claimed row to the mailer; undefined when there is nothing to send (the
   * row is settled already). Synchronous on purpose: the view and the rendered bodies are locals of this
   * call only, so nothing but the row's ids and the recipient lives while the relay works. Held across the
   * send's await (in the async caller's frame), a broad digest's view and paper list outlived the young
   * generation (see BENCHMARKS.md: ~20% of what a broad run allocated survived scavenges).
   */
  private start(id: number): InFlight | undefined {
    let loaded: LoadedDigest | undefined;
    try {
      loaded = this.loader.load(id, { papers: this.deps.renderer.emailPapers });
    } catch (e) {
      this.outcomes.broken(id, 'cannot load the digest', e);
      return undefined;
    }
    if (!loaded) return undefined; // the row was deleted (subscriber erased) after the claim
    const { row, subscriber } = loaded;
    if (subscriber.status !== 'confirmed') {
      this.outcomes.skipped(id, subscriber.status);
      return undefined;
    }
    let mail: RenderedEmail;
    try {
      mail = this.render(loaded.view);
    } catch (e) {
      this.outcomes.broken(id, 'render failed', e);
      return undefined;
    }
    // Its scratch buffers go back to the renderer once the mailer is done with the message (sent or not).
    const release = mail.release?.bind(mail);
    let sending: Promise<SentMail>;
    try {
      sending = this.hand(loaded, mail);
    } catch (e) {
      sending = Promise.reject(e); // handled as a failed send, as one the mailer rejects
    }
    return { row, subscriber, sending, release };
  }

  private render(view: LoadedDigest['view']): RenderedEmail {
    const started = performance.now();
    try {
      return this.deps.renderer.digest(view);
    } finally {
      this.outcomes.summary.renderMs! += performance.now() - started;
    }
  }

  private hand(loaded: LoadedDigest, mail: RenderedEmail): Promise<SentMail> {
    return this.deps.mailer.send(this.mails.of(loaded, mail));
  }

  /** Waits for a retry to come due; false when this run is done (none due within the retry window). */
  private async napped(): Promise<boolean> {
    const next = this.ledger.nextRetryAt();
    if (!next) return false;
    const ms = Math.max(0, next.getTime() - this.deps.clock.now().getTime());
    if (performance.now() - this.startedMono + ms > this.opts.retryWindowMs) return false;
    await sleep(Math.min(Math.max(ms, 1), MAX_NAP_MS), undefined, { signal: this.opts.signal }).catch(() => undefined);
    return true;
  }
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
