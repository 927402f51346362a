// The notices table on PostgreSQL: the notice sender's store (store.ts) and the queueing of a new
// confirmation email under the per-address limits (queue.ts's rules, counted from PostgreSQL's rows, so
// every instance sharing the database counts the same emails).
import { activeOptOuts } from '../consent/postgres.ts';
import type { Pg } from '../db/postgres/pool.ts';
import * as records from '../subscribers/records/postgres.ts';
import { dayAgo, overLimits, type Queued } from './queue.ts';
import type { Notice, NoticeKind } from './repo.ts';
import type { NoticeStore } from './store.ts';

const COLUMNS = `id, subscriber_id AS "subscriberId", email, kind, status, attempts, next_attempt_at AS "nextAttemptAt",
  smtp_code AS "smtpCode", smtp_response AS "smtpResponse", created_at AS "createdAt", sent_at AS "sentAt"`;

const SQL_INSERT = `INSERT INTO notices (subscriber_id, email, kind, created_at) VALUES ($1, $2, $3, $4) RETURNING id`;

// The per-address limits: emails of the last day, and the newest one still waiting or sent.
const SQL_RECENT = `
  SELECT count(*)::int AS day, max(CASE WHEN status <> 'failed' THEN created_at END) AS "lastLive"
  FROM notices WHERE lower(email) = lower($1) AND created_at > $2`;

const SQL_OPEN_FOR = `
  SELECT id FROM notices WHERE lower(email) = lower($1) AND kind = $2 AND status IN ('planned', 'retry') ORDER BY id DESC LIMIT 1`;

// `AND status IN (…)` is the compare-and-set; $4 (force) takes a retry before its time.
const SQL_CLAIM = `
  UPDATE notices SET status = 'sending', claimed_by = $2, claimed_at = $3
  WHERE id = $1 AND (status = 'planned' OR (status = 'retry' AND ($4 OR next_attempt_at <= $3)))
  RETURNING ${COLUMNS}`;

const SQL_SETTLE = `
  UPDATE notices SET status = $3, attempts = attempts + 1, next_attempt_at = $4, smtp_code = $5, smtp_response = $6,
    sent_at = $7, claimed_by = NULL
  WHERE id = $1 AND status = 'sending' AND claimed_by = $2`;

const SQL_RECOVER = `
  UPDATE notices SET status = 'unknown', smtp_response = 'outcome unknown: in flight when its process stopped'
  WHERE status = 'sending' AND claimed_at < $1`;

const SQL_DUE = `SELECT id FROM notices WHERE status = 'planned' OR (status = 'retry' AND next_attempt_at <= $1) ORDER BY id LIMIT $2`;
const SQL_NEXT_RETRY = `SELECT min(next_attempt_at) AS at FROM notices WHERE status = 'retry'`;
const SQL_TOPIC_COUNT = `SELECT count(*)::int AS n FROM topics WHERE subscriber_id = $1`;

/**
 * Writes the notice (inside the caller's transaction, which holds the address's advisory lock), or
 * answers 'throttled'; an email of the same kind still waiting is reused, as on SQLite.
 */
export async function queueNoticePg(c: Pg, n: { subscriberId: number; email: string; kind: NoticeKind; now: Date }): Promise<Queued> {
  const open = (await c.query<{ id: number }>(SQL_OPEN_FOR, [n.email, n.kind])).rows[0];
  if (open) return { id: open.id, reused: true };
  const recent = (await c.query<{ day: number; lastLive: string | null }>(SQL_RECENT, [n.email, dayAgo(n.now)])).rows[0]!;
  if (overLimits(recent, n.now)) return 'throttled';
  const id = (await c.query<{ id: number }>(SQL_INSERT, [n.subscriberId, n.email, n.kind, n.now.toISOString()])).rows[0]!.id;
  return { id, reused: false };
}

/** The last notice of a subscriber (why a waited-for email failed). */
export async function lastNoticePg(c: Pg, subscriberId: number): Promise<Notice | undefined> {
  return (await noticesOfPg(c, subscriberId, 1))[0];
}

/** A subscriber's last notices, newest first (the console's subscriber page). */
export async function noticesOfPg(c: Pg, subscriberId: number, limit = 5): Promise<Notice[]> {
  return (await c.query<Notice>(`SELECT ${COLUMNS} FROM notices WHERE subscriber_id = $1 ORDER BY id DESC LIMIT $2`, [subscriberId, limit])).rows;
}

export function postgresNoticeStore(pool: Pg): NoticeStore {
  return {
    claim: async (id, claimant, now, force) => (await pool.query<Notice>(SQL_CLAIM, [id, claimant, now, force])).rows[0],
    settle: async (id, claimant, o) =>
      ((await pool.query(SQL_SETTLE, [id, claimant, o.status, o.nextAttemptAt, o.code, o.response, o.sentAt])).rowCount ?? 0) > 0,
    recover: async (before) => (await pool.query(SQL_RECOVER, [before])).rowCount ?? 0,
    due: async (now, limit) => (await pool.query<{ id: number }>(SQL_DUE, [now, limit])).rows.map((r) => r.id),
    nextRetry: async () => (await pool.query<{ at: string | null }>(SQL_NEXT_RETRY)).rows[0]?.at ?? null,
    subscriber: (id) => records.findSubscriberById(pool, id),
    activeOptOuts: (email) => activeOptOuts(pool, email),
    resubscribeTopics: async (id) => (await records.findResubscribeRequest(pool, id))?.topics,
    topicCount: async (id) => (await pool.query<{ n: number }>(SQL_TOPIC_COUNT, [id])).rows[0]!.n,
  };
}
