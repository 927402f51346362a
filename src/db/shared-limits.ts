// Limits every process of a deployment shares: fixed-window counters (the console's login attempts, the
// subscribe and preview rate limits, keyed by client address) and spacings (one request at a time to a
// feed host, the next one N ms after the last ended, keyed by host). They live in the store the instances share, one row per (purpose, key) in
// `shared_limits` (migration 016), each change one atomic upsert: the SQLite file by default, PostgreSQL
// when DATABASE_URL names it (src/db/postgres/shared-limits.ts). Two `digest serve` behind a load balancer
// then allow what one would, not twice as much.
import type { Db } from './open.ts';
import { retryWhileBusy } from './busy.ts';

/** One counter after a hit. */
export interface WindowCount {
  /** Hits in the current window, this one included. */
  hits: number;
  /** When the window ends (ms since 1970, the caller's clock). */
  resetAtMs: number;
}

/** One try to take a spaced key (a feed host). */
export interface Take {
  taken: boolean;
  /** Not taken: when the holder's lease lapses, or the earliest next start once it has ended. */
  untilMs: number;
}

/** The port: what the web tier and the feed fetcher ask of the shared store. Times are ms since 1970. */
export interface SharedLimits {
  /** Counts one hit of `key` in a fixed window of `windowMs` that starts at the first hit after the last window. */
  hit(purpose: string, key: string, windowMs: number, nowMs: number): Promise<WindowCount>;
  /**
   * Takes `key` for one request if it is free (its last request ended at least an interval ago, or its
   * holder's lease lapsed), for at most `leaseMs`. `holder` is unique to this request.
   */
  take(purpose: string, key: string, leaseMs: number, nowMs: number, holder: string): Promise<Take>;
  /** The holder's request ended: the next may take `key` at `nextAtMs` (end + interval). */
  release(purpose: string, key: string, holder: string, nextAtMs: number): Promise<void>;
  close(): Promise<void>;
}

/** Rows of a purpose whose time has passed are deleted at most this often per store (on a hit or a take). */
export const SWEEP_EVERY_MS = 60_000;

// A window that has ended starts again at this hit; else one more hit in it. SET reads the old row.
export const SQL_LIMIT_HIT = `
  INSERT INTO shared_limits (purpose, key, hits, until_ms) VALUES (@purpose, @key, 1, @now + @span)
  ON CONFLICT (purpose, key) DO UPDATE SET
    hits     = CASE WHEN shared_limits.until_ms <= @now THEN 1 ELSE shared_limits.hits + 1 END,
    until_ms = CASE WHEN shared_limits.until_ms <= @now THEN excluded.until_ms ELSE shared_limits.until_ms END
  RETURNING hits, until_ms`;
// Compare-and-set: a free key (its time passed) goes to this holder for the lease; a held one is left
// as it is. The holder read back says who has it.
export const SQL_SPACING_TAKE = `
  INSERT INTO shared_limits (purpose, key, hits, until_ms, holder) VALUES (@purpose, @key, 1, @now + @span, @holder)
  ON CONFLICT (purpose, key) DO UPDATE SET
    hits     = CASE WHEN shared_limits.until_ms <= @now THEN shared_limits.hits + 1 ELSE shared_limits.hits END,
    holder   = CASE WHEN shared_limits.until_ms <= @now THEN excluded.holder ELSE shared_limits.holder END,
    until_ms = CASE WHEN shared_limits.until_ms <= @now THEN excluded.until_ms ELSE shared_limits.until_ms END
  RETURNING holder, until_ms`;
// Only the holder moves its lease's end to the next start (a lapsed lease another took stays theirs).
export const SQL_SPACING_RELEASE = `UPDATE shared_limits SET until_ms = @next WHERE purpose = @purpose AND key = @key AND holder = @holder`;
export const SQL_LIMITS_SWEEP = `DELETE FROM shared_limits WHERE purpose = @purpose AND until_ms <= @now`;

/** Whether a purpose is due a sweep; remembers the time when it is. */
export function sweepDue(lastSweep: Map<string, number>, purpose: string, nowMs: number): boolean {
  const last = lastSweep.get(purpose);
  if (last !== undefined && nowMs - last < SWEEP_EVERY_MS && nowMs >= last) return false;
  lastSweep.set(purpose, nowMs);
  return true;
}

export interface SqliteLimitsOptions {
  /** How long a write waits for another process's lock, retrying with the event loop free (WEB_LOCK_WAIT_MS). */
  lockWaitMs: number;
}

/**
 * The SQLite adapter, on the process's own connection (the same file as everything else, so a `digest
 * serve` and a `digest run` beside it share the spacing of feed hosts). Each call is one statement.
 */
export function createSqliteLimits(db: Db, options: SqliteLimitsOptions): SharedLimits {
  const statements = () => ({
    hit: db.prepare(SQL_LIMIT_HIT),
    take: db.prepare(SQL_SPACING_TAKE),
    release: db.prepare(SQL_SPACING_RELEASE),
    sweep: db.prepare(SQL_LIMITS_SWEEP),
  });
  let s: ReturnType<typeof statements> | undefined;
  const lastSweep = new Map<string, number>();
  const write = <T>(purpose: string, nowMs: number, fn: (st: ReturnType<typeof statements>) => T): Promise<T> =>
    retryWhileBusy(() => {
      const st = (s ??= statements());
      if (sweepDue(lastSweep, purpose, nowMs)) st.sweep.run({ purpose, now: nowMs });
      return fn(st);
    }, options.lockWaitMs);
  return {
    hit: (purpose, key, windowMs, nowMs) =>
      write(purpose, nowMs, (st) => {
        const r = st.hit.get({ purpose, key, now: nowMs, span: windowMs }) as { hits: number; until_ms: number };
        return { hits: r.hits, resetAtMs: r.until_ms };
      }),
    take: (purpose, key, leaseMs, nowMs, holder) =>
      write(purpose, nowMs, (st) => {
        const r = st.take.get({ purpose, key, now: nowMs, span: leaseMs, holder }) as { holder: string; until_ms: number };
        return { taken: r.holder === holder, untilMs: r.until_ms };
      }),
    release: (purpose, key, holder, nextAtMs) =>
      retryWhileBusy(() => {
        (s ??= statements()).release.run({ purpose, key, holder, next: nextAtMs });
      }, options.lockWaitMs),
    close: async () => {},
  };
}
