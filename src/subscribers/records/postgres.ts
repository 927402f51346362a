// Subscribers, their topics and the queries behind them on PostgreSQL: the same named statements as
// repo.ts (SQLite), in PostgreSQL's dialect. Addresses compare case-insensitively through lower(email)
// (the subscribers_email unique index), as SQLite's COLLATE NOCASE column does. Callers own transactions.
import type pg from 'pg';
import { inTransaction, type Pg } from '../../db/postgres/pool.ts';
import { unknownExample } from '../../match/like/like.ts';
import { missingExamplesPg } from '../../match/postgres/like-examples.ts';
import type { Frequency, SubscriberStatus, Topic } from '../../types.ts';
import type { LearningPrefs } from './learning-prefs.ts';
import { topicChanges, type DesiredTopic } from './topic-changes.ts';
import { hardFailuresOf, newestSentJoin, watermarkOf } from './postgres-delivered.ts';
import type { OptOutReason, ResubscribeRequest, SubscriberPrefs, SubscriberRecord } from './repo.ts';

const SUBSCRIBER_COLUMNS = `id, email, status, token_salt AS "tokenSalt", timezone, delivery_hour AS "deliveryHour", frequency,
  weekly_day AS "weeklyDay", paused_until AS "pausedUntil", ${watermarkOf('s', 'ns')} AS watermark, last_slot AS "lastSlot",
  ${hardFailuresOf('s', 'ns')} AS "hardFailures", created_at AS "createdAt", confirmed_at AS "confirmedAt", confirm_sent_at AS "confirmSentAt"`;
/** Subscribers with their newest sent row, which their watermark and failure streak are read with (postgres-delivered.ts). */
const SUBSCRIBERS = `subscribers s ${newestSentJoin('s', 'ns')}`;

const SQL_SUBSCRIBER_BY_ID = `SELECT ${SUBSCRIBER_COLUMNS} FROM ${SUBSCRIBERS} WHERE id = $1`;
const SQL_SUBSCRIBER_BY_EMAIL = `SELECT ${SUBSCRIBER_COLUMNS} FROM ${SUBSCRIBERS} WHERE lower(email) = lower($1)`;

// A new address starts pending: nothing is sent to it until it confirms.
const SQL_INSERT_SUBSCRIBER = `
  INSERT INTO subscribers (email, status, token_salt, timezone, delivery_hour, frequency, created_at)
  VALUES ($1, 'pending', $2, $3, $4, $5, $6) RETURNING id`;

const SQL_UPDATE_SUBSCRIBE_PREFS = `UPDATE subscribers SET timezone = $2, delivery_hour = $3, frequency = $4 WHERE id = $1`;

const SQL_SAVE_RESUBSCRIBE = `
  INSERT INTO resubscribe_requests (subscriber_id, topics, timezone, delivery_hour, frequency, requested_at)
  VALUES ($1, $2, $3, $4, $5, $6)
  ON CONFLICT (subscriber_id) DO UPDATE SET topics = excluded.topics, timezone = excluded.timezone,
    delivery_hour = excluded.delivery_hour, frequency = excluded.frequency, requested_at = excluded.requested_at`;
const SQL_RESUBSCRIBE_REQUEST = `
  SELECT topics, timezone, delivery_hour AS "deliveryHour", frequency, requested_at AS "requestedAt"
  FROM resubscribe_requests WHERE subscriber_id = $1`;
const SQL_DELETE_RESUBSCRIBE = `DELETE FROM resubscribe_requests WHERE subscriber_id = $1`;

// As SQLite's: the first digest holds the papers of the last day of ingest (never lowered on a re-confirm).
// One subscriber (`id = $1`) or a set of them (the import's chunk: `id = ANY($1::bigint[])`).
const SQL_UPDATE_CONFIRM = (which: string) => `
  UPDATE subscribers SET
    status = 'confirmed',
    confirmed_at = CASE WHEN status = 'confirmed' THEN confirmed_at ELSE $2 END,
    unsubscribed_at = NULL, suppressed_at = NULL, opt_out_reason = NULL, opt_out_detail = NULL, hard_failures = 0,
    watermark = greatest(watermark, coalesce((
      SELECT max(p.id) FROM papers p
      WHERE p.created_at <= to_char((SELECT max(created_at) FROM papers)::timestamptz AT TIME ZONE 'UTC' - interval '1 day',
                                    'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')), 0))
  WHERE ${which}`;
const SQL_CONFIRM_ONE = SQL_UPDATE_CONFIRM('id = $1');
const SQL_CONFIRM_SET = SQL_UPDATE_CONFIRM('id = ANY ($1::bigint[])');

// The opt-out history's trigger records it (consent_events).
const SQL_UPDATE_UNSUBSCRIBE = `
  UPDATE subscribers SET status = 'unsubscribed', unsubscribed_at = $2, opt_out_reason = $3, opt_out_detail = $4
  WHERE id = $1 AND status <> 'unsubscribed'`;

// The operator's suppression (repo.ts SQL_SUPPRESS); the trigger records it in the opt-out history.
const SQL_SUPPRESS = `
  UPDATE subscribers SET status = 'suppressed', suppressed_at = $2, opt_out_reason = $3, opt_out_detail = $4
  WHERE id = $1 AND status IN ('confirmed', 'pending')`;

// The operator lifts an opt-out (repo.ts SQL_LIFT_OPT_OUT): confirmed when it had confirmed before, else pending.
const SQL_LIFT_OPT_OUT = `
  UPDATE subscribers SET
    status = CASE WHEN confirmed_at IS NOT NULL THEN 'confirmed' ELSE 'pending' END,
    unsubscribed_at = NULL, suppressed_at = NULL, hard_failures = 0, opt_out_reason = NULL, opt_out_detail = NULL
  WHERE id = $1 AND status IN ('unsubscribed', 'suppressed')
  RETURNING status`;

// Topics, digests, bounce reports and the rest go with it (ON DELETE CASCADE); consent_events stays, by address.
const SQL_DELETE_SUBSCRIBER = `DELETE FROM subscribers WHERE id = $1`;

// One page of every subscriber, oldest first (`digest subscribers`), keyset on id.
const SQL_SUBSCRIBERS_PAGE = `SELECT ${SUBSCRIBER_COLUMNS} FROM ${SUBSCRIBERS} WHERE id > $1 ORDER BY id LIMIT $2`;

const SQL_UPDATE_PREFERENCES = `
  UPDATE subscribers SET timezone = $2, delivery_hour = $3, frequency = $4, weekly_day = $5, paused_until = $6 WHERE id = $1`;

const SQL_LEARNING_PREFS = `SELECT max_papers AS "maxPapers", suggestions, model_only AS "modelOnly" FROM subscribers WHERE id = $1`;
const SQL_SET_LEARNING_PREFS = `UPDATE subscribers SET max_papers = $2, suggestions = $3, model_only = $4 WHERE id = $1`;
const SQL_FEED_SALT = `SELECT feed_salt FROM subscribers WHERE id = $1`;

const SQL_TOPICS = `
  SELECT id, subscriber_id AS "subscriberId", query_id AS "queryId", text, muted, position
  FROM topics WHERE subscriber_id = $1 ORDER BY position, id`;
const SQL_UPDATE_TOPIC = `UPDATE topics SET text = $2, position = $3, muted = $4 WHERE id = $1`;
const SQL_INSERT_TOPIC = `INSERT INTO topics (subscriber_id, query_id, text, muted, position) VALUES ($1, $2, $3, $4, $5)`;
const SQL_DELETE_TOPIC = `DELETE FROM topics WHERE id = $1 AND subscriber_id = $2`;
const SQL_UPDATE_TOPIC_MUTED = `UPDATE topics SET muted = $3 WHERE id = $2 AND subscriber_id = $1`;

// A distinct query, one row whoever typed it first (matcher.ts ensureQuery on SQLite).
const SQL_INSERT_QUERY = `
  INSERT INTO queries (fts, match_expr, min_upvotes) VALUES ($1, $2, $3) ON CONFLICT (fts) DO NOTHING`;
// FOR KEY SHARE until the caller's transaction ends: the upkeep's removal of unused queries (match/postgres/
// unused.ts, SKIP LOCKED) passes over a query while a topic is being saved on it.
const SQL_QUERY_ID = `SELECT id FROM queries WHERE fts = $1 FOR KEY SHARE`;
/**
 * A like: query whose terms are not chosen yet (like_corpus NULL; like_self 0 marks it a like: query): the
 * next matching run chooses them on the whole corpus (match/postgres/match.ts), where SQLite chooses them
 * when the topic is saved (the door has no index of the papers).
 */
const SQL_INSERT_LIKE_QUERY = `
  INSERT INTO queries (fts, match_expr, min_upvotes, like_self, like_corpus) VALUES ($1, NULL, $2, 0, NULL) ON CONFLICT (fts) DO NOTHING`;

/** ensureQuery for many parsed topics at once (the import's): inserted in key order, so two imports never deadlock. */
const SQL_INSERT_QUERIES = `
  INSERT INTO queries (fts, match_expr, min_upvotes, like_self, like_corpus)
  SELECT u.fts, u.match_expr, u.min_upvotes, u.like_self, NULL
  FROM unnest($1::text[], $2::text[], $3::int[], $4::float8[]) AS u (fts, match_expr, min_upvotes, like_self)
  ORDER BY u.fts
  ON CONFLICT (fts) DO NOTHING`;
const SQL_QUERY_IDS = `SELECT id, fts FROM queries WHERE fts = ANY ($1::text[]) FOR KEY SHARE`;

// The ids a chunk's topics will name, held FOR KEY SHARE until the chunk commits (the upkeep's removal skips
// them); an id missing from the answer was removed as unused since it was saved.
const SQL_KEEP_QUERIES = `SELECT id FROM queries WHERE id = ANY ($1::bigint[]) ORDER BY id FOR KEY SHARE`;

/** Of `ids`, those still there, each held FOR KEY SHARE until the caller's transaction ends. */
export async function keepQueries(c: Pg, ids: readonly number[]): Promise<Set<number>> {
  return new Set((await c.query<{ id: string | number }>(SQL_KEEP_QUERIES, [ids])).rows.map((r) => Number(r.id)));
}

export async function findSubscriberById(c: Pg, id: number): Promise<SubscriberRecord | undefined> {
  return (await c.query<SubscriberRecord>(SQL_SUBSCRIBER_BY_ID, [id])).rows[0];
}

export async function findSubscriberByEmail(c: Pg, email: string): Promise<SubscriberRecord | undefined> {
  return (await c.query<SubscriberRecord>(SQL_SUBSCRIBER_BY_EMAIL, [email])).rows[0];
}

export async function insertSubscriber(c: Pg, s: SubscriberPrefs & { email: string; salt: string; createdAt: string }): Promise<number> {
  const r = await c.query<{ id: number }>(SQL_INSERT_SUBSCRIBER, [s.email, s.salt, s.timezone, s.deliveryHour, s.frequency, s.createdAt]);
  return r.rows[0]!.id;
}

export async function updateSubscribePrefs(c: Pg, id: number, p: SubscriberPrefs): Promise<void> {
  await c.query(SQL_UPDATE_SUBSCRIBE_PREFS, [id, p.timezone, p.deliveryHour, p.frequency]);
}

export async function saveResubscribeRequest(c: Pg, id: number, r: ResubscribeRequest): Promise<void> {
  await c.query(SQL_SAVE_RESUBSCRIBE, [id, JSON.stringify(r.topics), r.timezone, r.deliveryHour, r.frequency, r.requestedAt]);
}

export async function findResubscribeRequest(c: Pg, id: number): Promise<ResubscribeRequest | undefined> {
  const r = (await c.query<Omit<ResubscribeRequest, 'topics'> & { topics: string }>(SQL_RESUBSCRIBE_REQUEST, [id])).rows[0];
  return r && { ...r, frequency: r.frequency as Frequency, topics: JSON.parse(r.topics) as string[] };
}

export async function deleteResubscribeRequest(c: Pg, id: number): Promise<void> {
  await c.query(SQL_DELETE_RESUBSCRIBE, [id]);
}

export async function markConfirmed(c: Pg, id: number, now: string): Promise<void> {
  await c.query(SQL_CONFIRM_ONE, [id, now]);
}

/** markConfirmed for a set of subscribers in one statement (the import's chunk). */
export async function markConfirmedSet(c: Pg, ids: readonly number[], now: string): Promise<void> {
  if (ids.length > 0) await c.query(SQL_CONFIRM_SET, [ids, now]);
}

/** True when the subscriber was not already unsubscribed. */
export async function markUnsubscribed(c: Pg, id: number, now: string, reason: OptOutReason): Promise<boolean> {
  return ((await c.query(SQL_UPDATE_UNSUBSCRIBE, [id, now, reason.kind, reason.detail ?? null])).rowCount ?? 0) > 0;
}

/** True when the subscriber was confirmed or pending (now suppressed). */
export async function markSuppressed(c: Pg, id: number, now: string, reason: OptOutReason): Promise<boolean> {
  return ((await c.query(SQL_SUPPRESS, [id, now, reason.kind, reason.detail ?? null])).rowCount ?? 0) > 0;
}

/** The status the lift left, or undefined when the row had not left. */
export async function liftOptOutStatus(c: Pg, id: number): Promise<SubscriberStatus | undefined> {
  return (await c.query<{ status: SubscriberStatus }>(SQL_LIFT_OPT_OUT, [id])).rows[0]?.status;
}

export async function deleteSubscriberRow(c: Pg, id: number): Promise<boolean> {
  return ((await c.query(SQL_DELETE_SUBSCRIBER, [id])).rowCount ?? 0) > 0;
}

export async function subscribersAfter(c: Pg, afterId: number, limit: number): Promise<SubscriberRecord[]> {
  return (await c.query<SubscriberRecord>(SQL_SUBSCRIBERS_PAGE, [afterId, limit])).rows;
}

export async function updatePreferenceColumns(
  c: Pg,
  id: number,
  p: SubscriberPrefs & { weeklyDay: number; pausedUntil: string | null },
): Promise<void> {
  await c.query(SQL_UPDATE_PREFERENCES, [id, p.timezone, p.deliveryHour, p.frequency, p.weeklyDay, p.pausedUntil]);
}

export async function getLearningPrefs(c: Pg, id: number): Promise<LearningPrefs> {
  const r = (await c.query<{ maxPapers: number | null; suggestions: number; modelOnly: number }>(SQL_LEARNING_PREFS, [id])).rows[0];
  return { maxPapers: r?.maxPapers ?? null, suggestions: (r?.suggestions ?? 1) === 1, modelOnly: r?.modelOnly === 1 };
}

export async function setLearningPrefs(c: Pg, id: number, p: LearningPrefs): Promise<void> {
  await c.query(SQL_SET_LEARNING_PREFS, [id, p.maxPapers, p.suggestions ? 1 : 0, p.modelOnly ? 1 : 0]);
}

/** The feed token's subject (feed/feed-link.ts feedSubject on SQLite). */
export async function feedSalt(c: Pg, id: number): Promise<string | null> {
  return (await c.query<{ feed_salt: string | null }>(SQL_FEED_SALT, [id])).rows[0]?.feed_salt ?? null;
}

export async function listTopics(c: Pg, subscriberId: number): Promise<Topic[]> {
  const rows = (await c.query<Omit<Topic, 'muted'> & { muted: number }>(SQL_TOPICS, [subscriberId])).rows;
  return rows.map((r) => ({ ...r, muted: r.muted === 1 }));
}

/** repo.ts replaceTopics, the same changes (topicChanges) written to PostgreSQL. */
export async function replaceTopics(c: Pg, subscriberId: number, desired: DesiredTopic[]): Promise<void> {
  for (const t of topicChanges(await listTopics(c, subscriberId), desired)) {
    if (t.kind === 'update') await c.query(SQL_UPDATE_TOPIC, [t.id, t.text, t.position, t.muted ? 1 : 0]);
    else if (t.kind === 'insert') await c.query(SQL_INSERT_TOPIC, [subscriberId, t.queryId, t.text, t.muted ? 1 : 0, t.position]);
    else await c.query(SQL_DELETE_TOPIC, [t.id, subscriberId]);
  }
}

export async function setTopicMuted(c: Pg, subscriberId: number, topicId: number, muted: boolean): Promise<boolean> {
  return ((await c.query(SQL_UPDATE_TOPIC_MUTED, [subscriberId, topicId, muted ? 1 : 0])).rowCount ?? 0) > 0;
}

/** The query row of a parsed topic; a like: topic's examples must be known (looked up before: the door's prepareExamples). */
export async function ensureQuery(c: Pg, q: { fts: string; match: string | null; minUpvotes: number; like?: string[] | null }): Promise<number> {
  if (q.like) {
    const missing = await missingExamplesPg(c, q.like);
    if (missing.length > 0) throw unknownExample(missing[0]!);
  }
  // Again when the row went between the two statements (the upkeep removed it as unused): then it is new.
  for (;;) {
    if (q.like) await c.query(SQL_INSERT_LIKE_QUERY, [q.fts, q.minUpvotes]);
    else await c.query(SQL_INSERT_QUERY, [q.fts, q.match === q.fts ? null : q.match, q.minUpvotes]);
    const row = (await c.query<{ id: number }>(SQL_QUERY_ID, [q.fts])).rows[0];
    if (row) return row.id;
  }
}

/**
 * ensureQuery for a set of parsed topics, in two statements: a like: topic as SQL_INSERT_LIKE_QUERY saves it
 * (its examples checked by the caller first: operator/postgres/import.ts), the others as SQL_INSERT_QUERY.
 */
export async function ensureQueries(c: Pg, qs: ReadonlyArray<{ fts: string; match: string | null; minUpvotes: number; like?: string[] | null }>): Promise<Map<string, number>> {
  const ids = new Map<string, number>();
  const isLike = (q: (typeof qs)[number]) => q.like != null;
  // Again for the rows that went between the two statements (the upkeep removed them as unused).
  for (let todo = qs; todo.length > 0; todo = todo.filter((q) => !ids.has(q.fts))) {
    await c.query(SQL_INSERT_QUERIES, [
      todo.map((q) => q.fts),
      todo.map((q) => (isLike(q) || q.match === q.fts ? null : q.match)),
      todo.map((q) => q.minUpvotes),
      todo.map((q) => (isLike(q) ? 0 : null)),
    ]);
    for (const r of (await c.query<{ id: string | number; fts: string }>(SQL_QUERY_IDS, [todo.map((q) => q.fts)])).rows) ids.set(r.fts, Number(r.id));
  }
  return ids;
}

/**
 * One transaction holding the address's advisory lock: two instances taking requests for one address
 * (a double click through a load balancer) write one after the other, as SQLite's BEGIN IMMEDIATE does,
 * so the per-address email limits count every email.
 */
export function forAddress<T>(pool: pg.Pool, email: string, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  return inTransaction(pool, async (c) => {
    await c.query(`SELECT pg_advisory_xact_lock(hashtextextended(lower($1), 0))`, [email]);
    return fn(c);
  });
}
