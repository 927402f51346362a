// The console's deliveries page: the recent editions' rows by state, what is waiting and why, and the
// relay's last errors. Every query reads through an index: digests_edition (edition, status) for the
// recent editions, digests_queue (status, next_attempt_at) for what waits.
import type { Db } from '../db/open.ts';
import { statement } from '../db/statements.ts';
import { normaliseReason } from '../report/status.ts';

export const STATES = ['planned', 'sending', 'retry', 'sent', 'failed', 'unknown', 'suppressed'] as const;

/** Rows by edition and state, for the editions from yesterday on (UTC; an edition is a local date). */
const SQL_BY_STATE = `
  SELECT edition, status, count(*) AS n FROM digests WHERE edition >= :from GROUP BY edition, status ORDER BY edition DESC`;

/** What is waiting to be sent, soonest first (planned rows have no next_attempt_at and come first). */
const SQL_WAITING = `
  SELECT d.id, s.email, d.subscriber_id AS subscriberId, d.status, d.edition, d.attempts,
         d.next_attempt_at AS nextAttemptAt, d.claimed_at AS claimedAt, d.smtp_code AS code, d.smtp_response AS response
  FROM digests d JOIN subscribers s ON s.id = d.subscriber_id
  WHERE d.status IN ('planned', 'retry', 'sending')
  ORDER BY d.status, d.next_attempt_at LIMIT :limit`;

const SQL_WAITING_COUNT = `SELECT status, count(*) AS n FROM digests WHERE status IN ('planned', 'retry', 'sending') GROUP BY status`;

/**
 * The relay's answers that were not a success, newest first, over the last week's editions. SQLite reads
 * the rows in those states through digests_queue and sorts them: 135 ms with 27,000 failed rows in a
 * 2.6-million-row ledger (bench/admin.ts); walking digests_edition backwards instead was slower (330 ms)
 * whenever the week had few errors.
 */
const SQL_LAST_ERRORS = `
  SELECT d.id, s.email, d.subscriber_id AS subscriberId, d.status, d.edition, d.smtp_code AS code, d.smtp_response AS response
  FROM digests d JOIN subscribers s ON s.id = d.subscriber_id
  WHERE d.edition >= :weekAgo AND d.status IN ('retry', 'failed', 'unknown') AND d.smtp_response IS NOT NULL
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

export function deliveries(db: Db, now: Date, limit = 50): DeliveriesView {
  const day = (offset: number) => new Date(now.getTime() + offset * 86_400_000).toISOString().slice(0, 10);
  const editions = new Map<string, Record<string, number>>();
  for (const r of statement<{ from: string }, { edition: string; status: string; n: number }>(db, SQL_BY_STATE).all({ from: day(-1) })) {
    let c = editions.get(r.edition);
    if (!c) editions.set(r.edition, (c = Object.fromEntries(STATES.map((s) => [s, 0]))));
    c[r.status] = r.n;
  }
  const waiting = statement<{ limit: number }, WaitingRow>(db, SQL_WAITING).all({ limit }).map((r) => ({ ...r, why: why(r) }));
  const waitingCounts: Record<string, number> = { planned: 0, retry: 0, sending: 0 };
  for (const r of statement<[], { status: string; n: number }>(db, SQL_WAITING_COUNT).all()) waitingCounts[r.status] = r.n;
  const lastErrors = statement<{ weekAgo: string; limit: number }, WaitingRow>(db, SQL_LAST_ERRORS)
    .all({ weekAgo: day(-7), limit: 20 })
    .map((r) => ({ ...r, reason: normaliseReason(r.code, r.response ?? '') }));
  return {
    editions: [...editions].map(([edition, counts]) => ({ edition, counts, total: Object.values(counts).reduce((a, b) => a + b, 0) })),
    waiting,
    waitingCounts,
    lastErrors,
  };
}
