// The console's deliveries page: the recent editions' rows by state, what is waiting and why, and the
// relay's last errors. Every query reads through an index (migration 007): digests_edition (edition, id,
// status) for the recent editions, digests_queue (status, next_attempt_at, id DESC; waiting and in-flight
// rows only) for what waits, digests_trouble (edition; retry, failed and unknown rows) for the errors. The
// partial indexes are used only by a query that repeats their WHERE (an OR of equalities, in that order)
// or asks for one of its states with `=`.
import type { Db } from '../db/open.ts';
import { statement } from '../db/statements.ts';
import { normaliseReason } from '../report/status.ts';

export const STATES = ['planned', 'sending', 'retry', 'sent', 'failed', 'unknown', 'suppressed'] as const;

/**
 * Rows by state, per edition from yesterday on (UTC; an edition is a local date), from digests_edition
 * alone: every row of an edition (status NULL here) and its rows not sent, by state; sent = the rest.
 * The index holds status after id (migration 007), so grouping by status sorts what it groups: sorting
 * only the unsent rows keeps it near what it was.
 * Measured: BENCHMARKS.md § Why the code is shaped this way, deliveries.ts.
 */
const SQL_BY_STATE = `
  SELECT edition, status, count(*) AS n FROM digests WHERE edition >= :from AND status <> 'sent' GROUP BY edition, status
  UNION ALL
  SELECT edition, NULL, count(*) FROM digests WHERE edition >= :from GROUP BY edition`;

/**
 * What is waiting to be sent, soonest first: planned rows in the order they are claimed (lowest id
 * first; rows planned before 002 with a next_attempt_at after them), then retries by due time, then the
 * rows in flight. Each part is read from digests_queue in its own order (planned rows run backwards in
 * it: see migration 007), at most :limit rows each, and the few rows read are sorted.
 */
const SQL_WAITING = `
  SELECT d.id, s.email, d.subscriber_id AS subscriberId, d.status, d.edition, d.attempts,
         d.next_attempt_at AS nextAttemptAt, d.claimed_at AS claimedAt, d.smtp_code AS code, d.smtp_response AS response
  FROM (SELECT 0 AS k, id FROM (SELECT id FROM digests WHERE status = 'planned' AND next_attempt_at IS NULL ORDER BY id LIMIT :limit)
        UNION ALL
        SELECT 0, id FROM (SELECT id FROM digests WHERE status = 'planned' AND next_attempt_at IS NOT NULL ORDER BY next_attempt_at, id LIMIT :limit)
        UNION ALL
        SELECT 1, id FROM (SELECT id FROM digests WHERE status = 'retry' ORDER BY next_attempt_at LIMIT :limit)
        UNION ALL
        SELECT 2, id FROM (SELECT id FROM digests WHERE status = 'sending' ORDER BY next_attempt_at LIMIT :limit)) w
  CROSS JOIN digests d ON d.id = w.id
  JOIN subscribers s ON s.id = d.subscriber_id
  ORDER BY w.k, d.next_attempt_at, d.id LIMIT :limit`;

const SQL_WAITING_COUNT = `
  SELECT status, count(*) AS n FROM digests WHERE status = 'planned' OR status = 'retry' OR status = 'sending' GROUP BY status`;

/**
 * The relay's answers that were not a success, newest first, over the last week's editions: the week's
 * rows in those states come from digests_trouble (edition) and are sorted. INDEXED BY: left to itself
 * SQLite may walk the whole table backwards for `ORDER BY d.id DESC LIMIT` (no statistics: no ANALYZE is
 * run), slow whenever the week had few errors.
 * Measured: BENCHMARKS.md § Why the code is shaped this way, deliveries.ts.
 */
const SQL_LAST_ERRORS = `
  SELECT d.id, s.email, d.subscriber_id AS subscriberId, d.status, d.edition, d.smtp_code AS code, d.smtp_response AS response
  FROM digests d INDEXED BY digests_trouble JOIN subscribers s ON s.id = d.subscriber_id
  WHERE d.edition >= :weekAgo AND (d.status = 'retry' OR d.status = 'failed' OR d.status = 'unknown') AND d.smtp_response IS NOT NULL
  ORDER BY d.id DESC LIMIT :limit`;

export interface WaitingRow {
  id: number;
  email: string;
  subscriberId: number;
  status: string;
  edition: string;
  attempts: number;
  nextAttemptAt: string | null;
  claimedAt: string | null;
  code: number | null;
  response: string | null;
  why?: string;
}

export interface DeliveriesView {
  editions: Array<{ edition: string; counts: Record<string, number>; total: number }>;
  waiting: WaitingRow[];
  waitingCounts: Record<string, number>;
  lastErrors: Array<WaitingRow & { reason: string }>;
}

function why(r: WaitingRow): string {
  if (r.status === 'planned') return 'planned: goes out with the next run (the hourly tick or digest run)';
  if (r.status === 'sending') return `in flight since ${r.claimedAt ?? '?'}`;
  return `retry ${r.attempts} due ${r.nextAttemptAt ?? 'now'} after: ${normaliseReason(r.code, r.response ?? '')}`;
}

/** The rows an engine reads for the page (SQLite below, PostgreSQL in admin/postgres/views.ts). */
export interface DeliveriesRows {
  /** Per edition from yesterday on: its rows not sent by state, and (status null) all its rows. */
  byState: Array<{ edition: string; status: string | null; n: number }>;
  waiting: WaitingRow[];
  waitingCounts: Array<{ status: string; n: number }>;
  lastErrors: WaitingRow[];
}

/** The first edition shown (yesterday, UTC) and the last week's start (the errors' window). */
export function deliveriesSpan(now: Date): { from: string; weekAgo: string } {
  const day = (offset: number) => new Date(now.getTime() + offset * 86_400_000).toISOString().slice(0, 10);
  return { from: day(-1), weekAgo: day(-7) };
}

export function deliveries(db: Db, now: Date, limit = 50): DeliveriesView {
  const { from, weekAgo } = deliveriesSpan(now);
  return deliveriesFrom({
    byState: statement<{ from: string }, { edition: string; status: string | null; n: number }>(db, SQL_BY_STATE).all({ from }),
    waiting: statement<{ limit: number }, WaitingRow>(db, SQL_WAITING).all({ limit }),
    waitingCounts: statement<[], { status: string; n: number }>(db, SQL_WAITING_COUNT).all(),
    lastErrors: statement<{ weekAgo: string; limit: number }, WaitingRow>(db, SQL_LAST_ERRORS).all({ weekAgo, limit: LAST_ERRORS }),
  });
}

/** The relay's last errors the page lists. */
export const LAST_ERRORS = 20;

/** The page from either engine's rows: sent = an edition's rows minus those in another state; reasons normalised. */
export function deliveriesFrom(rows: DeliveriesRows): DeliveriesView {
  const editions = new Map<string, Record<string, number>>();
  const totals = new Map<string, number>();
  for (const r of rows.byState) {
    let c = editions.get(r.edition);
    if (!c) editions.set(r.edition, (c = Object.fromEntries(STATES.map((s) => [s, 0]))));
    if (r.status === null) totals.set(r.edition, r.n);
    else c[r.status] = r.n;
  }
  for (const [edition, c] of editions) c.sent = (totals.get(edition) ?? 0) - Object.values(c).reduce((a, b) => a + b, 0);
  const waitingCounts: Record<string, number> = { planned: 0, retry: 0, sending: 0 };
  for (const r of rows.waitingCounts) waitingCounts[r.status] = r.n;
  return {
    editions: [...editions]
      .sort(([a], [b]) => (a < b ? 1 : a > b ? -1 : 0))
      .map(([edition, counts]) => ({ edition, counts, total: totals.get(edition) ?? 0 })),
    waiting: rows.waiting.map((r) => ({ ...r, why: why(r) })),
    waitingCounts,
    lastErrors: rows.lastErrors.map((r) => ({ ...r, reason: normaliseReason(r.code, r.response ?? '') })),
  };
}
