// The ledger on PostgreSQL, for any number of worker processes on any number of machines. Same rows and
// states as the SQLite ledger (src/send/ledger.ts: its decisions hold here); what differs:
// - claims come in batches (FOR UPDATE SKIP LOCKED: workers pass over each other's rows, never wait);
//   a batch is kept to a worker's sending lanes, so what a crash leaves 'unknown' stays about what was in flight;
// - "is the claimant alive" is a session advisory lock (liveness.ts), which works across machines;
// - deliveries are recorded as soon as the previous record's commit returns, together when several
//   finished meanwhile (one statement: the rows and their watermarks), never held back to fill a batch.
import type pg from 'pg';
import { claimantId, replyCode, type FailureRecord } from '../index.ts';
import {
  SQL_CLAIM,
  SQL_GIVE_BACK,
  SQL_MARK_FAILED,
  SQL_MARK_RETRY,
  SQL_MARK_BROKEN,
  SQL_MARK_REFUSED,
  SQL_MARK_SENT,
  SQL_MARK_SENT_AT,
  SQL_MARK_SKIPPED,
  SQL_MARK_UNKNOWN,
  SQL_NEXT_RETRY_AT,
  SQL_OPEN_COUNT,
  SQL_RELEASE,
  SQL_RELEASE_ORPHANS,
} from './ledger-sql.ts';

/** A claimed row: what a sender needs to build and address its message. */
export interface ClaimedDigest {
  id: number;
  subscriber_id: number;
  edition: string;
  to_paper: number;
  verp_nonce: number | null;
  /** Tries before this claim (the retry policy's count). */
  attempts: number;
  /** Where the claim left the row (its ctid, as text): the record finds it there without an index walk. */
  place?: string;
  /** Claimed as planned (not a due retry): what moves the claimant's cursor. */
  fresh?: boolean;
}

/** One delivered row (the watermark moves to the row's own to_paper, read in the same statement). */
export interface PgSentRecord {
  id: number;
  messageId: string;
  response: string;
  at: Date;
  /** ClaimedDigest.place, when known. */
  place?: string;
}

/** How long a claimant walks planned rows from its cursor before it looks below it again. */
export const RESCAN_MS = 30_000;

export class PgLedger {
  constructor(
    private readonly pool: pg.Pool,
    readonly claimant: string = claimantId(),
  ) {}

  /** Planned rows are claimed above this id (see claimBatch); 0: from the lowest. */
  private floor = 0;
  /** The cursor (for tests and benches). */
  get cursor(): number {
    return this.floor;
  }
  /** When the next claim walks from the lowest planned id again (ms). */
  private rescanAt = 0;

  /**
   * Up to `max` rows: due retries first, then planned rows by lowest id (one statement), above a cursor: the
   * highest planned id this claimant took last time its batch was full. Below it, every planned row was taken
   * or held by another claim at that moment; one may come back (a claim rolled back, rows released), so the
   * walk starts from the lowest id again every RESCAN_MS, after any claim that came up short, and before
   * "nothing left" is ever answered.
   */
  async claimBatch(max: number, now: Date = new Date()): Promise<ClaimedDigest[]> {
    if (now.getTime() >= this.rescanAt) this.floor = 0;
    const from = this.floor;
    if (from === 0) this.rescanAt = now.getTime() + RESCAN_MS;
    const rows = (await this.pool.query<ClaimedDigest>(SQL_CLAIM, [this.claimant, now.toISOString(), max, from])).rows;
    if (rows.length < max) {
      this.floor = 0;
      if (rows.length === 0 && from > 0) return this.claimBatch(max, now);
    } else {
      for (const r of rows) if (r.fresh && r.id > this.floor) this.floor = r.id;
    }
    return rows;
  }

  /**
   * Records delivered rows (one statement, one commit); returns the ids that were still ours. Rows with a
   * place are found by it; any not found there (its version moved: marked unknown meanwhile) are tried by id,
   * a second statement that only that race pays, so the outcome is the same as by id alone.
   */
  async recordSent(records: PgSentRecord[]): Promise<number[]> {
    if (records.length === 0) return [];
    const byPlace = records.every((x) => x.place !== undefined);
    const done = await this.markSent(records, byPlace);
    if (!byPlace || done.length === records.length) return done;
    const found = new Set(done);
    return [...done, ...(await this.markSent(records.filter((x) => !found.has(x.id)), false))];
  }

  private async markSent(records: PgSentRecord[], byPlace: boolean): Promise<number[]> {
    const params = [
      records.map((x) => x.id),
      this.claimant,
      records.map((x) => x.messageId),
      records.map((x) => replyCode(x.response)),
      records.map((x) => x.response),
      records.map((x) => x.at.toISOString()),
    ];
    if (byPlace) params.push(records.map((x) => x.place!));
    const r = await this.pool.query<{ id: number }>(byPlace ? SQL_MARK_SENT_AT : SQL_MARK_SENT, params);
    return r.rows.map((x) => x.id);
  }

  /** Temporary failure: 'retry' at `nextAttemptAt`, 'failed' when null; undefined when the row is not ours. */
  async markRetry(id: number, failure: FailureRecord, nextAttemptAt: Date | null): Promise<'retry' | 'failed' | undefined> {
    const r = await this.pool.query<{ status: 'retry' | 'failed' }>(SQL_MARK_RETRY, [
      id,
      this.claimant,
      nextAttemptAt?.toISOString() ?? null,
      failure.code,
      failure.response,
    ]);
    return r.rows[0]?.status;
  }

  /** Permanent failure; true when it suppressed the address. */
  async markFailed(id: number, failure: FailureRecord, suppressAfter: number, now: Date = new Date()): Promise<boolean> {
    const r = await this.pool.query<{ status: string }>(SQL_MARK_FAILED, [
      id,
      this.claimant,
      failure.code,
      failure.response,
      suppressAfter,
      now.toISOString(),
    ]);
    return r.rows[0]?.status === 'suppressed';
  }

  /** Not sent, the address being no longer confirmed; false when the row is not ours. */
  async markSkipped(id: number, response: string): Promise<boolean> {
    return ((await this.pool.query(SQL_MARK_SKIPPED, [id, this.claimant, response])).rowCount ?? 0) > 0;
  }

  /** Not sent, and sending cannot work (render error): failed, the address keeps its standing. */
  /** As SQLite's markRefused: failed, no hard failure of the address; true when this call changed the row. */
  async markRefused(id: number, failure: FailureRecord): Promise<boolean> {
    return ((await this.pool.query(SQL_MARK_REFUSED, [id, this.claimant, failure.code, failure.response.slice(0, 1000)])).rowCount ?? 0) > 0;
  }

  async markBroken(id: number, response: string): Promise<boolean> {
    return ((await this.pool.query(SQL_MARK_BROKEN, [id, this.claimant, response.slice(0, 1000)])).rowCount ?? 0) > 0;
  }

  /** We stopped waiting for these sends: never resent. */
  async markUnknown(ids: number[], response: string): Promise<number> {
    return (await this.pool.query(SQL_MARK_UNKNOWN, [ids, this.claimant, response])).rowCount ?? 0;
  }

  /** Claimed rows whose send never started, given back (a clean stop). */
  async release(ids: number[]): Promise<number> {
    if (ids.length === 0) return 0;
    this.floor = 0; // they are planned again, below the cursor
    return (await this.pool.query(SQL_RELEASE, [ids, this.claimant])).rowCount ?? 0;
  }

  /** Relay down: the streak's rows (an id once per try it used) back to 'retry', due `now`, their tries given back. */
  async giveBack(ids: number[], response: string, now: Date): Promise<number> {
    const tries = new Map<number, number>();
    for (const id of ids) tries.set(id, (tries.get(id) ?? 0) + 1);
    if (tries.size === 0) return 0;
    const r = await this.pool.query(SQL_GIVE_BACK, [[...tries.keys()], [...tries.values()], this.claimant, now.toISOString(), response.slice(0, 1000)]);
    return r.rowCount ?? 0;
  }

  /** The earliest retry still to come, if any. */
  async nextRetryAt(): Promise<Date | undefined> {
    const at = (await this.pool.query<{ at: Date | string | null }>(SQL_NEXT_RETRY_AT)).rows[0]?.at;
    return at === null || at === undefined ? undefined : new Date(at);
  }

  /** Our claims we never started (see SQL_RELEASE_ORPHANS); `started`: rows we began and have no final record of. */
  async releaseOrphans(started: Iterable<number>): Promise<number[]> {
    this.floor = 0;
    return (await this.pool.query<{ id: number }>(SQL_RELEASE_ORPHANS, [this.claimant, [...started]])).rows.map((r) => r.id);
  }

  async openCount(): Promise<number> {
    return (await this.pool.query<{ n: number }>(SQL_OPEN_COUNT)).rows[0]?.n ?? 0;
  }
}
