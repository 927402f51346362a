// Storage faults: what SQLite says when the database cannot be written, turned into one AppError that
// names the cause (a full disk is not "locked"). Every place that can meet one (a send run, a web route,
// /health, start-up) reports it through here, so the operator reads the same words everywhere.
//
//   SQLITE_BUSY*, SQLITE_LOCKED*  -> DB_LOCKED    another connection held the write lock past the wait
//   SQLITE_FULL, SQLITE_IOERR with ENOSPC -> DB_FULL  no space left on the disk holding the database
//   SQLITE_READONLY*, SQLITE_CANTOPEN     -> DB_READONLY  the file (or its folder) cannot be written
//   SQLITE_IOERR*                 -> DB_IO        any other I/O error (failing disk, file gone)
//   (PostgreSQL only, db/postgres/faults.ts)  -> DB_UNREACHABLE  the server cannot be reached or refuses us
// All are temporary (the same operation may succeed once the fault is gone) and answer HTTP 503.
import { AppError } from '../errors.ts';

export type StorageFaultCode = 'DB_LOCKED' | 'DB_FULL' | 'DB_READONLY' | 'DB_IO' | 'DB_UNREACHABLE';

/** Seconds a client is told to wait (Retry-After) per fault: a lock passes soon, a disk needs a person. */
export const RETRY_AFTER_S: Record<StorageFaultCode, number> = { DB_LOCKED: 2, DB_FULL: 60, DB_READONLY: 60, DB_IO: 30, DB_UNREACHABLE: 10 };

const WHAT: Record<StorageFaultCode, string> = {
  DB_LOCKED: 'database locked: another process held the write lock too long',
  DB_FULL: 'disk full: no space left on the disk holding the database',
  DB_READONLY: 'database read-only: the database file or its folder cannot be written',
  DB_IO: 'database I/O error',
  DB_UNREACHABLE: 'database unreachable: PostgreSQL (DATABASE_URL) did not answer or refused the connection',
};

export class StorageFault extends AppError {
  readonly fault: StorageFaultCode;
  /** The engine's own code, e.g. SQLITE_FULL, or PostgreSQL's SQLSTATE / the socket's (ECONNREFUSED). */
  readonly sqliteCode: string;
  constructor(fault: StorageFaultCode, sqliteCode: string, detail: string, cause?: unknown, context?: string) {
    const text = `${WHAT[fault]} (${sqliteCode}${detail ? `: ${detail}` : ''})`;
    super(fault, context ? `${context}: ${text}` : text, { temporary: true, cause });
    this.name = 'StorageFault';
    this.fault = fault;
    this.sqliteCode = sqliteCode;
    this.detail = detail;
  }

  private readonly detail: string;

  /** The same fault with where it happened in front, e.g. "DATABASE_PATH=/srv/digest.sqlite". */
  in(context: string): StorageFault {
    return new StorageFault(this.fault, this.sqliteCode, this.detail, this.cause, context);
  }

  get retryAfterSeconds(): number {
    return RETRY_AFTER_S[this.fault];
  }
}

function faultOf(code: string, message: string): StorageFaultCode | undefined {
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return 'DB_LOCKED';
  if (code === 'SQLITE_FULL' || (code.startsWith('SQLITE_IOERR') && /no space|ENOSPC|disk is full/i.test(message))) return 'DB_FULL';
  // CANTOPEN once the file is open: a side file (-wal, -shm) cannot be created, i.e. the folder is read-only.
  if (code.startsWith('SQLITE_READONLY') || code.startsWith('SQLITE_CANTOPEN')) return 'DB_READONLY';
  if (code.startsWith('SQLITE_IOERR')) return 'DB_IO';
  return undefined;
}

/** The storage fault `e` is (a SqliteError from better-sqlite3, or one already converted), else undefined. */
export function storageFault(e: unknown): StorageFault | undefined {
  if (e instanceof StorageFault) return e;
  if (typeof e !== 'object' || e === null) return undefined;
  const code = (e as { code?: unknown }).code;
  if (typeof code !== 'string' || !code.startsWith('SQLITE_')) return undefined;
  const message = (e as { message?: unknown }).message;
  const text = typeof message === 'string' ? message : '';
  const fault = faultOf(code, text);
  return fault ? new StorageFault(fault, code, text, e) : undefined;
}

/** True for a lock that may pass by itself (worth waiting for, asynchronously). */
export function isBusy(e: unknown): boolean {
  return storageFault(e)?.fault === 'DB_LOCKED';
}
