// Subscribers for PostgreSQL ledger tests and bench/pg-ledger.ts: n confirmed addresses s<i>@example.org,
// in one set-based statement, and one paper batch so an edition has something to cover.
import type pg from 'pg';

const SQL_SUBSCRIBERS = `
  INSERT INTO subscribers (email, status, token_salt, timezone, created_at, confirmed_at)
  SELECT 's' || i || '@example.org', 'confirmed', md5(i::text), 'UTC', $2, $2
  FROM generate_series(1, $1) AS i`;

export async function seedSubscribers(pool: pg.Pool, n: number, at = '2026-11-01T00:00:00.000Z'): Promise<void> {
  await pool.query(SQL_SUBSCRIBERS, [n, at]);
}
