// The opt-out history of an address (consent_events, migration 011): when and why it left, and who
// reversed it. Written by the database's triggers whenever a subscriber's status becomes unsubscribed or
// suppressed (whichever code path changed it), and here for reversals. Keyed by the normalised address,
// so it outlives a deleted subscriber row. Read by every path that could mail an address again.
import type { Db } from '../db/open.ts';
import { statement } from '../db/statements.ts';
import type { OptOutKind } from '../types.ts';

export type { OptOutKind };
/** Every event of the history: an opt-out, or its reversal. */
export type ConsentKind = OptOutKind | 'lifted' | 'reconfirmed';

export interface ConsentEvent {
  id: number;
  email: string;
  kind: ConsentKind;
  /** The status the opt-out left the subscriber in; null for reversals. */
  status: 'unsubscribed' | 'suppressed' | null;
  detail: string;
  at: string;
}

const COLUMNS = `id, email, kind, status, detail, at`;

// The opt-outs after the address's last reversal (lifted by the operator, or reconfirmed by the person).
const SQL_ACTIVE = `
  SELECT ${COLUMNS} FROM consent_events
  WHERE email = :email AND kind NOT IN ('lifted', 'reconfirmed')
    AND id > coalesce((SELECT max(id) FROM consent_events WHERE email = :email AND kind IN ('lifted', 'reconfirmed')), 0)
  ORDER BY id`;

// One address's whole history, newest first.
const SQL_HISTORY = `SELECT ${COLUMNS} FROM consent_events WHERE email = ? ORDER BY id DESC LIMIT ?`;

const SQL_INSERT = `
  INSERT INTO consent_events (email, kind, status, detail, at) VALUES (:email, :kind, :status, :detail, :at)`;

// Addresses whose latest event is an opt-out (the console's list), newest first, keyset on id. One
// indexed max() per candidate row (consent_events_email).
const SQL_LIST_ACTIVE = `
  SELECT e.id, e.email, e.kind, e.status, e.detail, e.at, s.id AS subscriberId
  FROM consent_events e LEFT JOIN subscribers s ON s.email = e.email
  WHERE e.id < :before AND e.kind NOT IN ('lifted', 'reconfirmed')
    AND e.id = (SELECT max(x.id) FROM consent_events x WHERE x.email = e.email)
  ORDER BY e.id DESC LIMIT :limit`;

// Opt-outs recorded since a time, by kind (digest status, /metrics with since = '').
const SQL_COUNTS_SINCE = `
  SELECT kind, count(*) AS n FROM consent_events WHERE at >= ? GROUP BY kind`;

export function activeOptOuts(db: Db, email: string): ConsentEvent[] {
  return statement<Record<string, unknown>, ConsentEvent>(db, SQL_ACTIVE).all({ email });
}

export function consentHistory(db: Db, email: string, limit = 50): ConsentEvent[] {
  return statement<[string, number], ConsentEvent>(db, SQL_HISTORY).all(email, limit);
}

export function recordConsentEvent(db: Db, e: Omit<ConsentEvent, 'id'>): void {
  statement(db, SQL_INSERT).run(e);
}

/**
 * Whether the person may reverse these opt-outs themselves, by a confirmation link they ask for on the
 * form: only when every one of them is their own unsubscribe. A complaint, a hard bounce or the
 * operator's suppression is never mailed because of a form (only the operator lifts those).
 */
export function personMayReverse(active: readonly ConsentEvent[]): boolean {
  return active.every((e) => e.kind === 'unsubscribe');
}

export interface OptOutListing extends ConsentEvent {
  /** The subscriber row, when the address still has one (the history outlives a delete). */
  subscriberId: number | null;
}

export function listOptOuts(db: Db, opts: { limit: number; before?: number | undefined }): OptOutListing[] {
  return statement<Record<string, unknown>, OptOutListing>(db, SQL_LIST_ACTIVE).all({
    limit: opts.limit,
    before: opts.before ?? Number.MAX_SAFE_INTEGER,
  });
}

export function optOutCounts(db: Db, sinceIso = ''): Record<ConsentKind, number> {
  const out: Record<ConsentKind, number> = { unsubscribe: 0, complaint: 0, 'hard-bounce': 0, operator: 0, lifted: 0, reconfirmed: 0 };
  for (const r of statement<[string], { kind: ConsentKind; n: number }>(db, SQL_COUNTS_SINCE).all(sinceIso)) out[r.kind] = r.n;
  return out;
}

/** "complaint on 2025-11-25" / "unsubscribe and complaint, last on …": for CLI lines and import reports. */
export function describeOptOuts(active: readonly ConsentEvent[]): string {
  const kinds = [...new Set(active.map((e) => e.kind))];
  const last = active[active.length - 1];
  return `${kinds.join(' and ')}${last ? ` on ${last.at.slice(0, 10)}` : ''}`;
}
