// `digest restore <backup>`, the file part: the backup is checked (it opens, passes quick_check, holds
// this service's tables), the current database and its -wal / -shm files are moved aside (kept, named with
// the time, never deleted), and the backup is copied into DATABASE_PATH through a temporary name, so the
// path holds either the old database or the whole backup. What the ledger must then learn (rows that may
// have been sent since the backup) is send/after-restore.ts.
import { copyFileSync, existsSync, renameSync, rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import { AppError, errorMessage } from '../errors.ts';

export interface RestoredFile {
  /** Where the database that was at DATABASE_PATH went (undefined: there was none). */
  previous: string | undefined;
  /** The backup's PRAGMA user_version (migrations run after the copy when it is older). */
  userVersion: number;
}

const REQUIRED_TABLES = ['subscribers', 'digests', 'papers'];
const SIDE_FILES = ['', '-wal', '-shm'];

/** Refuses a file that is not a whole backup of this service's database, naming what is wrong. */
function checkBackup(file: string): number {
  if (!existsSync(file)) throw new AppError('RESTORE_INVALID', `${file}: no such backup file`);
  let copy: Database.Database;
  try {
    copy = new Database(file, { readonly: true, fileMustExist: true });
  } catch (cause) {
    throw new AppError('RESTORE_INVALID', `${file}: cannot open the backup (${errorMessage(cause)})`, { cause });
  }
  try {
    const check = copy.pragma('quick_check', { simple: true }) as string;
    if (check !== 'ok') throw new AppError('RESTORE_INVALID', `${file}: the backup fails its integrity check (${check}); nothing was changed`);
    const tables = new Set((copy.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>).map((r) => r.name));
    const missing = REQUIRED_TABLES.filter((t) => !tables.has(t));
    if (missing.length > 0) throw new AppError('RESTORE_INVALID', `${file}: not a backup of this service's database (no ${missing.join(', ')} table); nothing was changed`);
    return copy.pragma('user_version', { simple: true }) as number;
  } catch (e) {
    if (e instanceof AppError) throw e;
    throw new AppError('RESTORE_INVALID', `${file}: not a database this service can use (${errorMessage(e)}); nothing was changed`, { cause: e });
  } finally {
    copy.close();
  }
}

/** Copies `backup` into `databasePath`, the database there moved aside first. */
export function restoreFile(backup: string, databasePath: string, now: Date): RestoredFile {
  const userVersion = checkBackup(backup);
  let previous: string | undefined;
  if (existsSync(databasePath)) {
    previous = `${databasePath}.before-restore-${now.toISOString().replace(/[:.]/g, '-')}`;
    // The -wal holds committed writes not yet in the main file: it moves with it, so the old one stays whole.
    for (const suffix of SIDE_FILES) if (existsSync(databasePath + suffix)) renameSync(databasePath + suffix, previous + suffix);
  } else {
    for (const suffix of SIDE_FILES.slice(1)) rmSync(databasePath + suffix, { force: true });
  }
  const partial = `${databasePath}.restoring`;
  try {
    copyFileSync(backup, partial);
    renameSync(partial, databasePath);
  } catch (cause) {
    rmSync(partial, { force: true });
    throw new AppError('RESTORE_FAILED', `cannot copy ${backup} to DATABASE_PATH=${databasePath} (${errorMessage(cause)})${previous ? `; the database that was there is at ${previous}` : ''}`, { cause });
  }
  return { previous, userVersion };
}
