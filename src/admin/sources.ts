// The console's sources page: each configured source's last days, from source_days (primary key
// (source, day): the newest days of one source are an index range read backwards).
import type { Db } from '../db/open.ts';
import { statement } from '../db/statements.ts';

const SQL_SOURCE_DAYS = `
  SELECT day, status, attempts, last_error AS lastError, fetched_at AS fetchedAt
  FROM source_days WHERE source = ? ORDER BY day DESC LIMIT ?`;

export interface SourceDayRow {
  day: string;
  status: string;
  attempts: number;
  lastError: string | null;
  fetchedAt: string;
}

export function sourceDays(db: Db, source: string, limit = 14): SourceDayRow[] {
  return statement<[string, number], SourceDayRow>(db, SQL_SOURCE_DAYS).all(source, limit);
}
