// Opens the SQLite file with the settings every process needs, and applies pending migrations.
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { AppError } from '../errors.ts';

export type Db = Database.Database;

export const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'db', 'migrations');

export interface OpenOptions {
  /** Apply pending migrations (default true). */
  migrate?: boolean;
  readonly?: boolean;
}

export function openDatabase(path: string, options: OpenOptions = {}): Db {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  let db: Db;
  try {
    db = new Database(path, { readonly: options.readonly ?? false });
  } catch (cause) {
    throw new AppError('DB_OPEN_FAILED', `Cannot open database ${path}: ${(cause as Error).message}`, { cause });
  }
  if (!options.readonly) db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  db.pragma('synchronous = NORMAL');
  if (options.migrate ?? true) migrate(db);
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
