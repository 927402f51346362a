// Opens the SQLite file with the settings every process needs, and applies pending migrations.
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { AppError } from '../errors.ts';
import { storageFault } from './faults.ts';

export type Db = Database.Database;

export const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'db', 'migrations');

export interface OpenOptions {
  /** Apply pending migrations (default true). */
  migrate?: boolean;
  readonly?: boolean;
  /**
   * How long one statement waits for another connection's write lock, blocking the thread (SQLite
   * busy_timeout; default 5000). `digest serve` uses WEB_BUSY_TIMEOUT_MS (ms) so a lock never freezes its
   * event loop for long; commands use DB_BUSY_TIMEOUT_MS.
   */
  busyTimeoutMs?: number;
  /** Refuse a database that cannot be written: one small write at open (default: when migrating, not readonly). */
  checkWritable?: boolean;
}

/** Every database path comes from DATABASE_PATH: errors name the variable so the fix is obvious. */
const where = (path: string) => `DATABASE_PATH=${path}`;

/** A tiny write in its own IMMEDIATE transaction: proves the file, its folder and the disk take writes. */
const SQL_WRITE_PROBE = `
  INSERT INTO settings (key, value) VALUES ('write_probe', :at)
  ON CONFLICT (key) DO UPDATE SET value = excluded.value`;

/** One write (see SQL_WRITE_PROBE). Throws StorageFault when the database cannot be written. */
export function probeWrite(db: Db, at: Date = new Date()): void {
  try {
    db.transaction(() => db.prepare(SQL_WRITE_PROBE).run({ at: at.toISOString() })).immediate();
  } catch (e) {
    throw storageFault(e) ?? e;
  }
}

export function openDatabase(path: string, options: OpenOptions = {}): Db {
  let db: Db;
  try {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    db = new Database(path, { readonly: options.readonly ?? false });
  } catch (cause) {
    throw new AppError('DB_OPEN_FAILED', `${where(path)}: cannot open the database: ${(cause as Error).message}`, { cause });
  }
  try {
    db.pragma(`busy_timeout = ${Math.max(0, Math.round(options.busyTimeoutMs ?? 5000))}`);
    if (!options.readonly) db.pragma('journal_mode = WAL');
    db.pragma('foreign_keys = ON');
    db.pragma('synchronous = NORMAL');
    // Temp tables (the planner's, plan/planner.ts) give their pages back when emptied. Without it a temp
    // database stays at its high-water mark, its pages dirty in this connection's cache, and SQLite walks
    // them at the end of every transaction that touches temp, which slowed every ledger COMMIT of a send
    // run after planning. Set before any temp table exists (SQLite's rule).
    // Measured: BENCHMARKS.md § Why the code is shaped this way, open.ts.
    db.pragma('temp.auto_vacuum = FULL');
    if (options.migrate ?? true) migrate(db);
    if (options.checkWritable ?? (!options.readonly && (options.migrate ?? true))) probeWrite(db);
  } catch (e) {
    db.close();
    const fault = storageFault(e);
    if (fault) throw fault.in(`${where(path)}: cannot write the database`);
    if ((e as { code?: string }).code === 'SQLITE_NOTADB' || (e as { code?: string }).code === 'SQLITE_CORRUPT') {
      throw new AppError('DB_OPEN_FAILED', `${where(path)}: not a database this service can use: ${(e as Error).message}`, { cause: e });
    }
    throw e;
  }
  return db;
}

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function listMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{3}_.+\.sql$/.test(f))
    .sort()
    .map((f) => ({ version: Number(f.slice(0, 3)), name: f, sql: readFileSync(join(dir, f), 'utf8') }));
}

/** Applies each pending migration in its own transaction, tracked with PRAGMA user_version. Returns the names applied. */
export function migrate(db: Db, dir = MIGRATIONS_DIR): string[] {
  const applied: string[] = [];
  for (const m of listMigrations(dir)) {
    // Re-read inside the transaction so two processes starting together cannot both apply it.
    db.transaction(() => {
      const current = db.pragma('user_version', { simple: true }) as number;
      if (m.version <= current) return;
      db.exec(m.sql);
      db.pragma(`user_version = ${m.version}`);
      applied.push(m.name);
    }).immediate();
  }
  return applied;
}
