// `digest backup <file>` and `digest restore <file>` on PostgreSQL, the file part: pg_dump's custom format
// (-Fc) of the deployment's schema, and pg_restore of one into an empty schema. What the ledger must then
// learn (rows that may have gone out since the dump) is send/postgres/after-restore.ts.
//   backup: a REPEATABLE READ transaction exports its snapshot; pg_dump --snapshot dumps exactly that state
//   and the row counts are read in that same transaction (they are the dump's, whatever runs meanwhile).
//   The dump goes to <file>.partial, is checked (pg_restore --list names every table's data), then renamed.
//   restore: the schema must hold no table; the dump is restored in one transaction; a dump of another
//   schema name is restored under its own name (pg_dump qualifies every name) and then renamed.
import { execFile } from 'node:child_process';
import { existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { promisify } from 'node:util';
import pg from 'pg';
import { AppError, errorMessage } from '../../errors.ts';
import { checkSchemaName, createPool } from './pool.ts';

const run = promisify(execFile);

/** Rows of the tables an operator cares about (as SQLite's backup reports them), plus the opt-out history. */
const COUNTED = { subscribers: 'subscribers', digests: 'digests', papers: 'papers', bounceEvents: 'bounce_events', consentEvents: 'consent_events' } as const;
export type PgCounts = Record<keyof typeof COUNTED, number>;

export interface PgBackupReport {
  file: string;
  schema: string;
  bytes: number;
  dumpMs: number;
  checkMs: number;
  /** Entries pg_restore --list reads from the dump. */
  entries: number;
  /** The last migration the dump holds (schema_migrations). */
  version: number;
  counts: PgCounts;
}

const SQL_COUNTS = `SELECT ${Object.entries(COUNTED).map(([k, t]) => `(SELECT count(*) FROM ${t})::int AS "${k}"`).join(', ')}`;
const SQL_VERSION = `SELECT coalesce(max(version), 0)::int AS v FROM schema_migrations`;
const SQL_TABLES_IN = `SELECT count(*)::int AS n FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm', 'S')`;
const SQL_SCHEMA_EXISTS = `SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = $1`;

function schemaOf(schema: string | undefined): string {
  return checkSchemaName(schema ?? 'public');
}

/**
 * How pg_dump and pg_restore are told where to connect without the password on their command line (every
 * user of the machine reads a command line in `ps`; a process's environment only its own user and root):
 * the URL without its password as --dbname (its host, port, user, database and other parameters unchanged),
 * the password in PGPASSWORD.
 */
export function libpqConnection(url: string): { dbname: string; env: NodeJS.ProcessEnv } {
  // Textually, not with URL: libpq takes URLs WHATWG's parser refuses (postgres://u:pw@/db?host=/run/…).
  let password: string | undefined;
  let rest = url.replace(/^([a-z][a-z0-9+.-]*:\/\/)([^@/?#]*)@/i, (_all, scheme: string, userinfo: string) => {
    const colon = userinfo.indexOf(':');
    if (colon < 0) return `${scheme}${userinfo}@`;
    password = decodeURIComponent(userinfo.slice(colon + 1));
    return `${scheme}${userinfo.slice(0, colon)}@`;
  });
  // libpq also reads ?password=… from a URL's parameters.
  const q = rest.indexOf('?');
  if (q >= 0) {
    const params = new URLSearchParams(rest.slice(q + 1));
    if (params.has('password')) {
      password ??= params.get('password')!;
      params.delete('password');
      rest = rest.slice(0, q) + (params.size > 0 ? `?${params}` : '');
    }
  }
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (password !== undefined) env.PGPASSWORD = password;
  return { dbname: rest, env };
}

/** Runs pg_dump or pg_restore connected to `url` (libpqConnection: the password in its environment only). */
async function tool(name: 'pg_dump' | 'pg_restore', args: string[], what: string, url?: string): Promise<string> {
  const conn = url === undefined ? undefined : libpqConnection(url);
  try {
    const argv = conn ? [...args, `--dbname=${conn.dbname}`] : args;
    return (await run(name, argv, { maxBuffer: 64 * 1024 * 1024, ...(conn ? { env: conn.env } : {}) })).stdout;
  } catch (cause) {
    const e = cause as { code?: unknown; stderr?: string };
    const why = e.code === 'ENOENT' ? `${name} is not installed (the PostgreSQL client, version 15 or later)` : (e.stderr?.trim() || errorMessage(cause));
    throw new AppError(what === 'backup' ? 'BACKUP_FAILED' : 'RESTORE_FAILED', `${what}: ${name} failed: ${why}`, { cause, temporary: true });
  }
}

/** The dump's table of contents: its schema and which tables have data. */
async function listDump(file: string, what: 'backup' | 'restore'): Promise<{ entries: number; schema: string | undefined; data: Set<string> }> {
  const lines = (await tool('pg_restore', ['--list', file], what)).split('\n').filter((l) => /^\d+;/.test(l));
  const data = new Set<string>();
  let schema: string | undefined;
  for (const l of lines) {
    // "123; 0 16390 TABLE DATA pd_x subscribers root", "5; 2615 16385 SCHEMA - pd_x root"
    const m = /^\d+; \d+ \d+ (TABLE DATA|TABLE|SCHEMA) (\S+) (\S+)/.exec(l);
    if (!m) continue;
    if (m[1] === 'TABLE DATA') data.add(m[3]!);
    if (m[1] === 'TABLE') schema ??= m[2];
    if (m[1] === 'SCHEMA') schema = m[3];
  }
  return { entries: lines.length, schema, data };
}

export async function backupPostgres(url: string, schemaName: string | undefined, file: string, opts: { overwrite?: boolean } = {}): Promise<PgBackupReport> {
  const schema = schemaOf(schemaName);
  if (existsSync(file) && !opts.overwrite) {
    throw new AppError('BACKUP_EXISTS', `${file} exists already: choose a new name (or pass --force to replace it)`);
  }
  const partial = `${file}.partial`;
  rmSync(partial, { force: true });
  const started = performance.now();
  const c = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` });
  let counts: PgCounts;
  let version: number;
  try {
    await c.connect();
    await c.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const snapshot = (await c.query<{ s: string }>('SELECT pg_export_snapshot() AS s')).rows[0]!.s;
    counts = (await c.query<PgCounts>(SQL_COUNTS)).rows[0]!;
    version = (await c.query<{ v: number }>(SQL_VERSION)).rows[0]!.v;
    await tool('pg_dump', ['-Fc', '--no-owner', `--snapshot=${snapshot}`, `--schema=${schema}`, `--file=${partial}`], 'backup', url);
    await c.query('COMMIT');
  } catch (e) {
    rmSync(partial, { force: true });
    if (e instanceof AppError) throw e;
    throw new AppError('BACKUP_FAILED', `backup of schema ${schema}: ${errorMessage(e)}`, { cause: e, temporary: true });
  } finally {
    await c.end().catch(() => {});
  }
  const dumped = performance.now();
  const toc = await listDump(partial, 'backup').catch((e: unknown) => (rmSync(partial, { force: true }), Promise.reject(e)));
  const missing = Object.values(COUNTED).filter((t) => !toc.data.has(t));
  if (missing.length > 0) {
    rmSync(partial, { force: true });
    throw new AppError('BACKUP_CORRUPT', `backup to ${file}: the dump lists no data for ${missing.join(', ')}`);
  }
  renameSync(partial, file);
  return { file, schema, bytes: statSync(file).size, dumpMs: Math.round(dumped - started), checkMs: Math.round(performance.now() - dumped), entries: toc.entries, version, counts };
}

export interface PgRestoreReport {
  schema: string;
  /** The schema the dump was taken of (renamed to `schema` when it differs). */
  from: string;
  counts: PgCounts;
  restoreMs: number;
}

/** Restores a dump into the deployment's schema, which must hold no table; the settling is the caller's. */
export async function restorePostgres(url: string, schemaName: string | undefined, file: string): Promise<PgRestoreReport> {
  const schema = schemaOf(schemaName);
  if (!existsSync(file)) throw new AppError('RESTORE_INVALID', `${file}: no such backup file`);
  const toc = await listDump(file, 'restore').catch((cause: unknown) => {
    throw new AppError('RESTORE_INVALID', `${file}: not a dump of digest backup (pg_restore --list: ${errorMessage(cause)})`, { cause });
  });
  const from = toc.schema;
  if (!from || !toc.data.has('subscribers') || !toc.data.has('digests')) {
    throw new AppError('RESTORE_INVALID', `${file}: not a dump of this service's tables (no subscribers or digests in it)`);
  }
  const started = performance.now();
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    const tables = (await admin.query<{ n: number }>(SQL_TABLES_IN, [schema])).rows[0]!.n;
    if (tables > 0) {
      throw new AppError('RESTORE_NOT_EMPTY', `schema ${schema} holds ${tables} tables and sequences: restore into an empty schema (a new DATABASE_SCHEMA, or a new database), never over a live one`);
    }
    if (from === 'public' && schema !== 'public') {
      throw new AppError('RESTORE_INVALID', `${file} is a dump of schema public: restore it with DATABASE_SCHEMA unset (public), in another database`);
    }
    if (from !== schema && (await admin.query<{ n: number }>(SQL_SCHEMA_EXISTS, [from])).rows[0]!.n > 0) {
      throw new AppError('RESTORE_INVALID', `${file} is a dump of schema ${from}, which exists in this database: restore into another database, or drop or rename ${from} first`);
    }
    // The dump creates its schema (all but public): the empty one goes first (no CASCADE: empty, or this fails).
    if (from !== 'public') await admin.query(`DROP SCHEMA IF EXISTS ${schema}`);
    await tool('pg_restore', ['--no-owner', '--exit-on-error', '--single-transaction', file], 'restore', url);
    if (from !== schema) await admin.query(`ALTER SCHEMA ${checkSchemaName(from)} RENAME TO ${schema}`);
  } finally {
    await admin.end().catch(() => {});
  }
  const pool = createPool(url, { schema, max: 1 });
  try {
    const counts = (await pool.query<PgCounts>(SQL_COUNTS)).rows[0]!;
    return { schema, from, counts, restoreMs: Math.round(performance.now() - started) };
  } finally {
    await pool.end();
  }
}
