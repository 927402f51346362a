// like: examples on PostgreSQL: the papers and looked-up examples (like_examples) every instance shares,
// so that a topic saved through one instance's door is matched by whichever process plans. The lookup
// queue itself (match/like/lookups.ts) stays per process, as on SQLite.
import type pg from 'pg';
import type { Pg } from '../../db/postgres/pool.ts';
import type { ExampleStore } from '../like/lookups.ts';

/** Ids ($1) that are neither a paper's key nor a stored example. */
const SQL_MISSING = `
  SELECT k.id FROM unnest($1::text[]) WITH ORDINALITY AS k (id, n)
  WHERE NOT EXISTS (SELECT 1 FROM papers p WHERE p.paper_key = k.id)
    AND NOT EXISTS (SELECT 1 FROM like_examples e WHERE e.paper_key = k.id)
  ORDER BY k.n`;
const SQL_STORE = `
  INSERT INTO like_examples (paper_key, title, abstract, fetched_at) VALUES ($1, $2, $3, $4)
  ON CONFLICT (paper_key) DO NOTHING`;

/** Ids of `ids` PostgreSQL does not know, in their order. */
export async function missingExamplesPg(c: Pg, ids: readonly string[]): Promise<string[]> {
  return (await c.query<{ id: string }>(SQL_MISSING, [ids])).rows.map((r) => r.id);
}

export function postgresExampleStore(pool: pg.Pool): ExampleStore {
  return {
    missing: (ids) => missingExamplesPg(pool, ids),
    store: async (id, got, now) => {
      await pool.query(SQL_STORE, [id, got.title, got.abstract, now.toISOString()]);
    },
  };
}
