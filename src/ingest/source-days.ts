// What each configured source has fetched, per day (table source_days): read by the poller to decide
// which days to ask for, and by `digest sources` / `digest status` to show the last day and errors.
import type { Db } from '../db/open.ts';
import { statement } from '../db/statements.ts';

export type SourceDayStatus = 'ingested' | 'empty' | 'error';

export interface SourceDay {
  day: string;
  status: SourceDayStatus;
  batchId: number | null;
  attempts: number;
  lastError: string | null;
  fetchedAt: string;
}

const SOURCE_DAY_COLUMNS = `day, status, batch_id AS batchId, attempts, last_error AS lastError, fetched_at AS fetchedAt`;

/** The recorded days of one source in a window of days (inclusive). */
const SQL_DAYS_IN_WINDOW = `
  SELECT ${SOURCE_DAY_COLUMNS}
  FROM source_days WHERE source = ? AND day BETWEEN ? AND ?`;

/** One source's day. */
const SQL_DAY = `
  SELECT ${SOURCE_DAY_COLUMNS}
  FROM source_days WHERE source = ? AND day = ?`;

/** One source's newest days (the console's sources page): the primary key (source, day) read backwards. */
const SQL_RECENT_DAYS = `SELECT ${SOURCE_DAY_COLUMNS} FROM source_days WHERE source = ? ORDER BY day DESC LIMIT ?`;

/** Records the outcome of one fetch of a day; attempts counts every fetch of that day. */
const SQL_UPSERT_DAY = `
  INSERT INTO source_days (source, day, status, batch_id, attempts, last_error, fetched_at)
  VALUES (@source, @day, @status, @batchId, 1, @lastError, @now)
  ON CONFLICT (source, day) DO UPDATE SET
    status = excluded.status,
    batch_id = COALESCE(excluded.batch_id, source_days.batch_id),
    attempts = source_days.attempts + 1,
    last_error = excluded.last_error,
    fetched_at = excluded.fetched_at`;

/** A stream source (arXiv RSS) fetched fine again: its earlier failed fetches are resolved. */
const SQL_DELETE_ERRORS = `
  DELETE FROM source_days WHERE source = ? AND status = 'error'`;

/** Last day ingested and last fetch of one source. */
const SQL_SUMMARY = `
  SELECT MAX(CASE WHEN status = 'ingested' THEN day END) AS lastDay,
         MAX(fetched_at) AS lastFetchedAt
  FROM source_days WHERE source = ?`;

/** Days of one source that failed and have not been fetched successfully since, newest failure first. */
const SQL_ERRORS = `
  SELECT ${SOURCE_DAY_COLUMNS}
  FROM source_days WHERE source = ? AND status = 'error'
  ORDER BY fetched_at DESC, day DESC LIMIT ?`;

export function daysInWindow(db: Db, source: string, from: string, to: string): Map<string, SourceDay> {
  const rows = statement(db, SQL_DAYS_IN_WINDOW).all(source, from, to) as SourceDay[];
  return new Map(rows.map((r) => [r.day, r]));
}

export function sourceDay(db: Db, source: string, day: string): SourceDay | undefined {
  return statement(db, SQL_DAY).get(source, day) as SourceDay | undefined;
}

export function recordDay(db: Db, r: RecordedDay): void {
  statement(db, SQL_UPSERT_DAY).run({
    source: r.source,
    day: r.day,
    status: r.status,
    batchId: r.batchId ?? null,
    lastError: r.lastError ?? null,
    now: r.now.toISOString(),
  });
}

export function clearErrors(db: Db, source: string): void {
  statement(db, SQL_DELETE_ERRORS).run(source);
}

export function sourceSummary(db: Db, source: string): { lastDay: string | null; lastFetchedAt: string | null } {
  return statement(db, SQL_SUMMARY).get(source) as { lastDay: string | null; lastFetchedAt: string | null };
}

export function sourceErrors(db: Db, source: string, limit = 10): SourceDay[] {
  return statement(db, SQL_ERRORS).all(source, limit) as SourceDay[];
}

/** A failed day as `digest status` and the console show it (either engine's row). */
export function failedDay(e: Pick<SourceDay, 'day' | 'lastError' | 'fetchedAt' | 'attempts'>): { day: string; error: string; at: string; attempts: number } {
  return { day: e.day, error: e.lastError ?? 'unknown error', at: e.fetchedAt, attempts: e.attempts };
}

export function recentDays(db: Db, source: string, limit = 14): SourceDay[] {
  return statement<[string, number], SourceDay>(db, SQL_RECENT_DAYS).all(source, limit);
}

/** What the source poller reads and writes (sources.ts): SQLite's functions above, or PostgreSQL's (postgres/source-store.ts). */
export interface SourceStore {
  daysInWindow(source: string, from: string, to: string): Map<string, SourceDay> | Promise<Map<string, SourceDay>>;
  sourceDay(source: string, day: string): SourceDay | undefined | Promise<SourceDay | undefined>;
  recordDay(r: RecordedDay): void | Promise<void>;
  clearErrors(source: string): void | Promise<void>;
}

export type RecordedDay = { source: string; day: string; status: SourceDayStatus; batchId?: number | null; lastError?: string | null; now: Date };

export function sqliteSourceStore(db: Db): SourceStore {
  return {
    daysInWindow: (source, from, to) => daysInWindow(db, source, from, to),
    sourceDay: (source, day) => sourceDay(db, source, day),
    recordDay: (r) => recordDay(db, r),
    clearErrors: (source) => clearErrors(db, source),
  };
}
