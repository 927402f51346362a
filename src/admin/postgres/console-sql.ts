// The console's overview and deliveries statements in PostgreSQL's words: the same rows as admin/overview.ts
// and admin/deliveries.ts read from SQLite, over the indexes migrations-pg/014_init.sql keeps for them
// (subscribers_confirmed_day, subscribers_unsubscribed_day, digests_edition, bounce_events_received).
// sum() of a bigint is numeric in PostgreSQL, which `pg` returns as a string: cast back to bigint.

export const PG_SUBSCRIBER_DAYS = `
  WITH changes (day, delta, unsub) AS (
    SELECT substr(confirmed_at, 1, 10), count(*), 0::bigint FROM subscribers
    WHERE confirmed_at IS NOT NULL GROUP BY substr(confirmed_at, 1, 10)
    UNION ALL
    SELECT substr(unsubscribed_at, 1, 10), -count(*) FILTER (WHERE confirmed_at IS NOT NULL), count(*) FROM subscribers
    WHERE unsubscribed_at IS NOT NULL GROUP BY substr(unsubscribed_at, 1, 10), confirmed_at IS NOT NULL
    UNION ALL
    SELECT substr(suppressed_at, 1, 10), -count(*), 0::bigint FROM subscribers
    WHERE status = 'suppressed' AND confirmed_at IS NOT NULL AND suppressed_at IS NOT NULL GROUP BY 1)
  SELECT CASE WHEN day < $1 THEN '' ELSE day END AS day, sum(delta)::bigint AS delta, sum(unsub)::bigint AS unsub
  FROM changes GROUP BY 1 ORDER BY 1`;

export const PG_DIGEST_DAYS = `
  SELECT edition AS day, count(*) FILTER (WHERE status = 'sent') AS sent,
         count(*) FILTER (WHERE status IN ('failed', 'unknown')) AS failed
  FROM digests WHERE edition >= $1 AND edition <= $2 GROUP BY edition`;

export const PG_BOUNCE_DAYS = `
  SELECT substr(received_at, 1, 10) AS day, count(*) FILTER (WHERE kind = 'hard') AS hard,
         count(*) FILTER (WHERE kind = 'soft') AS soft, count(*) FILTER (WHERE kind = 'policy') AS policy,
         count(*) FILTER (WHERE kind = 'complaint') AS complaints
  FROM bounce_events WHERE received_at >= $1 GROUP BY 1`;

export const PG_PAPER_DAYS = `
  SELECT source, substr(ingested_at, 1, 10) AS day, sum(new_paper_count)::bigint AS papers
  FROM batches WHERE ingested_at >= $1 GROUP BY source, 2`;

export const PG_BY_STATE = `
  SELECT edition, status, count(*) AS n FROM digests WHERE edition >= $1 AND status <> 'sent' GROUP BY edition, status
  UNION ALL
  SELECT edition, NULL, count(*) FROM digests WHERE edition >= $1 GROUP BY edition`;

const WAITING_COLUMNS = `d.id, s.email, d.subscriber_id AS "subscriberId", d.status, d.edition, d.attempts,
  d.next_attempt_at AS "nextAttemptAt", d.claimed_at AS "claimedAt", d.smtp_code AS code, d.smtp_response AS response`;

/** What waits, soonest first, as SQLite's SQL_WAITING orders it (NULLS FIRST: SQLite's order for NULL). */
export const PG_WAITING = `
  SELECT ${WAITING_COLUMNS}
  FROM ((SELECT 0 AS k, id FROM digests WHERE status = 'planned' AND next_attempt_at IS NULL ORDER BY id LIMIT $1)
        UNION ALL
        (SELECT 0, id FROM digests WHERE status = 'planned' AND next_attempt_at IS NOT NULL ORDER BY next_attempt_at, id LIMIT $1)
        UNION ALL
        (SELECT 1, id FROM digests WHERE status = 'retry' ORDER BY next_attempt_at LIMIT $1)
        UNION ALL
        (SELECT 2, id FROM digests WHERE status = 'sending' ORDER BY next_attempt_at LIMIT $1)) w
  JOIN digests d ON d.id = w.id
  JOIN subscribers s ON s.id = d.subscriber_id
  ORDER BY w.k, d.next_attempt_at NULLS FIRST, d.id LIMIT $1`;

export const PG_WAITING_COUNT = `
  SELECT status, count(*) AS n FROM digests WHERE status IN ('planned', 'retry', 'sending') GROUP BY status`;

export const PG_LAST_ERRORS = `
  SELECT ${WAITING_COLUMNS}
  FROM digests d JOIN subscribers s ON s.id = d.subscriber_id
  WHERE d.edition >= $1 AND d.status IN ('retry', 'failed', 'unknown') AND d.smtp_response IS NOT NULL
  ORDER BY d.id DESC LIMIT $2`;
