// The opt-out history on PostgreSQL (history.ts is SQLite's): the same reading of consent_events, whose
// rows the subscribers trigger writes (db/migrations-pg/014_init.sql), keyed by lower(email).
import type { Pg } from '../db/postgres/pool.ts';
import type { ConsentEvent } from './history.ts';

// The opt-outs after the address's last reversal (lifted by the operator, or reconfirmed by the person).
const SQL_ACTIVE = `
  SELECT id, email, kind, status, detail, at FROM consent_events
  WHERE lower(email) = lower($1) AND kind NOT IN ('lifted', 'reconfirmed')
    AND id > coalesce((SELECT max(id) FROM consent_events WHERE lower(email) = lower($1) AND kind IN ('lifted', 'reconfirmed')), 0)
  ORDER BY id`;

const SQL_INSERT = `INSERT INTO consent_events (email, kind, status, detail, at) VALUES ($1, $2, $3, $4, $5)`;

export async function activeOptOuts(c: Pg, email: string): Promise<ConsentEvent[]> {
  return (await c.query<ConsentEvent>(SQL_ACTIVE, [email])).rows;
}

export async function recordConsentEvent(c: Pg, e: Omit<ConsentEvent, 'id'>): Promise<void> {
  await c.query(SQL_INSERT, [e.email, e.kind, e.status, e.detail, e.at]);
}
