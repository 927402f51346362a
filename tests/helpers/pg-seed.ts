// Subscribers for PostgreSQL ledger tests and bench/pg-ledger.ts: n confirmed addresses s<i>@example.org,
// in one set-based statement; and papers for the rows the prototype planner (src/ledger/postgres/plan.ts)
// writes without any, so the worker has a real digest to render and send.
import type pg from 'pg';
import { packItems } from '../../src/ledger/index.ts';
import { watermarkExpr } from '../../src/subscribers/records/postgres-delivered.ts';

const SQL_SUBSCRIBERS = `
  INSERT INTO subscribers (email, status, token_salt, timezone, created_at, confirmed_at)
  SELECT 's' || i || '@example.org', 'confirmed', md5(i::text), 'UTC', $2, $2
  FROM generate_series(1, $1) AS i`;

export async function seedSubscribers(pool: pg.Pool, n: number, at = '2026-11-01T00:00:00.000Z'): Promise<void> {
  await pool.query(SQL_SUBSCRIBERS, [n, at]);
}

const SQL_BATCH = `
  INSERT INTO batches (source, date, content_hash, paper_count, new_paper_count, ingested_at)
  VALUES ('seed', $1, 'seed', $2, $2, $3) RETURNING id`;
const SQL_PAPERS = `
  INSERT INTO papers (paper_key, title, abstract, authors, url, upvotes, first_batch_id, created_at, updated_at)
  SELECT 'seed.' || i, 'Sparse attention, part ' || i, 'What part ' || i || ' of the series shows.', '["Ada Lovelace"]',
         'https://example.org/papers/' || i, i % 7, $1, $2, $2
  FROM generate_series(1, $3) AS i
  RETURNING id`;
const SQL_FILL_ITEMS = `UPDATE digests SET items = $1, paper_count = $2 WHERE items IS NULL AND status = 'planned'`;

/** n papers (ids 1..n in a fresh schema), and every planned row without a paper list gets them all (no topic: bare papers). */
export async function seedPlannedPapers(pool: pg.Pool, n = 8, at = '2026-11-01T00:00:00.000Z'): Promise<void> {
  const batch = (await pool.query<{ id: number }>(SQL_BATCH, [at.slice(0, 10), n, at])).rows[0]!.id;
  const ids = (await pool.query<{ id: number }>(SQL_PAPERS, [batch, at, n])).rows.map((r) => r.id);
  await pool.query(SQL_FILL_ITEMS, [Buffer.from(packItems(ids, ids.map(() => 0), 0)), ids.length]);
}

/**
 * Each subscriber's watermark as the planner reads it: the column, or their newest sent row's to_paper (a
 * delivery writes its ledger row only: migration 020). Select from it as `w (id, watermark)`.
 */
export const SQL_WATERMARKS = `(SELECT s.id, ${watermarkExpr('s')}::int AS watermark FROM subscribers s)`;
