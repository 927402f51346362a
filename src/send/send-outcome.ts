// Recording what became of each claimed row, in one place (the send run in send-loop.ts decides nothing
// about outcomes): sent, failed, refused, retried, unknown, skipped, broken, given back when the relay is
// down; and the run's summary and progress that follow from them. 4xx / connection problems are retried
// with backoff (within this run while they come due inside the retry window, else by a later run); 5xx
// fail the row and count toward suppressing the address; RELAY_DOWN_AFTER connection failures in a row
// (across threads, see relay-watch.ts) pause the run; a ledger that cannot be written stops it.
import type { Clock } from '../clock.ts';
import { storageFault } from '../db/faults.ts';
import type { Db } from '../db/open.ts';
import { errorMessage } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { MailError } from '../mail/errors.ts';
import { classifyFailure, enhancedStatus } from '../bounces/classify.ts';
import { recordBounce } from '../bounces/service.ts';
import type { SendLedger, SentRecord } from '../ledger/index.ts';
import type { LedgerWriters, LockBudget } from './lock-budget.ts';
import type { RelayWatch } from './relay-watch.ts';
import { afterFailure } from './retry-policy.ts';
import { emptySummary, type ProgressDelta, type SenderConfig, type SendSummary } from './send-types.ts';

/** What the outcomes need of the run. */
export interface OutcomeDeps {
  db: Db;
  clock: Clock;
  config: SenderConfig;
  logger: Logger;
  ledger: SendLedger;
  relay: RelayWatch;
  /** Failure-path writes (synchronous, short wait). */
  writers: Pick<LedgerWriters, 'write'>;
  budget: LockBudget;
  random: () => number;
  onProgress?: ((delta: ProgressDelta) => void) | undefined;
}

/** The row a failed send was for. */
export interface FailedRow {
  row: { id: number; attempts: number };
  subscriber: { id: number };
}

const RECORDING_DELIVERY = 'recording a delivered digest; it becomes unknown at the next run, not resent';

/** The outcomes of one thread's send run, and the summary they add up to. */
export class SendOutcomes {
  readonly summary: SendSummary = emptySummary();
  /** Rows left for a later attempt (counted as `retrying` at the end). */
  private readonly leftForRetry = new Set<number>();
  private gaveBackStreak = false;
  /** Set when the database could not be written (full, read-only, locked too long): every lane stops. */
  storageStopped = false;

  constructor(private readonly d: OutcomeDeps) {
    this.summary.renderMs = 0;
  }

  /** Sent and recorded (counted even if the row was no longer ours to mark: the email went out). */
  sent(r: SentRecord): void {
    this.summary.sent++;
    this.settle(r.id, 'sent');
  }

  /** The delivered row could not be recorded: it stays 'sending' (later unknown), never retried. */
  notRecorded(e: unknown, id: number | undefined): void {
    this.stopOnStorageFault(e, id, RECORDING_DELIVERY);
  }

  /** The claim (with or without the previous delivery's record) failed. */
  claimFailed(e: unknown, delivered: SentRecord | undefined): void {
    this.stopOnStorageFault(e, delivered?.id, delivered ? RECORDING_DELIVERY : 'claiming the next digest');
  }

  /** The subscriber is no longer confirmed: nothing sent. */
  skipped(id: number, status: string): void {
    this.d.writers.write(() => this.d.ledger.markSkipped(id, `not sent: the address is ${status}`));
    this.summary.suppressed++;
    this.settle(id, 'other');
  }

  /** Nothing was sent, and sending cannot work (unreadable row, render error): failed, no hard failure. */
  broken(id: number, what: string, e: unknown): void {
    this.d.logger.error({ digest: id, err: e }, what);
    this.d.writers.write(() => this.d.ledger.markBroken(id, `${what}: ${errorMessage(e)}`.slice(0, 1000)));
    this.summary.failed++;
    this.settle(id, 'failed');
  }

  /** Still in flight when the shutdown grace ran out (written without waiting for a turn). */
  abandoned(id: number): void {
    this.d.ledger.markUnknown(id, 'outcome unknown: still in flight when the shutdown grace ran out; not resent, papers carried to the next edition');
    this.summary.unknown++;
    this.settle(id, 'other');
  }

  /** Recording an outcome failed (storage) or a bug: the row stays 'sending' for recoverStale. */
  unexpected(e: unknown, id: number): void {
    if (storageFault(e)) this.stopOnStorageFault(e, id, 'recording an outcome');
    else this.d.logger.error({ digest: id, err: e }, 'unexpected error while sending a digest');
  }

  /** The relay refused or did not answer: unknown, failed, or retried, as the retry policy decides. */
  failed({ row, subscriber }: FailedRow, err: MailError): void {
    const { config, clock, relay } = this.d;
    const decision = afterFailure(err.kind, row.attempts, config, clock.now(), this.d.random);
    if (decision.action === 'unknown') return this.lostAnswer(row.id, subscriber.id, err);
    this.d.logger.info({ digest: row.id, kind: err.kind, code: err.responseCode, response: err.response }, 'send failed');
    const failure = { code: err.responseCode ?? null, response: err.response.slice(0, 1000) };
    if (decision.action === 'fail') {
      relay.answered();
      this.permanent(row.id, subscriber.id, err.response, failure);
      return;
    }
    const status = this.d.writers.write(() => this.d.ledger.markRetry(row.id, failure, decision.action === 'retry' ? decision.at : null));
    if (status === 'retry') {
      this.leftForRetry.add(row.id);
    } else if (status === 'failed') {
      this.summary.failed++;
      this.settle(row.id, 'failed');
    }
    if (err.kind !== 'connection') {
      relay.answered();
      return;
    }
    this.relayTrouble(row.id, err.response, true);
  }

  /** Paused by another thread: this thread's part of the streak goes back too. */
  laneDone(): void {
    if (this.d.relay.paused) this.giveBackMyStreak('the relay looked down to another sending thread');
  }

  /** The summary once every lane is done. */
  finish(aborted: boolean): SendSummary {
    this.summary.paused = this.summary.paused || this.d.relay.paused;
    this.summary.aborted = aborted;
    this.summary.retrying = this.leftForRetry.size;
    return this.summary;
  }

  /**
   * The relay may have queued it: never resent; the watermark stays, so its papers ride in the next
   * digest (exactly what a crash mid-send leaves, see ledger/port.ts).
   */
  private lostAnswer(id: number, subscriber: number, err: MailError): void {
    this.d.writers.write(() => this.d.ledger.markUnknown(id, `outcome unknown: ${err.response}; not resent, papers carried to the next edition`.slice(0, 1000)));
    this.summary.unknown++;
    this.settle(id, 'other');
    this.d.logger.warn(
      { digest: id, subscriber, response: err.response },
      'relay answer lost after the whole message was sent: digest marked unknown, not resent (its papers ride in the next digest)',
    );
    this.relayTrouble(id, err.response, false);
  }

  /** A permanent failure; a policy block or a full mailbox is recorded as a bounce of that kind instead. */
  private permanent(id: number, subscriber: number, response: string, failure: { code: number | null; response: string }): void {
    const { db, clock, logger, config, ledger, writers } = this.d;
    const status = enhancedStatus(response);
    const kind = classifyFailure(status, response, true);
    if (kind !== 'hard') {
      // An alarm, or the soft window; not a hard failure.
      const report = { digestId: id, kind, channel: 'send' as const, status, detail: response };
      const refused = db.transaction(() => (ledger.markRefused(id, failure) ? recordBounce({ db, clock, logger, config }, report) : 'none'));
      if (writers.write(() => refused()) === 'suppressed') this.summary.newlySuppressed++;
    } else if (writers.write(() => ledger.markFailed(id, subscriber, failure, config.HARD_FAILURES_TO_SUPPRESS, clock.now()))) {
      this.summary.newlySuppressed++;
      logger.warn({ subscriber }, 'address suppressed after repeated permanent failures');
    }
    this.summary.failed++;
    this.settle(id, 'failed');
  }

  /** A connection-level failure counts toward "relay down"; at RELAY_DOWN_AFTER in a row the run pauses. */
  private relayTrouble(id: number, response: string, retried: boolean): void {
    const relay = this.d.relay;
    const tripped = retried ? relay.connectionFailed(id) : relay.noAnswer();
    if (relay.paused) {
      // Paused already: this row goes back (with the rest of this thread's streak the first time).
      if (this.gaveBackStreak) {
        if (retried) this.giveBack(id, response);
      } else this.giveBackMyStreak(response);
    } else if (tripped && relay.pause()) {
      this.summary.paused = true;
      this.summary.pauseReason = `relay down: ${relay.streak} connection failures in a row (last: ${response})`;
      this.d.logger.error({ reason: this.summary.pauseReason }, 'sending paused');
      this.giveBackMyStreak(response);
    }
  }

  /** Once per run and thread: this thread's rows of the streak that paused the run go back. */
  private giveBackMyStreak(response: string): void {
    if (this.gaveBackStreak) return;
    this.gaveBackStreak = true;
    for (const id of this.d.relay.takeMyStreak()) this.giveBack(id, response);
  }

  /** Relay down: the row goes back to 'retry' without burning the attempt, due at once next run. */
  private giveBack(id: number, response: string): void {
    this.d.writers.write(() => this.d.ledger.giveBack(id, `relay down, not counted as an attempt: ${response}`, this.d.clock.now()));
    if (!this.leftForRetry.has(id)) {
      // It had just used its last attempt and was counted failed: it is open again after all.
      this.summary.failed--;
      this.progress(-1, 0, -1);
      this.leftForRetry.add(id);
    }
  }

  /**
   * The ledger could not be written: stop claiming (what is left waits for the next run, which must be
   * told: the run reports the fault and `digest run` exits non-zero). Not a storage fault: a bug, rethrown.
   */
  private stopOnStorageFault(e: unknown, digest: number | undefined, what: string): void {
    const fault = storageFault(e);
    if (!fault) throw e;
    // Stopped on a lock (even a short synchronous wait's): the run's other writes must not wait for it again.
    if (fault.fault === 'DB_LOCKED') this.d.budget.spend();
    if (!this.storageStopped) {
      this.storageStopped = true;
      this.summary.storageFault = fault.message;
      this.summary.storageFaultCode = fault.fault;
      this.d.logger.error({ code: fault.fault, digest }, `sending stopped: ${fault.message} (${what}); the rest waits for the next run`);
    }
  }

  private settle(id: number, outcome: 'sent' | 'failed' | 'other'): void {
    this.leftForRetry.delete(id);
    this.progress(1, outcome === 'sent' ? 1 : 0, outcome === 'failed' ? 1 : 0);
  }

  private progress(done: number, sent: number, failed: number): void {
    this.d.onProgress?.({ done, sent, failed });
  }
}
