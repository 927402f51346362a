// Is a claimant alive? On one machine a pid tells (src/send/ledger.ts); across machines it cannot. So
// each worker holds, for its whole life, a session advisory lock keyed by its claimant id on a
// connection of its own: when the process dies (kill -9, a lost machine), PostgreSQL closes the
// connection and drops the lock. A claimant whose lock can be taken is gone; its rows in flight become
// 'unknown' (never resent; the watermark did not move, so their papers ride in the next digest).
// The lease (DEFAULT_LEASE_MS) stays as the last resort, for a claimant stuck but connected.
import pg from 'pg';
import { DEFAULT_LEASE_MS } from '../index.ts';
import { SQL_CLAIMANTS, SQL_MARK_CLAIMANT_UNKNOWN } from './ledger-sql.ts';
import { applicationName, checkSchemaName } from '../../db/postgres/pool.ts';

/** First half of the two-int advisory lock key of claimants ("clai"): its own space, apart from other locks. */
const CLAIMANT_LOCK_CLASS = 0x636c6169;
/** Takes a claimant's lock if nobody holds it: to hold it for life, or (given back at once) to test it. */
const SQL_TRY = `SELECT pg_try_advisory_lock(${CLAIMANT_LOCK_CLASS}, hashtext($1)) AS ok`;
const SQL_UNLOCK = `SELECT pg_advisory_unlock(${CLAIMANT_LOCK_CLASS}, hashtext($1))`;

/** The lock a worker holds while it lives; taken again after a lost connection (a database restart). */
export class ClaimantLock {
  private client: pg.Client | undefined;
  private closed = false;
  constructor(
    private readonly url: string,
    private readonly claimant: string,
    private readonly schema?: string,
  ) {}

  /** Takes the lock; throws when another live session holds it (the same claimant id twice). */
  async hold(): Promise<void> {
    const c = new pg.Client({
      connectionString: this.url,
      connectionTimeoutMillis: 5000,
      application_name: applicationName(this.schema),
      ...(this.schema ? { options: `-c search_path=${checkSchemaName(this.schema)}` } : {}),
    });
    c.on('error', () => this.lost(c));
    c.on('end', () => this.lost(c));
    await c.connect();
    const r = await c.query<{ ok: boolean }>(SQL_TRY, [this.claimant]);
    if (!r.rows[0]?.ok) {
      await c.end();
      throw new Error(`claimant ${this.claimant} is held by another session`);
    }
    this.client = c;
  }

  private lost(c: pg.Client): void {
    if (this.client !== c || this.closed) return;
    this.client = undefined;
    void this.retake();
  }

  private async retake(): Promise<void> {
    for (let pause = 100; !this.closed && !this.client; pause = Math.min(pause * 2, 2000)) {
      try {
        await this.hold();
      } catch {
        await new Promise((r) => setTimeout(r, pause));
      }
    }
  }

  async release(): Promise<void> {
    this.closed = true;
    await this.client?.end().catch(() => {});
    this.client = undefined;
  }
}

export interface RecoverOptions {
  now?: Date;
  leaseMs?: number;
}

/** Marks the rows in flight of every gone claimant 'unknown'; returns their ids. */
export async function recoverStale(pool: pg.Pool, opts: RecoverOptions = {}): Promise<number[]> {
  const now = (opts.now ?? new Date()).getTime();
  const leaseMs = opts.leaseMs ?? DEFAULT_LEASE_MS;
  const claimants = (await pool.query<{ claimed_by: string; oldest: string | null }>(SQL_CLAIMANTS)).rows;
  const recovered: number[] = [];
  for (const { claimed_by: who, oldest } of claimants) {
    const expired = now - (oldest ? Date.parse(oldest) : 0) > leaseMs;
    const why = expired ? 'lease expired' : 'claimant process is gone';
    if (!expired && !(await claimantIsGone(pool, who))) continue;
    const response = `outcome unknown: the send was in flight when its process stopped (${why}); not resent, papers carried to the next edition`;
    const r = await pool.query<{ id: number }>(SQL_MARK_CLAIMANT_UNKNOWN, [who, response]);
    recovered.push(...r.rows.map((x) => x.id));
  }
  return recovered;
}

/** Gone: nobody holds its lock (taken and given back at once, on the same connection). */
export async function claimantIsGone(pool: pg.Pool, claimant: string | null): Promise<boolean> {
  if (claimant === null) return true;
  const c = await pool.connect();
  try {
    const ok = (await c.query<{ ok: boolean }>(SQL_TRY, [claimant])).rows[0]?.ok === true;
    if (ok) await c.query(SQL_UNLOCK, [claimant]);
    return ok;
  } finally {
    c.release();
  }
}
