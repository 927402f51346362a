// The ledger's state changes during sending, as SQL. Each is one compare-and-set UPDATE; the transactions
// that group them are in states.ts. The state machine and the decisions behind it: port.ts, and
// BENCHMARKS.md "The ledger" (measurements).

/**
 * Automatic checkpoint of a connection that records deliveries: every this many WAL frames (SQLite's
 * default is 1000). About 100 digests' worth, as 1000 frames were before migration 007 made a digest
 * write ~6 pages instead of ~10: the WAL is synced only at a checkpoint (synchronous = NORMAL), so this
 * bounds what a power loss can roll back (BENCHMARKS.md, "The ledger").
 */
export const LEDGER_CHECKPOINT_FRAMES = 600;

/**
 * Claims the next row: a retry that has come due (earliest first), else a planned row (lowest id; rows
 * planned by releases before 002 may carry a next_attempt_at: those last, earliest first, as before).
 * The subqueries walk the digests_queue index (status, next_attempt_at, id DESC; only planned, retry and
 * sending rows: migration 007), so a claim stays O(log n) however many rows the ledger has. Planned rows
 * run backwards in it: the lowest id is read from the end of the planned range, next to the retry and
 * sending ranges the same transaction writes. `AND status IN (…)` is the compare-and-set.
 */
export const SQL_CLAIM_NEXT = `
  UPDATE digests
  SET status = 'sending', claimed_by = :claimant, claimed_at = :now
  WHERE id = coalesce(
          (SELECT id FROM digests WHERE status = 'retry' AND next_attempt_at <= :now ORDER BY next_attempt_at LIMIT 1),
          (SELECT id FROM digests WHERE status = 'planned' AND next_attempt_at IS NULL ORDER BY id LIMIT 1),
          (SELECT id FROM digests WHERE status = 'planned' AND next_attempt_at IS NOT NULL ORDER BY next_attempt_at, id LIMIT 1))
    AND status IN ('planned', 'retry')
  RETURNING id`;

/** Delivered. 'unknown' too: another process may have given up on our claim after its lease. */
export const SQL_MARK_SENT = `
  UPDATE digests
  SET status = 'sent', attempts = attempts + 1, message_id = :messageId, smtp_code = :code,
      smtp_response = :response, sent_at = :now, next_attempt_at = NULL
  WHERE id = :id AND claimed_by = :claimant AND status IN ('sending', 'unknown')`;


/** Temporary failure: retry at :nextAttemptAt, or (NULL) give up: retry-policy.ts decides which. */
export const SQL_MARK_RETRY = `
  UPDATE digests
  SET status = CASE WHEN :nextAttemptAt IS NULL THEN 'failed' ELSE 'retry' END,
      attempts = attempts + 1, next_attempt_at = :nextAttemptAt, smtp_code = :code, smtp_response = :response
  WHERE id = :id AND claimed_by = :claimant AND status = 'sending'
  RETURNING status`;

/** Permanent failure of this row. */
export const SQL_MARK_FAILED = `
  UPDATE digests
  SET status = 'failed', attempts = attempts + 1, next_attempt_at = NULL, smtp_code = :code, smtp_response = :response
  WHERE id = :id AND claimed_by = :claimant AND status = 'sending'`;

/** Not sent: the address left (unsubscribed) or was suppressed after planning. */
export const SQL_MARK_SKIPPED = `
  UPDATE digests SET status = 'suppressed', smtp_response = :response
  WHERE id = :id AND claimed_by = :claimant AND status = 'sending'`;

/**
 * Relay down: give back one failed attempt of a row of the streak, without burning it; due at once for the
 * next run. A row whose retry came due within the streak (a short SMTP_RETRY_BASE_MS, or a jitter near 0)
 * may be 'sending' again by now: its earlier attempt is refunded all the same and its new send left alone
 * (measured: without this, rows kept 2 burnt attempts of a relay outage with retries due after 1 ms).
 */
export const SQL_GIVE_BACK = `
  UPDATE digests
  SET attempts = max(attempts - 1, 0),
      status = CASE WHEN status = 'sending' THEN status ELSE 'retry' END,
      next_attempt_at = CASE WHEN status = 'sending' THEN next_attempt_at ELSE :now END,
      smtp_response = CASE WHEN status = 'sending' THEN smtp_response ELSE :response END
  WHERE id = :id AND claimed_by = :claimant AND status IN ('retry', 'failed', 'sending')`;

/** We stopped waiting for a send: its outcome is unknown, never resent (port.ts). */
export const SQL_MARK_UNKNOWN = `
  UPDATE digests SET status = 'unknown', smtp_response = :response
  WHERE id = :id AND claimed_by IS :claimant AND status = 'sending'`;

/** Claims still marked as in flight, lowest id first (sorted: a handful of rows, and digests_queue holds them by id descending). */
export const SQL_SENDING_ROWS = `SELECT id, claimed_by, claimed_at FROM digests WHERE status = 'sending' ORDER BY id`;

/** The earliest retry still to come. */
export const SQL_NEXT_RETRY_AT = `SELECT min(next_attempt_at) AS at FROM digests WHERE status = 'retry'`;

/** Rows waiting to be sent (for progress). */
export const SQL_OPEN_COUNT = `SELECT count(*) AS n FROM digests WHERE status = 'planned' OR status = 'retry' OR status = 'sending'`;
