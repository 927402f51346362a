// The opt-out history on PostgreSQL (history.ts is SQLite's): the same reading of consent_events, whose
// rows the subscribers trigger writes (db/migrations-pg/014_init.sql), keyed by lower(email).
import type { Pg } from '../db/postgres/pool.ts';
import type { ConsentEvent, OptOutListing } from './history.ts';

// The opt-outs after the address's last reversal (lifted by the operator, or reconfirmed by the person).
const SQL_ACTIVE = `
  SELECT id, email, kind, status, detail, at FROM consent_events
  WHERE lower(email) = lower($1) AND kind NOT IN ('lifted', 'reconfirmed')
    AND id > coalesce((SELECT max(id) FROM consent_events WHERE lower(email) = lower($1) AND kind IN ('lifted', 'reconfirmed')), 0)
  ORDER BY id`;

// SQL_ACTIVE for a set of addresses ($1) in one statement, each row keyed by the address as given; one
// index probe per address (the subquery's ORDER BY keeps it from being flattened into a hash join over the
// whole history, which the planner chose at 30k events).
const SQL_ACTIVE_SET = `
  SELECT u.e AS key, c.id, c.email, c.kind, c.status, c.detail, c.at
  FROM unnest($1::text[]) AS u (e), LATERAL (
    SELECT x.id, x.email, x.kind, x.status, x.detail, x.at FROM consent_events x
    WHERE lower(x.email) = lower(u.e) AND x.kind NOT IN ('lifted', 'reconfirmed')
      AND x.id > coalesce((SELECT max(y.id) FROM consent_events y WHERE lower(y.email) = lower(u.e) AND y.kind IN ('lifted', 'reconfirmed')), 0)
    ORDER BY x.id) c
  ORDER BY c.id`;

const SQL_INSERT = `INSERT INTO consent_events (email, kind, status, detail, at) VALUES ($1, $2, $3, $4, $5)`;

// One address's whole history, newest first.
const SQL_HISTORY = `SELECT id, email, kind, status, detail, at FROM consent_events WHERE lower(email) = lower($1) ORDER BY id DESC LIMIT $2`;

// Addresses whose latest event is an opt-out (the console's list, `digest opt-outs`), newest first, keyset
// on id; one indexed max() per candidate row (consent_events_email).
const SQL_LIST_ACTIVE = `
  SELECT e.id, e.email, e.kind, e.status, e.detail, e.at, s.id AS "subscriberId"
  FROM consent_events e LEFT JOIN subscribers s ON lower(s.email) = lower(e.email)
  WHERE e.id < $1 AND e.kind NOT IN ('lifted', 'reconfirmed')
    AND e.id = (SELECT max(x.id) FROM consent_events x WHERE lower(x.email) = lower(e.email))
  ORDER BY e.id DESC LIMIT $2`;

export async function activeOptOuts(c: Pg, email: string): Promise<ConsentEvent[]> {
  return (await c.query<ConsentEvent>(SQL_ACTIVE, [email])).rows;
}

/** activeOptOuts of each address of `emails` (keyed as given; an address without any is absent). */
export async function activeOptOutsOf(c: Pg, emails: readonly string[]): Promise<Map<string, ConsentEvent[]>> {
  const out = new Map<string, ConsentEvent[]>();
  for (const { key, ...e } of (await c.query<ConsentEvent & { key: string }>(SQL_ACTIVE_SET, [emails])).rows) {
    const list = out.get(key);
    if (list) list.push(e);
    else out.set(key, [e]);
  }
  return out;
}

export async function recordConsentEvent(c: Pg, e: Omit<ConsentEvent, 'id'>): Promise<void> {
  await c.query(SQL_INSERT, [e.email, e.kind, e.status, e.detail, e.at]);
}

export async function consentHistory(c: Pg, email: string, limit = 50): Promise<ConsentEvent[]> {
  return (await c.query<ConsentEvent>(SQL_HISTORY, [email, limit])).rows;
}

export async function listOptOuts(c: Pg, opts: { limit: number; before?: number | undefined }): Promise<OptOutListing[]> {
  return (await c.query<OptOutListing>(SQL_LIST_ACTIVE, [opts.before ?? Number.MAX_SAFE_INTEGER, opts.limit])).rows;
}
