// The PostgreSQL connection pool (driver `pg`). One pool per process; every connection gets the schema
// in its search_path (DATABASE_SCHEMA, default public), so tests and side-by-side deployments can share
// one database. bigint columns come back as numbers: every id and paper number here stays far below 2^53.
import pg from 'pg';

/** DATABASE_URL names PostgreSQL when it starts with postgres:// or postgresql://. */
export function isPostgresUrl(url: string | undefined): url is string {
  return url !== undefined && /^postgres(ql)?:\/\//i.test(url);
}

const INT8_OID = 20;
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID && format !== 'binary') return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;

export interface PoolOptions {
  /** Schema put first in every connection's search_path. */
  schema?: string;
  max?: number;
  connectTimeoutMs?: number;
  /** Session settings sent with each connection's start-up (`-c name=value`), never as a query queued on it. */
  settings?: Record<string, string>;
}

/** A schema name we create or set: a plain identifier, never quoted user input. */
export function checkSchemaName(schema: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`not a schema name: ${schema}`);
  return schema;
}

/** What pg_stat_activity shows for our connections: the service, and the schema when not the default. */
export function applicationName(schema: string | undefined): string {
  return schema ? `paper-digest:${schema}` : 'paper-digest';
}

export function createPool(url: string, opts: PoolOptions = {}): pg.Pool {
  const schema = opts.schema ?? process.env.DATABASE_SCHEMA;
  const settings = { ...(schema ? { search_path: checkSchemaName(schema) } : {}), ...opts.settings };
  for (const [name, value] of Object.entries(settings)) {
    if (!/^[a-z_]+$/.test(name) || !/^[A-Za-z0-9_]+$/.test(value)) throw new Error(`not a session setting: ${name}=${value}`);
  }
  const options = Object.entries(settings).map(([name, value]) => `-c ${name}=${value}`).join(' ');
  const pool = new pg.Pool({
    connectionString: url,
    application_name: applicationName(schema),
    max: opts.max ?? 4,
    connectionTimeoutMillis: opts.connectTimeoutMs ?? 5000,
    types,
    ...(options ? { options } : {}),
  });
  // A connection lost while idle (server restart) must not crash the process: the pool drops it and
  // the next query opens a new one.
  pool.on('error', () => {});
  return pool;
}

/** Runs `fn` in one transaction on one connection of the pool. */
/**
 * fn inside a transaction: a pool's connection of its own, or, given a client already in a transaction
 * (`digest run --dry-run`, rolled back whole), a savepoint of it.
 */
export async function inTransaction<T>(db: pg.Pool | pg.PoolClient, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  if (!(db instanceof pg.Pool)) return inSavepoint(db, fn);
  const c = await db.connect();
  try {
    await c.query('BEGIN');
    const r = await fn(c);
    await c.query('COMMIT');
    return r;
  } catch (e) {
    await c.query('ROLLBACK').catch(() => {});
    throw e;
  } finally {
    c.release();
  }
}

async function inSavepoint<T>(c: pg.PoolClient, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  await c.query('SAVEPOINT in_transaction');
  try {
    const r = await fn(c);
    await c.query('RELEASE SAVEPOINT in_transaction');
    return r;
  } catch (e) {
    await c.query('ROLLBACK TO SAVEPOINT in_transaction').catch(() => {});
    throw e;
  }
}

/** A pool or one of its clients (inside a transaction): what a repository's statement runs on. */
export type Pg = Pick<pg.Pool | pg.PoolClient, 'query'>;
