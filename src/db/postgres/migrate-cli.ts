// `digest migrate` when DATABASE_URL names PostgreSQL.
import { migratePostgres, pgSchemaVersion } from './migrate.ts';
import { createPool } from './pool.ts';

export async function migrateFromEnv(url: string): Promise<string> {
  const pool = createPool(url, { max: 1 });
  try {
    const applied = await migratePostgres(pool);
    const version = await pgSchemaVersion(pool);
    return applied.length ? `applied ${applied.join(', ')} (PostgreSQL, version ${version})` : `database is up to date (PostgreSQL, version ${version})`;
  } finally {
    await pool.end();
  }
}
