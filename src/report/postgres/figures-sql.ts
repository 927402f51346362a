// The operator figures' statements in PostgreSQL's words: the same counts as the SQLite constants in
// report/figures.ts, overdue.ts, status.ts and the repositories they call (bounces, consent, notices),
// each one set-based query over the same indexes (migrations-pg/014_init.sql mirrors SQLite's), an edition's
// rows over its id range in digest_editions (migration 017).
import { watermarkExpr } from '../../subscribers/records/postgres-delivered.ts';

export const PG_LEDGER_TOTALS = `
  SELECT count(DISTINCT edition)                                       AS editions,
         count(*)                                                      AS planned,
         count(*) FILTER (WHERE status = 'sent')                       AS sent,
         count(*) FILTER (WHERE status = 'failed')                     AS failed,
         count(*) FILTER (WHERE status = 'suppressed')                 AS suppressed,
         count(*) FILTER (WHERE status = 'unknown')                    AS unknown,
         count(*) FILTER (WHERE status IN ('planned', 'sending', 'retry')) AS pending,
         count(*) FILTER (WHERE status = 'retry')                      AS retrying
  FROM digests`;

/**
 * Inside a LATERAL per digest_editions row (migration 017; no index on edition): its rows by primary key
 * over its id range. A plain join let the planner hash the whole table instead.
 */
const IN_EDITION = `d.id BETWEEN e.first_id AND e.last_id AND d.edition = e.edition`;

export const PG_SENT_SINCE = `
  SELECT coalesce(sum(c.n), 0)::bigint AS n
  FROM digest_editions e CROSS JOIN LATERAL (SELECT count(*) AS n FROM digests d WHERE ${IN_EDITION} AND d.status = 'sent') c
  WHERE e.edition >= $1`;
export const PG_SUBSCRIBERS_BY_STATUS = `SELECT status, count(*) AS n FROM subscribers GROUP BY status`;
export const PG_BOUNCES_SINCE = `SELECT kind, count(*) AS n FROM bounce_events WHERE received_at >= $1 GROUP BY kind`;
export const PG_OPT_OUTS_SINCE = `SELECT kind, count(*) AS n FROM consent_events WHERE at >= $1 GROUP BY kind`;
export const PG_NOTICES_SINCE = `SELECT status, count(*) AS n FROM notices WHERE created_at >= $1 GROUP BY status`;

/** $1 now, $2 the daily cutoff, $3 the weekly cutoff (ISO): report/overdue.ts's SQL_COUNT_OVERDUE (the watermark read as the planner reads it). */
export const PG_COUNT_OVERDUE = `
  WITH cut AS (
    SELECT (SELECT coalesce(max(id), 0) FROM papers WHERE created_at < $2) AS daily,
           (SELECT coalesce(max(id), 0) FROM papers WHERE created_at < $3) AS weekly
  ),
  waiting AS (
    SELECT s.id, ${watermarkExpr('s')} AS watermark, CASE s.frequency WHEN 'daily' THEN cut.daily ELSE cut.weekly END AS upto
    FROM subscribers s, cut
    WHERE s.status = 'confirmed' AND (s.paused_until IS NULL OR s.paused_until <= $1)
  )
  SELECT count(*) AS n
  FROM waiting w
  WHERE w.watermark < w.upto
    AND EXISTS (SELECT 1 FROM topics t JOIN query_matches m ON m.query_id = t.query_id
                WHERE t.subscriber_id = w.id AND t.muted = 0 AND m.paper_id > w.watermark AND m.paper_id <= w.upto)`;

export const PG_READ_SETTING = `SELECT value FROM settings WHERE key = $1`;
export const PG_WRITE_SETTING = `
  INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value`;

/** The newest editions that still have a row (a range outlives its rows when their subscribers are deleted). */
const RECENT_EDITIONS = `
  SELECT e.edition FROM digest_editions e CROSS JOIN LATERAL (SELECT 1 FROM digests d WHERE ${IN_EDITION} LIMIT 1) x
  ORDER BY e.edition DESC LIMIT $1`;

export const PG_EDITION_COUNTS = `
  SELECT e.edition, c.planned, c.sent, c.pending, c.failed, c.suppressed, c.unknown
  FROM digest_editions e
  CROSS JOIN LATERAL (
    SELECT count(*)                                                        AS planned,
           count(*) FILTER (WHERE d.status = 'sent')                       AS sent,
           count(*) FILTER (WHERE d.status IN ('planned', 'sending', 'retry')) AS pending,
           count(*) FILTER (WHERE d.status = 'failed')                     AS failed,
           count(*) FILTER (WHERE d.status = 'suppressed')                 AS suppressed,
           count(*) FILTER (WHERE d.status = 'unknown')                    AS unknown
    FROM digests d WHERE ${IN_EDITION}) c
  WHERE e.edition IN (${RECENT_EDITIONS})
  ORDER BY e.edition DESC`;

export const PG_EDITION_FAILURES = `
  SELECT edition, smtp_code AS code, smtp_response AS response, count(*) AS n
  FROM digests
  WHERE edition IN (${RECENT_EDITIONS})
    AND status IN ('retry', 'failed', 'unknown') AND smtp_response IS NOT NULL
  GROUP BY edition, smtp_code, smtp_response`;

export const PG_LAST_NOTICE_FAILURES = `
  SELECT id, subscriber_id AS "subscriberId", email, kind, status, attempts, next_attempt_at AS "nextAttemptAt",
         smtp_code AS "smtpCode", smtp_response AS "smtpResponse", created_at AS "createdAt", sent_at AS "sentAt"
  FROM notices WHERE status IN ('failed', 'retry') AND smtp_response IS NOT NULL
  ORDER BY id DESC LIMIT $1`;

/** A source's unresolved failed days, newest first (ingest/source-days.ts SQL_ERRORS). */
const SOURCE_DAY_COLUMNS = `day, status, batch_id AS "batchId", attempts, last_error AS "lastError", fetched_at AS "fetchedAt"`;

export const PG_SOURCE_ERRORS = `
  SELECT ${SOURCE_DAY_COLUMNS}
  FROM source_days WHERE source = $1 AND status = 'error'
  ORDER BY fetched_at DESC, day DESC LIMIT 10`;

/** Last day ingested and last fetch of one source (`digest sources`, the console's sources page). */
export const PG_SOURCE_SUMMARY = `
  SELECT max(CASE WHEN status = 'ingested' THEN day END) AS "lastDay", max(fetched_at) AS "lastFetchedAt"
  FROM source_days WHERE source = $1`;

/** One source's newest days: the primary key (source, day) read backwards. */
export const PG_RECENT_SOURCE_DAYS = `SELECT ${SOURCE_DAY_COLUMNS} FROM source_days WHERE source = $1 ORDER BY day DESC LIMIT $2`;

/** GET /health's write: what a subscriber's write needs (a row written and committed), one tiny row. */
export const PG_HEALTH_PROBE = `
  INSERT INTO settings (key, value) VALUES ('health_probe', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value`;
