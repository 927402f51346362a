// Migrations on PostgreSQL: db/migrations-pg/NNN_name.sql, applied in number order, recorded in
// schema_migrations. The whole run holds a transaction-scoped advisory lock, so two processes migrating
// at once (two `digest serve` starting together) apply each file once: the second waits, then finds it
// done. PostgreSQL's DDL is transactional: a failed file leaves nothing half-applied.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { checkSchemaName, inTransaction } from './pool.ts';

export const PG_MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'db', 'migrations-pg');

/** Any constant shared by every process of this service: the key of the migration lock. */
const MIGRATION_LOCK_KEY = 0x64696765; // "dige"

const SQL_LOCK = `SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`;
const SQL_TABLE = `
  CREATE TABLE IF NOT EXISTS schema_migrations (
    version    integer PRIMARY KEY,
    name       text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
  )`;
// The schema first in search_path (DATABASE_SCHEMA, `digest copy --schema`) when it does not exist yet:
// a fresh name is made here, as `digest restore` makes its own, rather than failing on the first CREATE TABLE.
const SQL_MISSING_SCHEMA = `
  SELECT CASE WHEN current_schema() IS NULL THEN btrim(split_part(current_setting('search_path'), ',', 1)) END AS name`;
const SQL_APPLIED = `SELECT version FROM schema_migrations`;
const SQL_RECORD = `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`;
const SQL_VERSION = `SELECT coalesce(max(version), 0) AS v FROM schema_migrations`;

export interface PgMigration {
  version: number;
  name: string;
  sql: string;
}

export function listPgMigrations(dir = PG_MIGRATIONS_DIR): PgMigration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{3}_.+\.sql$/.test(f))
    .sort()
    .map((f) => ({ version: Number(f.slice(0, 3)), name: f, sql: readFileSync(join(dir, f), 'utf8') }));
}

/** Applies the pending migrations in one transaction under the migration lock; returns the names applied. */
export async function migratePostgres(pool: pg.Pool, dir = PG_MIGRATIONS_DIR): Promise<string[]> {
  const migrations = listPgMigrations(dir);
  return inTransaction(pool, async (c) => {
    await c.query(SQL_LOCK);
    const missing = (await c.query<{ name: string | null }>(SQL_MISSING_SCHEMA)).rows[0]?.name;
    // Only a plain name (never the default's "$user"): else PostgreSQL's own error says what is wrong.
    if (missing && /^[a-z_][a-z0-9_]{0,62}$/.test(missing)) await c.query(`CREATE SCHEMA IF NOT EXISTS ${checkSchemaName(missing)}`);
    await c.query(SQL_TABLE);
    const done = new Set((await c.query<{ version: number }>(SQL_APPLIED)).rows.map((r) => r.version));
    const applied: string[] = [];
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      await c.query(m.sql);
      await c.query(SQL_RECORD, [m.version, m.name]);
      applied.push(m.name);
    }
    return applied;
  });
}

/** The schema's version: the highest migration applied (0 when none). */
export async function pgSchemaVersion(pool: pg.Pool): Promise<number> {
  const r = await pool.query<{ v: number }>(SQL_VERSION);
  return r.rows[0]?.v ?? 0;
}
