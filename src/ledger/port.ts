// The ledger's state changes as the send run sees them: a port, so that another engine than SQLite can
// stand behind it. The send run (src/send/) holds a SendLedger and never writes `digests` itself.
//
//   planned/retry --claim--> sending --> sent | retry | failed | suppressed
//                                    \--> unknown   (claimant died mid-send, or shutdown grace ran out)
//
// Every change is compare-and-set on the row's state and claimant, so a second process, thread, rerun or
// restart never sends a row twice. Claims are one row at a time (why: BENCHMARKS.md, "The ledger").
// The methods are synchronous, as better-sqlite3 is; an asynchronous engine needs the send run to await them.
import type { Clock } from '../clock.ts';
import type { Logger } from '../log.ts';

/** One delivered row. */
export interface SentRecord {
  id: number;
  subscriberId: number;
  /** The subscriber's watermark moves up to this paper. */
  toPaper: number;
  messageId: string;
  /** The relay's final reply, e.g. "250 2.0.0 Ok: queued as ABC". */
  response: string;
  /** When the relay accepted it. */
  at: Date;
}

export interface FailureRecord {
  code: number | null;
  response: string;
}

export interface RecoverOptions {
  leaseMs?: number;
  logger?: Logger;
}

/** What a send run does with the ledger: claim, record the outcome, recover what a stopped run left. */
export interface SendLedger {
  /** Who holds this ledger's claims (claimant.ts). */
  readonly claimant: string;
  /** Claims the next due row; undefined when none is due now. */
  claimNext(now: Date): number | undefined;
  /** Records a delivered row and claims the next due row, in one transaction. */
  recordSentThenClaim(sent: SentRecord, now: Date): { recorded: boolean; next: number | undefined };
  /** Records a delivered row (status and the subscriber's watermark together). */
  markSent(id: number, subscriberId: number, toPaper: number, messageId: string, response: string, now: Date): boolean;
  /** A temporary failure: 'retry' at nextAttemptAt, or 'failed' when null; undefined: not our claim any more. */
  markRetry(id: number, failure: FailureRecord, nextAttemptAt: Date | null): 'retry' | 'failed' | undefined;
  /** Permanent failure counted against the address; true when it suppressed the address. */
  markFailed(id: number, subscriberId: number, failure: FailureRecord, suppressAfter: number, now: Date): boolean;
  /** Permanent refusal not counted against the address (policy block, full mailbox). */
  markRefused(id: number, failure: FailureRecord): boolean;
  /** Failed for reasons of ours (render error): no hard failure counted. */
  markBroken(id: number, response: string): void;
  /** Not sent: the address left or was suppressed after planning. */
  markSkipped(id: number, response: string): void;
  /** Relay down: give one failed attempt back, due again at once. */
  giveBack(id: number, response: string, now: Date): void;
  /** We stopped waiting for a send: its outcome is unknown, never resent. */
  markUnknown(id: number, response: string): void;
  /** Rows left 'sending' by a dead claimant (or past the lease) become 'unknown'; returns how many. */
  recoverStale(clock: Clock, opts?: RecoverOptions): number;
  /** The earliest retry still to come. */
  nextRetryAt(): Date | undefined;
  /** Rows waiting to be sent (planned, retry, sending). */
  openCount(): number;
}
