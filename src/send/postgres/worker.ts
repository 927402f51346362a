// `digest worker` on PostgreSQL (prototype): claims a batch of digests, delivers each over SMTP in a few
// lanes, records each outcome by compare-and-set. Any number of these run against one database, on one
// machine or many. What a kill -9 leaves: its rows in flight, 'unknown' once another worker (or the next
// start) sees its liveness lock gone; never resent, their papers ride in the next digest.
// A lost database (restart) is ridden out: statements are retried (retry.ts), and once it is back the
// worker gives back the claims it never started (ledger-sql.ts SQL_RELEASE_ORPHANS).
// The message is the real digest, built as the SQLite send loop builds it (pg-digests.ts); a subscriber
// no longer confirmed when its batch is read is never mailed (its row: 'suppressed', as on SQLite).
import type pg from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { classifyFailure, enhancedStatus } from '../../bounces/classify.ts';
import type { BounceStore } from '../../bounces/store.ts';
import { systemClock, type Clock } from '../../clock.ts';
import type { MailError } from '../../mail/errors.ts';
import type { Mailer } from '../../mail/types.ts';
import type { ClaimedDigest, PgLedger, PgSentRecord } from '../../ledger/postgres/ledger.ts';
import { recoverStale } from '../../ledger/postgres/liveness.ts';
import { whileConnectionLost } from '../../db/postgres/retry.ts';
import { afterFailure, type RetrySettings } from '../retry-policy.ts';
import type { BuiltDigest, DigestSource } from './pg-digests.ts';

/** How often an idle worker looks for dead claimants. */
const RECOVER_EVERY_MS = 10_000;

export interface PgWorkerOptions {
  pool: pg.Pool;
  ledger: PgLedger;
  mailer: Mailer;
  /** Each claimed row's message (pg-digests.ts): prepared per batch, built per row. */
  digests: DigestSource;
  /** Sends at once (SMTP lanes); a claim is at most this many rows, one per lane waiting, so a crash leaves at most this many unknown. */
  lanes: number;
  /** Stop when nothing is left to claim (tests, a one-shot run); else poll every idleMs. */
  untilEmpty?: boolean;
  idleMs?: number;
  /** Becomes true to stop: lanes finish their send, unstarted claims are given back. */
  stopping?: () => boolean;
  /** The retry policy's settings (retry-policy.ts, as SQLite's send loop): backoff per try, given up after SMTP_MAX_ATTEMPTS. */
  retry: RetrySettings;
  /** Jitter of the backoff (tests pass a fixed one). */
  random?: () => number;
  /** With untilEmpty: how long (real time) the run keeps waiting for retries to come due (SMTP_RETRY_WINDOW_MS); 0: never. */
  retryWindowMs?: number;
  /** Where a policy block or a full mailbox at send time is recorded (as the SQLite send path does); without it, every 5xx counts as a hard failure. */
  bounces?: BounceStore;
  /** Permanent failures in a row that suppress an address (HARD_FAILURES_TO_SUPPRESS). */
  hardFailuresToSuppress?: number;
  /** Told how many rows of dead claimants it marked unknown (at start, and while idle), when any. */
  onRecovered?: (n: number) => void;
  /**
   * Stop after this many connection failures in a row (the relay looks down, RELAY_DOWN_AFTER): those rows go
   * back to 'retry' due at once, their tries given back (as SQLite's run); unstarted claims go back.
   */
  relayDownAfter?: number;
  /**
   * What a recorded outcome is stamped with (sent_at, suppressed_at: the opt-out's date), as SQLite's send
   * loop stamps them with the app's clock; `digest run` passes its app's. Claims and retry waits stay real time.
   */
  clock?: Clock;
}

export interface PgWorkerResult {
  sent: number;
  retried: number;
  failed: number;
  unknown: number;
  /** Not sent: the address was no longer confirmed. */
  skipped: number;
  released: number;
  /** Set when relayDownAfter connection failures came in a row: why the worker stopped. */
  relayDown?: string;
}

export async function runPgWorker(opts: PgWorkerOptions): Promise<PgWorkerResult> {
  const w = new WorkerState(opts);
  const recovered = await whileConnectionLost(() => recoverStale(opts.pool));
  if (recovered.length > 0) opts.onRecovered?.(recovered.length);
  for (;;) {
    await Promise.all(Array.from({ length: opts.lanes }, () => w.lane()));
    // Claims given back at the end (orphans of a lost connection) are work again, unless we are stopping.
    w.settleCounts();
    if ((await w.finish()) === 0 || opts.stopping?.()) return w.result;
    w.again();
  }
}

class WorkerState {
  readonly result: PgWorkerResult = { sent: 0, retried: 0, failed: 0, unknown: 0, skipped: 0, released: 0 };
  /** Claimed, not yet started. */
  private queue: ClaimedDigest[] = [];
  private claiming: Promise<void> | undefined;
  /** Lanes waiting for a row: a claim takes one row for each, so no claimed row waits unsent in the queue. */
  private waiting = 0;
  private empty = false;
  /** Rows started and not finally recorded: never given back as orphans. */
  private readonly started = new Set<number>();
  private readonly pending: Array<{ rec: PgSentRecord; done: () => void; fail: (e: unknown) => void }> = [];
  private recording: Promise<void> | undefined;
  private recoveredAt = Date.now();
  /** Connection failures (and lost answers) in a row; any delivery or answer resets it. */
  private connectionStreak = 0;
  /** Rows of the current streak, once per try: given back if it pauses the worker. */
  private streakRows: number[] = [];
  /** Rows left in 'retry' by this worker (SQLite's leftForRetry): the summary's retry count. */
  private readonly leftForRetry = new Set<number>();
  private readonly startedAt = performance.now();

  private readonly clock: Clock;

  constructor(private readonly o: PgWorkerOptions) {
    this.clock = o.clock ?? systemClock;
  }

  private stopping(): boolean {
    return this.result.relayDown !== undefined || (this.o.stopping?.() ?? false);
  }

  /**
   * Counts toward "the relay looks down" (a connection failure, row `id` in 'retry' by now; or a lost answer)
   * or ends the streak (the relay answered). As SQLite's relay-watch.ts, for this worker's lanes.
   */
  private relayAnswered(e?: MailError, id?: number): void {
    if (e?.kind !== 'connection' && e?.kind !== 'ambiguous') {
      this.connectionStreak = 0;
      this.streakRows = [];
      return;
    }
    this.connectionStreak++;
    if (e.kind === 'connection' && id !== undefined) this.streakRows.push(id);
    const after = this.o.relayDownAfter;
    if (after !== undefined && this.connectionStreak >= after && this.result.relayDown === undefined) {
      this.result.relayDown = `relay down: ${this.connectionStreak} connection failures in a row (last: ${e.response})`;
    }
  }

  async lane(): Promise<void> {
    while (!this.stopping()) {
      const row = this.queue.shift() ?? (await this.refill());
      if (row) {
        await this.deliver(row);
        continue;
      }
      if (this.o.untilEmpty && !(await this.retryComingDue())) return;
      if (this.o.untilEmpty) continue;
      await sleep(this.o.idleMs ?? 1000);
      await this.recoverNow();
      this.empty = false;
    }
  }

  /**
   * A run (untilEmpty) with nothing claimable waits for its retries to come due, within its retry window, as
   * SQLite's run does (send-loop.ts napped); false when none will within it.
   */
  private async retryComingDue(): Promise<boolean> {
    if (this.stopping()) return false;
    const next = await whileConnectionLost(() => this.o.ledger.nextRetryAt());
    if (!next) return false;
    const ms = Math.max(0, next.getTime() - Date.now());
    if (performance.now() - this.startedAt + ms > (this.o.retryWindowMs ?? 0)) return false;
    await sleep(Math.min(Math.max(ms, 1), 1000));
    this.empty = false;
    return true;
  }

  /** While idle, now and then: a dead worker's rows in flight become unknown without waiting for a restart. */
  private async recoverNow(): Promise<void> {
    if (Date.now() - this.recoveredAt < RECOVER_EVERY_MS) return;
    this.recoveredAt = Date.now();
    const recovered = await whileConnectionLost(() => recoverStale(this.o.pool)).catch(() => []);
    if (recovered.length > 0) this.o.onRecovered?.(recovered.length);
  }

  /** One claim at a time per worker, shared by the lanes that wait for it. */
  private async refill(): Promise<ClaimedDigest | undefined> {
    this.waiting++;
    try {
      while (this.queue.length === 0 && !this.empty && !this.stopping()) {
        this.claiming ??= this.claim().finally(() => (this.claiming = undefined));
        await this.claiming;
      }
    } finally {
      this.waiting--;
    }
    return this.queue.shift();
  }

  private async claim(): Promise<void> {
    // A kill -9 turns every claimed row into `unknown` (its reader gets nothing for the slot), so claim only
    // what the lanes waiting now will send at once; one turn first lets the lanes started together all wait.
    await Promise.resolve();
    const batch = Math.min(this.o.lanes, Math.max(1, this.waiting));
    let lost = false;
    const rows = await whileConnectionLost(
      () => this.o.ledger.claimBatch(batch),
      60_000,
      () => (lost = true),
    );
    // Orphans are claims this worker holds but knows nothing of (a claim whose answer was lost): never a row
    // still queued here or just claimed, or the lanes would send what another worker then claims again.
    if (lost) {
      const known = [...this.started, ...this.queue.map((r) => r.id), ...rows.map((r) => r.id)];
      this.result.released += (await this.o.ledger.releaseOrphans(known)).length;
    }
    if (rows.length === 0) this.empty = true;
    await this.prepare(rows);
    this.queue.push(...rows);
  }

  /** What the batch's rows read, copied before any is started; should that fail for good, the claims go back. */
  private async prepare(rows: ClaimedDigest[]): Promise<void> {
    try {
      await whileConnectionLost(() => this.o.digests.prepare(rows));
    } catch (e) {
      await whileConnectionLost(() => this.o.ledger.release(rows.map((r) => r.id))).catch(() => 0);
      throw e;
    }
  }

  private async deliver(row: ClaimedDigest): Promise<void> {
    this.started.add(row.id);
    // Built before anything is awaited (load + render, synchronous): nothing of the view outlives this call.
    const built = this.o.digests.build(row);
    if (built.kind !== 'mail') return this.notSent(row, built);
    let sent;
    try {
      sent = await this.o.mailer.send(built.mail).finally(() => built.release?.());
    } catch (e) {
      return this.failed(row, e as MailError);
    }
    this.relayAnswered();
    // The relay has it: a record that fails for good stops the worker (as a failed claim does) and the row
    // stays 'sending', so it becomes unknown; never a mail failure, which could send it again.
    await this.record({ id: row.id, place: row.place, messageId: sent.messageId, response: sent.response, at: this.clock.now() });
    this.result.sent++;
    this.leftForRetry.delete(row.id);
    this.started.delete(row.id);
  }

  /** Nothing sent: the address left (row 'suppressed'), the row is gone, or it cannot be rendered (failed). */
  private async notSent(row: ClaimedDigest, built: Exclude<BuiltDigest, { kind: 'mail' }>): Promise<void> {
    const l = this.o.ledger;
    if (built.kind === 'skip') {
      await whileConnectionLost(() => l.markSkipped(row.id, `not sent: the address is ${built.status}`));
      this.result.skipped++;
    } else if (built.kind === 'broken') {
      await whileConnectionLost(() => l.markBroken(row.id, built.reason));
      this.result.failed++;
    }
    this.started.delete(row.id);
  }

  /**
   * Delivered rows wait at most for the record before theirs: whatever piled up meanwhile goes in one statement.
   * The first waits one turn of the event loop, so the deliveries that finished in the same turn join it
   * (a claim's worth of instant answers: one statement, not one for the first row and one for the rest).
   */
  private record(rec: PgSentRecord): Promise<void> {
    return new Promise((done, fail) => {
      this.pending.push({ rec, done, fail });
      this.recording ??= new Promise<void>((turn) => setImmediate(turn)).then(() => this.flush());
    });
  }

  private async flush(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, this.pending.length);
      try {
        await whileConnectionLost(() => this.o.ledger.recordSent(batch.map((b) => b.rec)), 10 * 60_000);
        for (const b of batch) b.done();
      } catch (e) {
        for (const b of batch) b.fail(e);
      }
    }
    this.recording = undefined;
  }

  private async failed(row: ClaimedDigest, e: MailError): Promise<void> {
    const failure = { code: e.responseCode ?? null, response: e.response ?? String(e) };
    const l = this.o.ledger;
    const decision = afterFailure(e.kind ?? 'ambiguous', row.attempts, this.o.retry, new Date(), this.o.random ?? Math.random);
    if (decision.action === 'unknown') {
      // It may have been delivered: never sent again (and kept in `started`, so never given back).
      await whileConnectionLost(() => l.markUnknown([row.id], `outcome unknown: ${failure.response}`));
      this.result.unknown++;
      this.leftForRetry.delete(row.id);
      this.relayAnswered(e);
      if (this.result.relayDown !== undefined) await this.giveBackStreak(failure.response);
      return;
    }
    if (decision.action === 'fail') {
      await this.permanent(row, failure);
      this.result.failed++;
      this.leftForRetry.delete(row.id);
    } else {
      const at = decision.action === 'retry' ? decision.at : null;
      const status = await whileConnectionLost(() => l.markRetry(row.id, failure, at));
      if (status === 'retry') this.leftForRetry.add(row.id);
      else if (status === 'failed') this.gaveUp(row.id);
    }
    this.started.delete(row.id);
    this.relayAnswered(e, row.id);
    if (this.result.relayDown !== undefined) await this.giveBackStreak(failure.response);
  }

  private gaveUp(id: number): void {
    this.leftForRetry.delete(id);
    this.result.failed++;
  }

  /** Paused (or a lane failing after the pause): this streak's rows go back, due at once, their tries not counted. */
  private async giveBackStreak(response: string): Promise<void> {
    const rows = this.streakRows.splice(0);
    if (rows.length === 0) return;
    await whileConnectionLost(() => this.o.ledger.giveBack(rows, `relay down, not counted as an attempt: ${response}`, new Date()));
    for (const id of new Set(rows)) {
      // It had just used its last try and was counted failed: it is open again after all.
      if (!this.leftForRetry.has(id)) this.result.failed--;
      this.leftForRetry.add(id);
    }
    this.result.retried = this.leftForRetry.size;
  }

  /** As send-outcome.ts: a policy block (an alarm) or a full mailbox is a bounce of that kind; any other 5xx a hard failure. */
  private async permanent(row: ClaimedDigest, failure: { code: number | null; response: string }): Promise<void> {
    const l = this.o.ledger;
    const status = enhancedStatus(failure.response);
    const kind = classifyFailure(status, failure.response, true);
    const bounces = this.o.bounces;
    if (kind !== 'hard' && bounces) {
      if (await whileConnectionLost(() => l.markRefused(row.id, failure))) {
        await whileConnectionLost(() => bounces.record({ digestId: row.id, kind, channel: 'send', status, detail: failure.response }));
      }
      return;
    }
    await whileConnectionLost(() => l.markFailed(row.id, failure, this.o.hardFailuresToSuppress ?? 3, this.clock.now()));
  }


  /** Claims never started go back (a stop), as do orphans of a lost connection. */
  async finish(): Promise<number> {
    const unstarted = this.queue.splice(0).map((r) => r.id);
    const released =
      (await whileConnectionLost(() => this.o.ledger.release(unstarted))) +
      (await whileConnectionLost(() => this.o.ledger.releaseOrphans(this.started))).length;
    this.result.released += released;
    return released;
  }

  /** The summary's retry count: rows this worker left in 'retry'. */
  settleCounts(): void {
    this.result.retried = this.leftForRetry.size;
  }

  again(): void {
    this.empty = false;
  }
}
