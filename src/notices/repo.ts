// The notices table (migration 011): confirmation and "already subscribed" emails, one row per email,
// written before it is sent and moved through its states by compare-and-set, like the digest ledger.
//   planned --claim--> sending --> sent | retry | failed | unknown
import type { Db } from '../db/open.ts';
import { statement } from '../db/statements.ts';

export type NoticeKind = 'confirm' | 'already-subscribed';
export type NoticeStatus = 'planned' | 'sending' | 'retry' | 'sent' | 'failed' | 'unknown';

export interface Notice {
  id: number;
  subscriberId: number | null;
  email: string;
  kind: NoticeKind;
  status: NoticeStatus;
  attempts: number;
  nextAttemptAt: string | null;
  smtpCode: number | null;
  smtpResponse: string | null;
  createdAt: string;
  sentAt: string | null;
}

const COLUMNS = `id, subscriber_id AS subscriberId, email, kind, status, attempts, next_attempt_at AS nextAttemptAt,
  smtp_code AS smtpCode, smtp_response AS smtpResponse, created_at AS createdAt, sent_at AS sentAt`;

const SQL_INSERT = `
  INSERT INTO notices (subscriber_id, email, kind, created_at) VALUES (:subscriberId, :email, :kind, :now) RETURNING id`;

// The per-address limits: emails of the last day, and the newest one still waiting or sent.
const SQL_RECENT = `
  SELECT count(*) AS day, max(CASE WHEN status <> 'failed' THEN created_at END) AS lastLive
  FROM notices WHERE email = :email AND created_at > :dayAgo`;

// An email of this kind for this address not yet sent (planned or waiting for a retry).
const SQL_OPEN_FOR = `
  SELECT id FROM notices WHERE email = :email AND kind = :kind AND status IN ('planned', 'retry') ORDER BY id DESC LIMIT 1`;

// Claim one row: `AND status IN (…)` is the compare-and-set. `:force` takes a retry before its time
// (the person asked again, or the CLI waits for its own email).
const SQL_CLAIM = `
  UPDATE notices SET status = 'sending', claimed_by = :claimant, claimed_at = :now
  WHERE id = :id AND (status = 'planned' OR (status = 'retry' AND (:force = 1 OR next_attempt_at <= :now)))
  RETURNING ${COLUMNS}`;

// Due rows, oldest first (notices_open).
const SQL_DUE = `
  SELECT id FROM notices WHERE status = 'planned' OR (status = 'retry' AND next_attempt_at <= ?) ORDER BY id LIMIT ?`;

const SQL_NEXT_RETRY = `SELECT min(next_attempt_at) AS at FROM notices WHERE status = 'retry'`;

const SQL_SETTLE = `
  UPDATE notices SET status = :status, attempts = attempts + 1, next_attempt_at = :nextAttemptAt,
    smtp_code = :code, smtp_response = :response, sent_at = :sentAt, claimed_by = NULL
  WHERE id = :id AND status = 'sending' AND claimed_by = :claimant`;

// Rows left 'sending' longer than any send takes (their process stopped): the relay may have taken them,
// so never resent, as digests.
const SQL_RECOVER = `
  UPDATE notices SET status = 'unknown', smtp_response = 'outcome unknown: in flight when its process stopped'
  WHERE status = 'sending' AND claimed_at < ?`;

const SQL_LAST_FOR = `SELECT ${COLUMNS} FROM notices WHERE subscriber_id = ? ORDER BY id DESC LIMIT ?`;

const SQL_COUNTS_SINCE = `SELECT status, count(*) AS n FROM notices WHERE created_at >= ? GROUP BY status`;

// The last failures (console, digest status).
const SQL_LAST_FAILURES = `
  SELECT ${COLUMNS} FROM notices WHERE status IN ('failed', 'retry') AND smtp_response IS NOT NULL
  ORDER BY id DESC LIMIT ?`;

export function insertNotice(db: Db, n: { subscriberId: number; email: string; kind: NoticeKind; now: string }): number {
  return statement<Record<string, unknown>, { id: number }>(db, SQL_INSERT).get(n)!.id;
}

export function recentNotices(db: Db, email: string, dayAgo: string): { day: number; lastLive: string | null } {
  return statement<Record<string, unknown>, { day: number; lastLive: string | null }>(db, SQL_RECENT).get({ email, dayAgo })!;
}

export function openNoticeFor(db: Db, email: string, kind: NoticeKind): number | undefined {
  return statement<Record<string, unknown>, { id: number }>(db, SQL_OPEN_FOR).get({ email, kind })?.id;
}

export function claimNotice(db: Db, id: number, claimant: string, now: string, force: boolean): Notice | undefined {
  return statement<Record<string, unknown>, Notice>(db, SQL_CLAIM).get({ id, claimant, now, force: force ? 1 : 0 });
}

export function dueNotices(db: Db, now: string, limit: number): number[] {
  return statement<[string, number], { id: number }>(db, SQL_DUE).all(now, limit).map((r) => r.id);
}

export function nextNoticeRetry(db: Db): string | null {
  return statement<[], { at: string | null }>(db, SQL_NEXT_RETRY).get()?.at ?? null;
}

export interface NoticeOutcome {
  status: 'sent' | 'retry' | 'failed' | 'unknown';
  nextAttemptAt: string | null;
  code: number | null;
  response: string | null;
  sentAt: string | null;
}

export function settleNotice(db: Db, id: number, claimant: string, o: NoticeOutcome): boolean {
  return statement(db, SQL_SETTLE).run({ id, claimant, ...o }).changes > 0;
}

/** Rows claimed before `before` and still 'sending': 'unknown'. */
export function recoverNotices(db: Db, before: string): number {
  return statement(db, SQL_RECOVER).run(before).changes;
}

export function noticesOf(db: Db, subscriberId: number, limit = 5): Notice[] {
  return statement<[number, number], Notice>(db, SQL_LAST_FOR).all(subscriberId, limit);
}

export function noticeCounts(db: Db, sinceIso = ''): Record<NoticeStatus, number> {
  const out: Record<NoticeStatus, number> = { planned: 0, sending: 0, retry: 0, sent: 0, failed: 0, unknown: 0 };
  for (const r of statement<[string], { status: NoticeStatus; n: number }>(db, SQL_COUNTS_SINCE).all(sinceIso)) out[r.status] = r.n;
  return out;
}

export function lastNoticeFailures(db: Db, limit = 10): Notice[] {
  return statement<[number], Notice>(db, SQL_LAST_FAILURES).all(limit);
}
