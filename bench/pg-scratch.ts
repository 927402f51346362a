// A fresh PostgreSQL schema for one bench run, dropped at the end however the run ends.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createPool } from '../src/db/postgres/pool.ts';

export async function withScratchSchema<T>(
  url: string,
  opts: { max: number; prefix?: string },
  fn: (schema: string, pool: pg.Pool) => Promise<T>,
): Promise<T> {
  const schema = `${opts.prefix ?? 'pd_bench'}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  const pool = createPool(url, { schema, max: opts.max });
  try {
    return await fn(schema, pool);
  } finally {
    await pool.end();
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  }
}
