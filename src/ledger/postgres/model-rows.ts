// The reader models' pass on PostgreSQL (feedback/postgres/model-pass.ts) reorders and trims rows in its
// in-memory mirror; these write the result back, as ledger/create.ts rewriteItems does on SQLite, so every
// write to `digests` stays in the ledger's folder. Set-based: one statement per batch of rows.
import type pg from 'pg';

const SQL_REWRITE_ROWS = `
  UPDATE digests d SET items = u.items, paper_count = u.n
  FROM unnest($1::bigint[], $2::bytea[], $3::int[]) AS u (id, items, n)
  WHERE d.id = u.id`;

export interface RewrittenRow {
  id: number;
  items: Buffer;
  paperCount: number;
}

/** Rewrites rows' packed lists and counts (inside the planner's transaction). */
export async function rewriteRowsPg(c: pg.PoolClient, rows: readonly RewrittenRow[]): Promise<void> {
  if (rows.length === 0) return;
  await c.query(SQL_REWRITE_ROWS, [rows.map((r) => r.id), rows.map((r) => r.items), rows.map((r) => r.paperCount)]);
}
