// `digest doctor`'s database line with DATABASE_URL=postgres://…: the deployment's store is PostgreSQL, not
// the SQLite file, so the check is that PostgreSQL answers, its schema is migrated, and it takes a write
// (the /health probe's upsert of one settings row), with the fix when not.
import type { Config } from '../config.ts';
import { pgSchemaVersion } from '../db/postgres/migrate.ts';
import { createPool } from '../db/postgres/pool.ts';
import { errorMessage } from '../errors.ts';
import { PG_HEALTH_PROBE } from '../report/postgres/figures-sql.ts';
import type { Check } from './check.ts';

/** PostgreSQL's undefined_table and invalid_schema_name: a schema `digest migrate` has not made ready. */
const NOT_MIGRATED = new Set(['42P01', '3F000']);

/** host:port/database and the schema, never the password. */
function whereOf(url: string, schema: string | undefined): string {
  const u = new URL(url);
  return `PostgreSQL ${u.hostname}:${u.port || '5432'}${u.pathname}${schema ? ` schema ${schema}` : ''}`;
}

export async function postgresDatabaseCheck(config: Config, timeoutMs: number, now: Date): Promise<Check> {
  const url = config.DATABASE_URL!;
  const schema = config.DATABASE_SCHEMA;
  const where = whereOf(url, schema);
  const pool = createPool(url, { ...(schema ? { schema } : {}), max: 1, connectTimeoutMs: timeoutMs });
  try {
    const version = await pgSchemaVersion(pool);
    await pool.query(PG_HEALTH_PROBE, [now.toISOString()]);
    return { name: 'database', status: 'ok', detail: `${where} takes writes (schema ${version})` };
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    const fix = typeof code === 'string' && NOT_MIGRATED.has(code)
      ? 'run `digest migrate` with the same DATABASE_URL and DATABASE_SCHEMA'
      : "check DATABASE_URL (host, port, user, password, database) and that this machine reaches it; a read-only standby or a revoked privilege refuses the write";
    return { name: 'database', status: 'fail', detail: `${where}: ${errorMessage(e).split('\n')[0]!}`, fix };
  } finally {
    await pool.end().catch(() => {});
  }
}
