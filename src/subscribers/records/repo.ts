// Subscribers and their topics: named SQL and the mapping from rows to domain types.
// Every statement is parameterised; callers own the transactions.
import { statement } from '../../db/statements.ts';
import type { Db } from '../../db/open.ts';
import type { Frequency, OptOutKind, Subscriber, SubscriberStatus, Topic } from '../../types.ts';
import type { LearningPrefs } from './learning-prefs.ts';
import { topicChanges, type DesiredTopic } from './topic-changes.ts';

interface SubscriberRow {
  id: number;
  email: string;
  status: SubscriberStatus;
  token_salt: string;
  timezone: string;
  delivery_hour: number;
  frequency: Frequency;
  weekly_day: number;
  paused_until: string | null;
  watermark: number;
  last_slot: string | null;
  hard_failures: number;
  confirm_sent_at: string | null;
  created_at: string;
  confirmed_at: string | null;
}

interface TopicRow {
  id: number;
  subscriber_id: number;
  query_id: number;
  text: string;
  muted: number;
  position: number;
}

/** A subscriber plus the one column only this module cares about. */
export interface SubscriberRecord extends Subscriber {
  confirmSentAt: string | null;
}

export interface SubscriberPrefs {
  timezone: string;
  deliveryHour: number;
  frequency: Frequency;
}

const SUBSCRIBER_COLUMNS = `id, email, status, token_salt, timezone, delivery_hour, frequency, weekly_day,
  paused_until, watermark, last_slot, hard_failures, confirm_sent_at, created_at, confirmed_at`;

// One subscriber by primary key.
const SQL_SUBSCRIBER_BY_ID = `SELECT ${SUBSCRIBER_COLUMNS} FROM subscribers WHERE id = ?`;

// One subscriber by address; the column is COLLATE NOCASE, so case differences find the same row.
const SQL_SUBSCRIBER_BY_EMAIL = `SELECT ${SUBSCRIBER_COLUMNS} FROM subscribers WHERE email = ?`;

// Every subscriber, oldest first (for `digest subscribers`).
const SQL_ALL_SUBSCRIBERS = `SELECT ${SUBSCRIBER_COLUMNS} FROM subscribers ORDER BY id`;

// A new address starts pending: nothing is sent to it until it confirms.
const SQL_INSERT_SUBSCRIBER = `
  INSERT INTO subscribers (email, status, token_salt, timezone, delivery_hour, frequency, created_at)
  VALUES (@email, 'pending', @salt, @timezone, @deliveryHour, @frequency, @createdAt)`;

// Delivery preferences given at subscribe time (pending subscribers only change these by re-subscribing).
const SQL_UPDATE_SUBSCRIBE_PREFS = `
  UPDATE subscribers SET timezone = @timezone, delivery_hour = @deliveryHour, frequency = @frequency
  WHERE id = @id`;

// The operator lifts an opt-out (consent/lift.ts records why): back to confirmed when the address had
// confirmed before, else pending (it then needs a confirmation like any new address).
const SQL_LIFT_OPT_OUT = `
  UPDATE subscribers SET
    status = CASE WHEN confirmed_at IS NOT NULL THEN 'confirmed' ELSE 'pending' END,
    unsubscribed_at = NULL, suppressed_at = NULL, hard_failures = 0, opt_out_reason = NULL, opt_out_detail = NULL
  WHERE id = ? AND status IN ('unsubscribed', 'suppressed')
  RETURNING status`;

// What an unsubscribed address asked for on the form, kept until the confirmation link is clicked.
const SQL_SAVE_RESUBSCRIBE = `
  INSERT INTO resubscribe_requests (subscriber_id, topics, timezone, delivery_hour, frequency, requested_at)
  VALUES (@id, @topics, @timezone, @deliveryHour, @frequency, @requestedAt)
  ON CONFLICT (subscriber_id) DO UPDATE SET topics = excluded.topics, timezone = excluded.timezone,
    delivery_hour = excluded.delivery_hour, frequency = excluded.frequency, requested_at = excluded.requested_at`;
const SQL_RESUBSCRIBE_REQUEST = `
  SELECT topics, timezone, delivery_hour AS deliveryHour, frequency, requested_at AS requestedAt
  FROM resubscribe_requests WHERE subscriber_id = ?`;
const SQL_DELETE_RESUBSCRIBE = `DELETE FROM resubscribe_requests WHERE subscriber_id = ?`;

// Confirmation. The watermark makes the first digest hold the papers of the last day of ingest: it is
// the last paper ingested 24 hours or more before the newest paper was (never lowered on a
// re-confirm). Ingest times, not batch dates: a batch with a wrong date cannot empty or flood it.
const SQL_UPDATE_CONFIRM = `
  UPDATE subscribers SET
    status = 'confirmed',
    confirmed_at = CASE WHEN status = 'confirmed' THEN confirmed_at ELSE @now END,
    unsubscribed_at = NULL,
    suppressed_at = NULL,
    opt_out_reason = NULL,
    opt_out_detail = NULL,
    hard_failures = 0,
    watermark = max(watermark, coalesce((
      SELECT max(p.id) FROM papers p
      WHERE p.created_at <= strftime('%Y-%m-%dT%H:%M:%fZ', (SELECT max(created_at) FROM papers), '-1 day')), 0))
  WHERE id = @id`;

// Unsubscribe takes effect at once: planners only pick confirmed subscribers. The reason (NULL: worked
// out by the trigger) goes into the opt-out history (migration 011's trigger).
const SQL_UPDATE_UNSUBSCRIBE = `
  UPDATE subscribers SET status = 'unsubscribed', unsubscribed_at = @now, opt_out_reason = @reason, opt_out_detail = @detail
  WHERE id = @id AND status <> 'unsubscribed'`;

// Hard bounce or the console's "suppress": no more mail to this address (one that already left stays
// as it is).
const SQL_SUPPRESS = `
  UPDATE subscribers SET status = 'suppressed', suppressed_at = @now, opt_out_reason = @reason, opt_out_detail = @detail
  WHERE id = @id AND status IN ('confirmed', 'pending')`;

// One more delivery failure (a 5xx answer at send time, or a soft bounce reported later); at the limit a
// confirmed address is suppressed. A delivered digest resets the counter (ledger/states.ts).
const SQL_COUNT_FAILURE = `
  UPDATE subscribers
  SET hard_failures = hard_failures + 1,
      status = CASE WHEN hard_failures + 1 >= @limit AND status = 'confirmed' THEN 'suppressed' ELSE status END,
      suppressed_at = CASE WHEN hard_failures + 1 >= @limit AND status = 'confirmed' THEN @now ELSE suppressed_at END,
      opt_out_reason = CASE WHEN hard_failures + 1 >= @limit AND status = 'confirmed' THEN 'hard-bounce' ELSE opt_out_reason END,
      opt_out_detail = CASE WHEN hard_failures + 1 >= @limit AND status = 'confirmed'
                            THEN (hard_failures + 1) || ' delivery failures in a row (5xx answers or soft bounces)' ELSE opt_out_detail END
  WHERE id = @id
  RETURNING status`;

// A delivered digest moves the subscriber's watermark and clears their failure streak.
const SQL_ADVANCE_WATERMARK = `
  UPDATE subscribers SET watermark = max(watermark, @toPaper), hard_failures = 0 WHERE id = @id`;

// `digest preview` (inside a savepoint it rolls back): the subscriber as if confirmed. (Whether today's
// slot has run is handled by previewing tomorrow's: render/preview.ts.)
const SQL_AS_IF_CONFIRMED = `UPDATE subscribers SET status = 'confirmed' WHERE id = ?`;

// Deleting a subscriber deletes their topics, ledger rows and bounce reports (ON DELETE CASCADE).
const SQL_DELETE_SUBSCRIBER = `DELETE FROM subscribers WHERE id = ?`;

// Everything the preferences page edits.
const SQL_UPDATE_PREFERENCES = `
  UPDATE subscribers SET timezone = @timezone, delivery_hour = @deliveryHour, frequency = @frequency,
    weekly_day = @weeklyDay, paused_until = @pausedUntil
  WHERE id = @id`;

const TOPIC_COLUMNS = `id, subscriber_id, query_id, text, muted, position`;

// A subscriber's topics in the order they typed them.
const SQL_TOPICS = `SELECT ${TOPIC_COLUMNS} FROM topics WHERE subscriber_id = ? ORDER BY position, id`;

// A kept topic: same query as before, possibly new wording, position or mute state.
const SQL_UPDATE_TOPIC = `UPDATE topics SET text = @text, position = @position, muted = @muted WHERE id = @id`;

// A new topic.
const SQL_INSERT_TOPIC = `
  INSERT INTO topics (subscriber_id, query_id, text, muted, position)
  VALUES (@subscriberId, @queryId, @text, @muted, @position)`;

// A topic the subscriber removed.
const SQL_DELETE_TOPIC = `DELETE FROM topics WHERE id = ? AND subscriber_id = ?`;

// Mute or unmute one topic of one subscriber (the subscriber id guards against another's topic id).
const SQL_UPDATE_TOPIC_MUTED = `UPDATE topics SET muted = @muted WHERE id = @topicId AND subscriber_id = @subscriberId`;

// Row -> domain type.
function toSubscriber(r: SubscriberRow): SubscriberRecord {
  return {
    id: r.id,
    email: r.email,
    status: r.status,
    tokenSalt: r.token_salt,
    timezone: r.timezone,
    deliveryHour: r.delivery_hour,
    frequency: r.frequency,
    weeklyDay: r.weekly_day,
    pausedUntil: r.paused_until,
    watermark: r.watermark,
    lastSlot: r.last_slot,
    hardFailures: r.hard_failures,
    createdAt: r.created_at,
    confirmedAt: r.confirmed_at,
    confirmSentAt: r.confirm_sent_at,
  };
}

function toTopic(r: TopicRow): Topic {
  return {
    id: r.id,
    subscriberId: r.subscriber_id,
    queryId: r.query_id,
    text: r.text,
    muted: r.muted === 1,
    position: r.position,
  };
}

export function findSubscriberById(db: Db, id: number): SubscriberRecord | undefined {
  const row = statement<[number], SubscriberRow>(db, SQL_SUBSCRIBER_BY_ID).get(id);
  return row && toSubscriber(row);
}

export function findSubscriberByEmail(db: Db, email: string): SubscriberRecord | undefined {
  const row = statement<[string], SubscriberRow>(db, SQL_SUBSCRIBER_BY_EMAIL).get(email);
  return row && toSubscriber(row);
}

/** Every subscriber, one row at a time (never the whole list in memory). */
export function* iterateSubscribers(db: Db): Generator<SubscriberRecord> {
  // Its own statement, not the per-connection one (db/statements.ts): a cached statement that is still
  // iterating is busy, and the caller may run other repo queries (even this one) between yields.
  for (const row of db.prepare<[], SubscriberRow>(SQL_ALL_SUBSCRIBERS).iterate()) yield toSubscriber(row);
}

export function insertSubscriber(
  db: Db,
  s: SubscriberPrefs & { email: string; salt: string; createdAt: string },
): number {
  const info = statement(db, SQL_INSERT_SUBSCRIBER).run(s);
  return Number(info.lastInsertRowid);
}

export function updateSubscribePrefs(db: Db, id: number, p: SubscriberPrefs): void {
  statement(db, SQL_UPDATE_SUBSCRIBE_PREFS).run({ id, ...p });
}

/** The operator's lift (consent/lift.ts); returns the new status, undefined when the row had not left. */
export function liftOptOutStatus(db: Db, id: number): SubscriberStatus | undefined {
  return statement<[number], { status: SubscriberStatus }>(db, SQL_LIFT_OPT_OUT).get(id)?.status;
}

export interface ResubscribeRequest extends SubscriberPrefs {
  /** The topics as typed (JSON in the table). */
  topics: string[];
  requestedAt: string;
}

export function saveResubscribeRequest(db: Db, id: number, r: ResubscribeRequest): void {
  statement(db, SQL_SAVE_RESUBSCRIBE).run({ id, ...r, topics: JSON.stringify(r.topics) });
}

export function findResubscribeRequest(db: Db, id: number): ResubscribeRequest | undefined {
  const r = statement<[number], Omit<ResubscribeRequest, 'topics'> & { topics: string }>(db, SQL_RESUBSCRIBE_REQUEST).get(id);
  return r && { ...r, topics: JSON.parse(r.topics) as string[] };
}

export function deleteResubscribeRequest(db: Db, id: number): void {
  statement(db, SQL_DELETE_RESUBSCRIBE).run(id);
}

export function markConfirmed(db: Db, id: number, now: string): void {
  statement(db, SQL_UPDATE_CONFIRM).run({ id, now });
}

/**
 * Why an address leaves, for its opt-out history (consent/history.ts). Omitted: the history's trigger
 * works it out (a complaint or bounce report of the same moment; else unsubscribe / hard bounce).
 */
export interface OptOutReason {
  kind: OptOutKind;
  detail?: string;
}

/** Returns true when the subscriber was not already unsubscribed. */
export function markUnsubscribed(db: Db, id: number, now: string, reason?: OptOutReason): boolean {
  return statement(db, SQL_UPDATE_UNSUBSCRIBE).run({ id, now, reason: reason?.kind ?? null, detail: reason?.detail ?? null }).changes > 0;
}

/** Returns true when the address was confirmed or pending (and is now suppressed). */
export function markSuppressed(db: Db, id: number, now: string, reason?: OptOutReason): boolean {
  return statement(db, SQL_SUPPRESS).run({ id, now, reason: reason?.kind ?? null, detail: reason?.detail ?? null }).changes > 0;
}

/** Counts one delivery failure; returns the status after it ('suppressed' at the limit), undefined when there is no such subscriber. */
export function countDeliveryFailure(db: Db, id: number, limit: number, now: string): SubscriberStatus | undefined {
  return statement<Record<string, unknown>, { status: SubscriberStatus }>(db, SQL_COUNT_FAILURE).get({ id, limit, now })?.status;
}

/** After a delivered digest (inside the ledger's transaction that marks it sent). */
export function advanceWatermark(db: Db, id: number, toPaper: number): void {
  statement(db, SQL_ADVANCE_WATERMARK).run({ id, toPaper });
}

/** For `digest preview` only, inside its savepoint (render/preview.ts rolls it back). */
export function markConfirmedForPreview(db: Db, id: number): void {
  statement(db, SQL_AS_IF_CONFIRMED).run(id);
}

export function deleteSubscriberRow(db: Db, id: number): boolean {
  return statement(db, SQL_DELETE_SUBSCRIBER).run(id).changes > 0;
}

export function updatePreferenceColumns(
  db: Db,
  id: number,
  p: SubscriberPrefs & { weeklyDay: number; pausedUntil: string | null },
): void {
  statement(db, SQL_UPDATE_PREFERENCES).run({ id, ...p });
}

export function listTopics(db: Db, subscriberId: number): Topic[] {
  return statement<[number], TopicRow>(db, SQL_TOPICS).all(subscriberId).map(toTopic);
}

export type { DesiredTopic } from './topic-changes.ts';

/**
 * Makes the subscriber's topics exactly `desired`, in that order. A topic whose query is unchanged keeps
 * its id (digests and mute links refer to topic ids); duplicates of one query keep the first.
 * Call inside a transaction.
 */
// The reader's learning preferences (migration 004's columns; see learning-prefs.ts).
const SQL_LEARNING_PREFS = `SELECT max_papers AS maxPapers, suggestions, model_only AS modelOnly FROM subscribers WHERE id = ?`;
const SQL_SET_LEARNING_PREFS = `UPDATE subscribers SET max_papers = @maxPapers, suggestions = @suggestions, model_only = @modelOnly WHERE id = @id`;

export function getLearningPrefs(db: Db, subscriberId: number): LearningPrefs {
  const r = statement<[number], { maxPapers: number | null; suggestions: number; modelOnly: number }>(db, SQL_LEARNING_PREFS).get(subscriberId);
  return { maxPapers: r?.maxPapers ?? null, suggestions: (r?.suggestions ?? 1) === 1, modelOnly: r?.modelOnly === 1 };
}

export function setLearningPrefs(db: Db, subscriberId: number, prefs: LearningPrefs): void {
  statement(db, SQL_SET_LEARNING_PREFS).run({ id: subscriberId, maxPapers: prefs.maxPapers, suggestions: prefs.suggestions ? 1 : 0, modelOnly: prefs.modelOnly ? 1 : 0 });
}

/** The topics of a subscriber who has none yet (the importer's new rows), in the order given, unmuted. */
export function insertNewTopics(db: Db, subscriberId: number, topics: ReadonlyArray<{ queryId: number; text: string }>): void {
  topics.forEach((t, position) => statement(db, SQL_INSERT_TOPIC).run({ subscriberId, queryId: t.queryId, text: t.text, muted: 0, position }));
}

export function replaceTopics(db: Db, subscriberId: number, desired: DesiredTopic[]): void {
  for (const c of topicChanges(listTopics(db, subscriberId), desired)) {
    if (c.kind === 'update') statement(db, SQL_UPDATE_TOPIC).run({ id: c.id, text: c.text, position: c.position, muted: c.muted ? 1 : 0 });
    else if (c.kind === 'insert') statement(db, SQL_INSERT_TOPIC).run({ subscriberId, queryId: c.queryId, text: c.text, muted: c.muted ? 1 : 0, position: c.position });
    else statement(db, SQL_DELETE_TOPIC).run(c.id, subscriberId);
  }
}

/** Returns false when the topic does not belong to the subscriber (or no longer exists). */
export function setTopicMuted(db: Db, subscriberId: number, topicId: number, muted: boolean): boolean {
  return statement(db, SQL_UPDATE_TOPIC_MUTED).run({ subscriberId, topicId, muted: muted ? 1 : 0 }).changes > 0;
}
