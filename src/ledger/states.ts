// The SQLite ledger: the send run's port (port.ts) over prepared compare-and-set statements
// (states-sql.ts). Measurements behind its shape: BENCHMARKS.md, "The ledger".
import type { Clock } from '../clock.ts';
import type { Db } from '../db/open.ts';
import { statement } from '../db/statements.ts';
import { claimantId } from './claimant.ts';
import type { FailureRecord, RecoverOptions, SendLedger, SentRecord } from './port.ts';
import { recoverStale } from './recover.ts';
import {
  LEDGER_CHECKPOINT_FRAMES,
  SQL_CLAIM_NEXT,
  SQL_GIVE_BACK,
  SQL_MARK_FAILED,
  SQL_MARK_RETRY,
  SQL_MARK_SENT,
  SQL_MARK_SKIPPED,
  SQL_MARK_UNKNOWN,
  SQL_NEXT_RETRY_AT,
  SQL_OPEN_COUNT,
} from './states-sql.ts';

/**
 * What a recorded outcome changes on the subscriber's row, in the same transaction: subscribers/records/repo.ts's
 * functions, passed in by the send run so the ledger does not reach into subscribers/.
 */
export interface SubscriberMarks {
  /** A delivered row: the watermark moves up to toPaper and the failure streak clears. */
  advanceWatermark(db: Db, subscriberId: number, toPaper: number): void;
  /** One more hard failure; returns the subscriber's status after it ('suppressed' at the limit). */
  countDeliveryFailure(db: Db, subscriberId: number, limit: number, now: string): string | undefined;
}

/** Prepared statements of one database, bound to one claimant. */
export class SqliteLedger implements SendLedger {
  private readonly s;
  /** Transactions made once: better-sqlite3's transaction() costs more to create than to run. */
  private readonly tx;
  constructor(
    private readonly db: Db,
    subscribers: SubscriberMarks,
    readonly claimant: string = claimantId(),
  ) {
    // Only ever lowered: a connection told to checkpoint more often, or never (0: by hand), stays so.
    if ((db.pragma('wal_autocheckpoint', { simple: true }) as number) > LEDGER_CHECKPOINT_FRAMES) {
      db.pragma(`wal_autocheckpoint = ${LEDGER_CHECKPOINT_FRAMES}`);
    }
    const s = {
      claimNext: statement(db, SQL_CLAIM_NEXT),
      sent: statement(db, SQL_MARK_SENT),
      retry: statement(db, SQL_MARK_RETRY),
      failed: statement(db, SQL_MARK_FAILED),
      skipped: statement(db, SQL_MARK_SKIPPED),
      giveBack: statement(db, SQL_GIVE_BACK),
      unknown: statement(db, SQL_MARK_UNKNOWN),
      nextRetryAt: statement(db, SQL_NEXT_RETRY_AT),
      openCount: statement(db, SQL_OPEN_COUNT),
    };
    this.s = s;
    /** A delivered row: its status, and its subscriber's watermark. */
    const markOne = (r: SentRecord, claimant: string): boolean => {
      const changed = s.sent.run({
        id: r.id,
        claimant,
        messageId: r.messageId,
        code: replyCode(r.response),
        response: r.response,
        now: r.at.toISOString(),
      }).changes;
      // The subscriber's watermark moves and their failure streak clears (subscribers/records/repo.ts).
      if (changed === 1) subscribers.advanceWatermark(db, r.subscriberId, r.toPaper);
      return changed === 1;
    };
    this.tx = {
      sentThenClaim: db.transaction((r: SentRecord, claimant: string, now: string): { recorded: boolean; next: number | undefined } => {
        const recorded = markOne(r, claimant);
        const next = s.claimNext.get({ claimant, now }) as { id: number } | undefined;
        return { recorded, next: next?.id };
      }),
      sent: db.transaction((r: SentRecord, claimant: string): boolean => markOne(r, claimant)),
      failed: db.transaction((id: number, subscriberId: number, failure: FailureRecord, suppressAfter: number, now: Date, claimant: string) => {
        if (s.failed.run({ id, claimant, ...failure }).changes !== 1) return false;
        // One more hard failure (subscribers/records/repo.ts); at the limit the address is suppressed.
        return subscribers.countDeliveryFailure(db, subscriberId, suppressAfter, now.toISOString()) === 'suppressed';
      }),
    };
  }

  /** Claims the next due row; undefined when none is due now. */
  claimNext(now: Date): number | undefined {
    const r = this.s.claimNext.get({ claimant: this.claimant, now: now.toISOString() }) as { id: number } | undefined;
    return r?.id;
  }

  /**
   * Records a delivered row, then claims the next due row, in ONE transaction: a sending thread writes
   * once per digest instead of twice (fewer commits, and threads queue less for SQLite's write lock).
   * Nothing happens between the two: the row is recorded exactly as early as with markSent.
   */
  recordSentThenClaim(sent: SentRecord, now: Date): { recorded: boolean; next: number | undefined } {
    return this.tx.sentThenClaim.immediate(sent, this.claimant, now.toISOString());
  }

  markSent(id: number, subscriberId: number, toPaper: number, messageId: string, response: string, now: Date): boolean {
    return this.tx.sent.immediate({ id, subscriberId, toPaper, messageId, response, at: now }, this.claimant);
  }

  /**
   * A temporary failure: 'retry' at `nextAttemptAt`, or 'failed' when it is null (tries used up: the
   * decision is retry-policy.ts's). Returns the row's new status (undefined: not our claim any more).
   */
  markRetry(id: number, failure: FailureRecord, nextAttemptAt: Date | null): 'retry' | 'failed' | undefined {
    const r = this.s.retry.get({
      id,
      claimant: this.claimant,
      nextAttemptAt: nextAttemptAt?.toISOString() ?? null,
      ...failure,
    }) as { status: 'retry' | 'failed' } | undefined;
    return r?.status;
  }

  /** Permanent failure; returns true when this failure suppressed the address. */
  markFailed(id: number, subscriberId: number, failure: FailureRecord, suppressAfter: number, now: Date): boolean {
    return this.tx.failed.immediate(id, subscriberId, failure, suppressAfter, now, this.claimant);
  }

  /**
   * A permanent refusal that is not the address's fault (a policy block, a full mailbox: bounces/classify.ts):
   * failed with the relay's answer, no hard failure counted (the bounce service records it).
   */
  markRefused(id: number, failure: FailureRecord): boolean {
    return this.s.failed.run({ id, claimant: this.claimant, ...failure }).changes === 1;
  }

  /** A row that failed for reasons of ours (render error): failed, no hard failure counted. */
  markBroken(id: number, response: string): void {
    this.s.failed.run({ id, claimant: this.claimant, code: null, response });
  }

  markSkipped(id: number, response: string): void {
    this.s.skipped.run({ id, claimant: this.claimant, response });
  }

  giveBack(id: number, response: string, now: Date): void {
    this.s.giveBack.run({ id, claimant: this.claimant, response, now: now.toISOString() });
  }

  markUnknown(id: number, response: string): void {
    this.s.unknown.run({ id, claimant: this.claimant, response });
  }

  recoverStale(clock: Clock, opts: RecoverOptions = {}): number {
    return recoverStale(this.db, clock, opts);
  }

  nextRetryAt(): Date | undefined {
    const r = this.s.nextRetryAt.get() as { at: string | null };
    return r.at === null ? undefined : new Date(r.at);
  }

  openCount(): number {
    return (this.s.openCount.get() as { n: number }).n;
  }
}

/** "250 2.0.0 Ok: queued" -> 250 */
export function replyCode(response: string): number | null {
  const m = /^(\d{3})\b/.exec(response.trim());
  return m ? Number(m[1]) : null;
}
