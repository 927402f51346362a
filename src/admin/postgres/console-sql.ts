// The console's overview and deliveries statements in PostgreSQL's words: the same rows as admin/overview.ts
// and admin/deliveries.ts read from SQLite, over the indexes migrations-pg/014_init.sql keeps for them
// (subscribers_confirmed_day, subscribers_unsubscribed_day, bounce_events_received). An edition's rows are
// read by primary key over its id range in digest_editions (migration 017: no index on edition, which every
// claim and record would pay for); `d.edition = e.edition` drops the neighbours' rows in that range.
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

/** Inside a LATERAL per digest_editions row: its rows by primary key. A plain join let the planner hash the whole table. */
const IN_EDITION = `d.id BETWEEN e.first_id AND e.last_id AND d.edition = e.edition`;

export const PG_DIGEST_DAYS = `
  SELECT e.edition AS day, c.sent, c.failed
  FROM digest_editions e
  CROSS JOIN LATERAL (SELECT count(*) AS n, count(*) FILTER (WHERE d.status = 'sent') AS sent,
                             count(*) FILTER (WHERE d.status IN ('failed', 'unknown')) AS failed
                      FROM digests d WHERE ${IN_EDITION}) c
  WHERE e.edition >= $1 AND e.edition <= $2 AND c.n > 0`;

export const PG_BOUNCE_DAYS = `
  SELECT substr(received_at, 1, 10) AS day, count(*) FILTER (WHERE kind = 'hard') AS hard,
         count(*) FILTER (WHERE kind = 'soft') AS soft, count(*) FILTER (WHERE kind = 'policy') AS policy,
         count(*) FILTER (WHERE kind = 'complaint') AS complaints
  FROM bounce_events WHERE received_at >= $1 GROUP BY 1`;

export const PG_PAPER_DAYS = `
  SELECT source, substr(ingested_at, 1, 10) AS day, sum(new_paper_count)::bigint AS papers
  FROM batches WHERE ingested_at >= $1 GROUP BY source, 2`;

export const PG_BY_STATE = `
  SELECT e.edition, c.status, c.n
  FROM digest_editions e
  CROSS JOIN LATERAL (SELECT d.status, count(*) AS n FROM digests d WHERE ${IN_EDITION} AND d.status <> 'sent' GROUP BY d.status) c
  WHERE e.edition >= $1
  UNION ALL
  SELECT e.edition, NULL, c.n
  FROM digest_editions e CROSS JOIN LATERAL (SELECT count(*) AS n FROM digests d WHERE ${IN_EDITION}) c
  WHERE e.edition >= $1 AND c.n > 0`;

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
        (SELECT 2, id FROM digests WHERE status = 'sending' AND claimed_by IS NOT NULL ORDER BY next_attempt_at LIMIT $1)) w
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
