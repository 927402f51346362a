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
const SQL_COUNTS = `
  SELECT (SELECT count(*) FROM subscribers) AS subscribers,
         (SELECT count(*) FROM digests)     AS digests,
         (SELECT count(*) FROM papers)      AS papers,
         (SELECT count(*) FROM bounce_events) AS bounceEvents`;

export async function backupDatabase(db: Db, file: string, opts: { overwrite?: boolean } = {}): Promise<BackupReport> {
  if (db.memory) throw new AppError('BACKUP_MEMORY', 'an in-memory database cannot be backed up');
  if (existsSync(file) && !opts.overwrite) {
    throw new AppError('BACKUP_EXISTS', `${file} exists already: choose a new name (or pass --force to replace it)`);
  }
  const partial = `${file}.partial`;
  rmSync(partial, { force: true });
  const started = performance.now();
  try {
    await db.backup(partial, { progress: ({ remainingPages }) => Math.max(remainingPages, 1) });
  } catch (cause) {
    rmSync(partial, { force: true });
    throw new AppError('BACKUP_FAILED', `backup to ${file} failed: ${(cause as Error).message}`, { cause, temporary: true });
  }
  const copied = performance.now();
  const copy = new Database(partial, { readonly: true });
  let integrity: string;
  let counts: BackupReport['counts'];
  let userVersion: number;
  try {
    integrity = (copy.pragma('integrity_check', { simple: true }) as string) ?? 'unknown';
    counts = copy.prepare(SQL_COUNTS).get() as BackupReport['counts'];
    userVersion = copy.pragma('user_version', { simple: true }) as number;
  } finally {
    copy.close();
  }
  if (integrity !== 'ok') {
    rmSync(partial, { force: true });
    throw new AppError('BACKUP_CORRUPT', `backup to ${file} failed its integrity check: ${integrity}`);
  }
  renameSync(partial, file);
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
