// The ledger's state changes during sending. Each is one compare-and-set UPDATE (or one small
// transaction), so a second process, a second thread (SEND_WORKERS), a rerun or a restart after kill -9
// never sends a row twice. All threads of one process claim under the same claimant id.
//
//   planned/retry --claim--> sending --> sent | retry | failed | suppressed
//                                    \--> unknown   (claimant died mid-send, or shutdown grace ran out)
//
// Decision for a row whose send was in flight at a crash ('unknown'): the relay may or may not have
// accepted the message, and SMTP gives no way to ask. We never send it again (never two emails for one
// edition), and we do not advance the subscriber's watermark, so its papers are not lost: they ride in
// the subscriber's next edition. The worst case is a paper shown twice, never a paper missed.
//
// Decision on batching "sent" marks: each delivered row is recorded at once, in its own transaction
// (status + watermark together), not in batches. Batching would be safe for "never two emails" (a row
// still 'sending' when its process dies becomes 'unknown' and is never resent) but it widens what a
// crash costs: every delivered-but-unrecorded row would come back as 'unknown' and its papers would be
// shown again in the next edition. Measured (WAL, synchronous=NORMAL): a prepared one-row transaction
// costs about 50 µs, 13 µs per row in batches of 50, against about 1-2 ms of CPU per digest for
// rendering, building and sending; a 10,000-digest send run was as fast either way (within noise).
// What did matter: better-sqlite3's db.transaction() wrapper costs more to create (~70 µs) than to run,
// so the transactions are created once per Ledger, not per call.
// Measured again on `sendpath` (CPU profiles of the friendly 20k send stage, one thread, machine loaded):
// the ledger is 0.27 ms of CPU per digest out of 2.55, and most of it is the COMMIT (0.09-0.10 ms: SQLite
// writing the transaction's pages to the WAL, plus its share of the automatic checkpoints); the UPDATEs and
// the claim are ~0.04 ms. A group commit could save at most about that commit share, and only when
// deliveries of several lanes finish together: a thread had 2-3 lanes (SMTP_POOL_SIZE 5 over 2 threads;
// 5 lanes since the default became 10), so without waiting a batch would hold 1-2 rows, and waiting holds connections idle or claims ahead
// (what a crash turns 'unknown'). Not done. Checkpointing 10x less often (wal_autocheckpoint 10000 on the
// sending connections) measured 0.27 -> 0.18 ms per digest, but with synchronous = NORMAL the WAL is only
// synced at a checkpoint, so a power loss could roll back 10x more recorded sends and claims (rows planned
// again: sent twice); a process crash (kill -9) would not. Not done either: 0.09 ms is not worth widening
// what an OS crash or a power loss can cost.
// Claims stay one row at a time too: a batch claim would mark rows 'sending' that no send had started
// for, and a crash would turn all of them 'unknown' instead of only the sends really in flight. What a
// sending lane does instead is record its delivered row and claim its next row in one transaction
// (recordSentThenClaim): one write per digest instead of two, with nothing in between, so the row is
// recorded exactly as early as on its own, and threads queue half as often for SQLite's write lock.
// And the sending threads take turns for that write among themselves (write-turn.ts) rather than on
// SQLite's lock, whose busy handler sleeps at least 1 ms per collision (measured: 1.1 ms per digest in
// each of two threads, 0.3 ms with turns).
// Decision on the pages a digest writes (migration 007; measured with bench/ledger.ts: 100,000 digests
// planned by the real planner, three lanes doing claim -> recordSentThenClaim and nothing else, CPU of
// that loop, runs alternated with the code before on the shared 2-core machine). A digest's transaction
// costs mostly the pages it writes: each is a WAL frame (two pwrite()s and a checksum at the COMMIT, then
// a copy and a share of the fsyncs at the next checkpoint), 4-5 µs of CPU apiece, against ~5 µs for the
// transaction itself (SQLite's six shm lock calls) and ~15 µs for its three statements. With 001's
// indexes it wrote 10.1 pages (41 KB) and cost 73 µs: every status change moved an entry of three indexes
// between ranges far apart (the claimed row left the front of the planned range, the delivered one went
// to the end of the sent range): 3.1 pages in digests_edition, 3.0 in digests_queue, 1.0 in
// digests_subscriber_status, besides ~2 for the rows themselves and 1 for the subscriber's watermark.
// Migration 007 lays them out so that what one transaction changes sits on one leaf of each: the queue
// holds only open rows, planned ones backwards (the lowest id, claimed next, ends the planned range, next
// to the retry and sending ranges); digests_edition is (edition, id, status), where an entry keeps its
// place when its status changes and the reports still count statuses from the index alone; the planner's
// "has this subscriber an open row" reads a partial index of open rows. Now 6.0 pages (24 KB) and 56 µs
// per digest (-23%, medians of three runs each at load ~1; with 7 days of delivered rows in the ledger
// 10.3 -> 6.0 pages, 76 -> 56-62 µs, the same on a ledger upgraded by the migration). In V8 profiles of a
// real sending thread (`npm run bench -- --subscribers 20000 --workers 1 --profile DIR`, four runs each,
// load 1.5-8.7) the ledger went from 14-16% of the thread to 12-14%: a profile samples wall time, so it
// also counts the checkpoints' fsync waits, which fewer pages do not shorten. Claims are still lowest id
// first. Not the half we aimed for: what is left is what a digest must write (the rows' own pages: a row
// grows by ~160 bytes when claimed and recorded, so a full page splits every few digests; the
// subscriber's; one leaf of each of three indexes), the transaction and the statements.
// Measured and not done: claiming from the highest id
// (it keeps 001's index leaves together too, 8.1 pages, but the growing rows then meet full pages and the
// table's own pages go from 1.8 to 2.3 per digest); cache_size -500 to -16000 and mmap_size 256 MB on the
// sending connection (no difference beyond noise: what a digest touches stays cached); a count of open
// rows on the subscriber row, kept by triggers, instead of the planner's partial index (5.0 pages, but the
// triggers took about the CPU the page saved); the claim as SELECT then UPDATE instead of UPDATE …
// RETURNING (1.3 µs).
// Fewer pages per digest would mean more digests per automatic checkpoint, and with synchronous = NORMAL
// the WAL is synced only at a checkpoint (see above): 1000 frames were ~100 digests and would now be ~170.
// So a connection that records deliveries checkpoints every LEDGER_CHECKPOINT_FRAMES (600) frames, still
// ~100 digests, no more for a power loss to roll back than before (cost: ~2 µs per digest, in the 56).
import { hostname } from 'node:os';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/open.ts';
import { statement } from '../db/statements.ts';
import type { Logger } from '../log.ts';
import { advanceWatermark, countDeliveryFailure } from '../subscribers/records/repo.ts';

const HOST = hostname();
const STARTED_AT = Math.round(performance.timeOrigin);

/** Who holds a claim: host:pid:process-start-ms, so a dead claimant can be told apart. */
export function claimantId(): string {
  return `${HOST}:${process.pid}:${STARTED_AT}`;
}

/** A claim older than this is presumed dead even when its process cannot be checked (another host). */
export const DEFAULT_LEASE_MS = 15 * 60 * 1000;

/**
 * Automatic checkpoint of a connection that records deliveries: every this many WAL frames (SQLite's
 * default is 1000). About 100 digests' worth, as 1000 frames were before migration 007 made a digest
 * write ~6 pages instead of ~10: the WAL is synced only at a checkpoint (synchronous = NORMAL), so this
 * bounds what a power loss can roll back (see the decisions at the top).
 */
export const LEDGER_CHECKPOINT_FRAMES = 600;

/**
 * Claims the next row: a retry that has come due (earliest first), else a planned row (lowest id; rows
 * planned by releases before 002 may carry a next_attempt_at: those last, earliest first, as before).
 * The subqueries walk the digests_queue index (status, next_attempt_at, id DESC; only planned, retry and
 * sending rows: migration 007), so a claim stays O(log n) however many rows the ledger has. Planned rows
 * run backwards in it: the lowest id is read from the end of the planned range, next to the retry and
 * sending ranges the same transaction writes. `AND status IN (…)` is the compare-and-set.
 */
const SQL_CLAIM_NEXT = `
  UPDATE digests
  SET status = 'sending', claimed_by = :claimant, claimed_at = :now
  WHERE id = coalesce(
          (SELECT id FROM digests WHERE status = 'retry' AND next_attempt_at <= :now ORDER BY next_attempt_at LIMIT 1),
          (SELECT id FROM digests WHERE status = 'planned' AND next_attempt_at IS NULL ORDER BY id LIMIT 1),
          (SELECT id FROM digests WHERE status = 'planned' AND next_attempt_at IS NOT NULL ORDER BY next_attempt_at, id LIMIT 1))
    AND status IN ('planned', 'retry')
  RETURNING id`;

/** Delivered. 'unknown' too: another process may have given up on our claim after its lease. */
const SQL_MARK_SENT = `
  UPDATE digests
  SET status = 'sent', attempts = attempts + 1, message_id = :messageId, smtp_code = :code,
      smtp_response = :response, sent_at = :now, next_attempt_at = NULL
  WHERE id = :id AND claimed_by = :claimant AND status IN ('sending', 'unknown')`;


/** Temporary failure: retry at :nextAttemptAt, or (NULL) give up: retry-policy.ts decides which. */
const SQL_MARK_RETRY = `
  UPDATE digests
  SET status = CASE WHEN :nextAttemptAt IS NULL THEN 'failed' ELSE 'retry' END,
      attempts = attempts + 1, next_attempt_at = :nextAttemptAt, smtp_code = :code, smtp_response = :response
  WHERE id = :id AND claimed_by = :claimant AND status = 'sending'
  RETURNING status`;

/** Permanent failure of this row. */
const SQL_MARK_FAILED = `
  UPDATE digests
  SET status = 'failed', attempts = attempts + 1, next_attempt_at = NULL, smtp_code = :code, smtp_response = :response
  WHERE id = :id AND claimed_by = :claimant AND status = 'sending'`;

/** Not sent: the address left (unsubscribed) or was suppressed after planning. */
const SQL_MARK_SKIPPED = `
  UPDATE digests SET status = 'suppressed', smtp_response = :response
  WHERE id = :id AND claimed_by = :claimant AND status = 'sending'`;

/**
 * Relay down: give back one failed attempt of a row of the streak, without burning it; due at once for the
 * next run. A row whose retry came due within the streak (a short SMTP_RETRY_BASE_MS, or a jitter near 0)
 * may be 'sending' again by now: its earlier attempt is refunded all the same and its new send left alone
 * (measured: without this, rows kept 2 burnt attempts of a relay outage with retries due after 1 ms).
 */
const SQL_GIVE_BACK = `
  UPDATE digests
  SET attempts = max(attempts - 1, 0),
      status = CASE WHEN status = 'sending' THEN status ELSE 'retry' END,
      next_attempt_at = CASE WHEN status = 'sending' THEN next_attempt_at ELSE :now END,
      smtp_response = CASE WHEN status = 'sending' THEN smtp_response ELSE :response END
  WHERE id = :id AND claimed_by = :claimant AND status IN ('retry', 'failed', 'sending')`;

/** We stopped waiting for a send: its outcome is unknown (see the decision at the top). */
const SQL_MARK_UNKNOWN = `
  UPDATE digests SET status = 'unknown', smtp_response = :response
  WHERE id = :id AND claimed_by IS :claimant AND status = 'sending'`;

/** Claims still marked as in flight, lowest id first (sorted: a handful of rows, and digests_queue holds them by id descending). */
const SQL_SENDING_ROWS = `SELECT id, claimed_by, claimed_at FROM digests WHERE status = 'sending' ORDER BY id`;

/** The earliest retry still to come. */
const SQL_NEXT_RETRY_AT = `SELECT min(next_attempt_at) AS at FROM digests WHERE status = 'retry'`;

/** Rows waiting to be sent (for progress). */
const SQL_OPEN_COUNT = `SELECT count(*) AS n FROM digests WHERE status = 'planned' OR status = 'retry' OR status = 'sending'`;

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

/** Prepared statements of one database, bound to one claimant. */
export class Ledger {
  private readonly s;
  /** Transactions made once: better-sqlite3's transaction() costs more to create than to run. */
  private readonly tx;
  constructor(
    db: Db,
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
      // The subscriber's watermark moves and their failure streak clears (subscribers/repo.ts).
      if (changed === 1) advanceWatermark(db, r.subscriberId, r.toPaper);
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
        // One more hard failure (subscribers/repo.ts); at the limit the address is suppressed.
        return countDeliveryFailure(db, subscriberId, suppressAfter, now.toISOString()) === 'suppressed';
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

export interface RecoverOptions {
  leaseMs?: number;
  logger?: Logger;
}

/**
 * Called at the start of each run: a 'sending' row whose claimant is dead (same host, process gone,
 * or a different process start under the same pid) or whose claim is older than the lease becomes
 * 'unknown' (see the decision at the top of this file). Returns how many rows were recovered.
 */
export function recoverStale(db: Db, clock: Clock, opts: RecoverOptions = {}): number {
  const leaseMs = opts.leaseMs ?? DEFAULT_LEASE_MS;
  const now = clock.now();
  const mark = statement(db, SQL_MARK_UNKNOWN);
  let recovered = 0;
  const ids: number[] = [];
  for (const r of statement(db, SQL_SENDING_ROWS).all() as { id: number; claimed_by: string | null; claimed_at: string | null }[]) {
    const claimedAt = r.claimed_at ? Date.parse(r.claimed_at) : 0;
    const expired = now.getTime() - claimedAt > leaseMs;
    if (!expired && !claimantIsDead(r.claimed_by ?? '')) continue;
    const why = expired ? 'lease expired' : 'claimant process is gone';
    const response = `outcome unknown: the send was in flight when its process stopped (${why}); not resent, papers carried to the next edition`;
    const changed = mark.run({ id: r.id, claimant: r.claimed_by, response }).changes;
    recovered += changed;
    if (changed === 1 && ids.length < 20) ids.push(r.id);
  }
  // One line, at the start of the run (or of `digest serve`), so a crash leaves a trace beyond `digest status`.
  if (recovered > 0) {
    opts.logger?.warn(
      { recovered, digests: ids },
      `${recovered} digests left in flight by a stopped run marked unknown: not resent, their papers ride in the next digest`,
    );
  }
  return recovered;
}

function claimantIsDead(claimant: string): boolean {
  const m = /^(.*):(\d+):(\d+)$/.exec(claimant);
  if (!m) return true; // not written by this code: nobody will finish it
  const [, host, pidText, started] = m;
  if (host !== HOST) return false; // cannot check another machine: the lease decides
  const pid = Number(pidText);
  if (pid === process.pid) return Number(started) !== STARTED_AT;
  try {
    process.kill(pid, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
