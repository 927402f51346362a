// `digest backup <file>`: a consistent copy of the live database while the service runs, with SQLite's
// online backup API (better-sqlite3's db.backup()). It reads a snapshot through its own connection: in
// WAL mode the sender and the web server keep writing meanwhile (readers never block writers). A write
// by another connection between two backup steps makes SQLite restart the copy, so after a first small
// step the rest is copied in one step (one read transaction, one snapshot) rather than 100 pages at a
// time, which under a busy send run could restart again and again.
// The copy is written to `<file>.partial` and renamed once it is complete and checked (integrity_check
// and row counts), so `<file>` is never a half-written database.
import { existsSync, renameSync, rmSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { AppError } from '../errors.ts';
import type { Db } from './open.ts';

export interface BackupReport {
  file: string;
  bytes: number;
  /** Copying (the online backup) and checking the copy (integrity_check, counts). */
  copyMs: number;
  checkMs: number;
  integrity: string;
  counts: { subscribers: number; digests: number; papers: number; bounceEvents: number };
  userVersion: number;
}

/** Rows of the tables an operator cares about, read from the copy. */
const COUNTED = { subscribers: 'subscribers', digests: 'digests', papers: 'papers', bounceEvents: 'bounce_events' } as const;

/**
 * A table the copy does not have counts 0: the database of the previous release has no bounce_events
 * (migration 003), and `digest backup` copies a database as it is, without migrating it, precisely so an
 * operator can take a copy before upgrading.
 */
function countRows(copy: Database.Database): BackupReport['counts'] {
  const has = new Set(
    (copy.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>).map((r) => r.name),
  );
  const count = (table: string) => (has.has(table) ? (copy.prepare(`SELECT count(*) AS n FROM "${table}"`).get() as { n: number }).n : 0);
  return {
    subscribers: count(COUNTED.subscribers),
    digests: count(COUNTED.digests),
    papers: count(COUNTED.papers),
    bounceEvents: count(COUNTED.bounceEvents),
  };
}

/** The copy and the -wal / -shm files SQLite makes beside it when it is opened. */
function removeCopy(path: string): void {
  for (const f of [path, `${path}-wal`, `${path}-shm`]) rmSync(f, { force: true });
}

export async function backupDatabase(db: Db, file: string, opts: { overwrite?: boolean } = {}): Promise<BackupReport> {
  if (db.memory) throw new AppError('BACKUP_MEMORY', 'an in-memory database cannot be backed up');
  if (existsSync(file) && !opts.overwrite) {
    throw new AppError('BACKUP_EXISTS', `${file} exists already: choose a new name (or pass --force to replace it)`);
  }
  const partial = `${file}.partial`;
  removeCopy(partial);
  const started = performance.now();
  try {
    await db.backup(partial, { progress: ({ remainingPages }) => Math.max(remainingPages, 1) });
  } catch (cause) {
    removeCopy(partial);
    throw new AppError('BACKUP_FAILED', `backup to ${file} failed: ${(cause as Error).message}`, { cause, temporary: true });
  }
  const copied = performance.now();
  let integrity: string;
  let counts: BackupReport['counts'];
  let userVersion: number;
  try {
    const copy = new Database(partial, { readonly: true });
    try {
      integrity = (copy.pragma('integrity_check', { simple: true }) as string) ?? 'unknown';
      counts = countRows(copy);
      userVersion = copy.pragma('user_version', { simple: true }) as number;
    } finally {
      copy.close();
    }
  } catch (cause) {
    // Nothing half-written stays behind: not the copy, nor the -wal / -shm files opening it made.
    removeCopy(partial);
    throw new AppError('BACKUP_FAILED', `backup to ${file} failed while checking the copy: ${(cause as Error).message}`, { cause });
  }
  if (integrity !== 'ok') {
    removeCopy(partial);
    throw new AppError('BACKUP_CORRUPT', `backup to ${file} failed its integrity check: ${integrity}`);
  }
  renameSync(partial, file);
  // Opening the copy (it is in WAL mode, like the live database) left an empty <file>.partial-wal and a
  // <file>.partial-shm; without this, every nightly backup would leave two stray files beside it.
  rmSync(`${partial}-wal`, { force: true });
  rmSync(`${partial}-shm`, { force: true });
  return {
    file,
    bytes: statSync(file).size,
    copyMs: Math.round(copied - started),
    checkMs: Math.round(performance.now() - copied),
    integrity,
    counts,
    userVersion,
  };
}
