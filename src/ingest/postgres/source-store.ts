// The source poller's record of fetched days (source_days, ingest/source-days.ts) on PostgreSQL: the same
// statements in PostgreSQL's words, behind the poller's SourceStore port, so `digest plan --fetch` asks the
// configured sources for their missing days and ingests them into PostgreSQL (ingest.ts).
import type pg from 'pg';
import type { RecordedDay, SourceDay, SourceStore } from '../source-days.ts';

const COLUMNS = `day, status, batch_id AS "batchId", attempts, last_error AS "lastError", fetched_at AS "fetchedAt"`;
const SQL_DAYS_IN_WINDOW = `SELECT ${COLUMNS} FROM source_days WHERE source = $1 AND day BETWEEN $2 AND $3`;
const SQL_DAY = `SELECT ${COLUMNS} FROM source_days WHERE source = $1 AND day = $2`;
const SQL_UPSERT_DAY = `
  INSERT INTO source_days (source, day, status, batch_id, attempts, last_error, fetched_at)
  VALUES ($1, $2, $3, $4, 1, $5, $6)
  ON CONFLICT (source, day) DO UPDATE SET
    status = excluded.status,
    batch_id = coalesce(excluded.batch_id, source_days.batch_id),
    attempts = source_days.attempts + 1,
    last_error = excluded.last_error,
    fetched_at = excluded.fetched_at`;
const SQL_DELETE_ERRORS = `DELETE FROM source_days WHERE source = $1 AND status = 'error'`;

export function postgresSourceStore(pool: pg.Pool): SourceStore {
  return {
    async daysInWindow(source, from, to) {
      const rows = (await pool.query<SourceDay>(SQL_DAYS_IN_WINDOW, [source, from, to])).rows;
      return new Map(rows.map((r) => [r.day, r]));
    },
    async sourceDay(source, day) {
      return (await pool.query<SourceDay>(SQL_DAY, [source, day])).rows[0];
    },
    async recordDay(r: RecordedDay) {
      await pool.query(SQL_UPSERT_DAY, [r.source, r.day, r.status, r.batchId ?? null, r.lastError ?? null, r.now.toISOString()]);
    },
    async clearErrors(source) {
      await pool.query(SQL_DELETE_ERRORS, [source]);
    },
  };
}
