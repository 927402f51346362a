// The ledger's statements on PostgreSQL: the same state machine as src/send/ledger.ts (read its
// decisions first), with PostgreSQL's means for many processes on many machines.
//   planned/retry --claim (batch, FOR UPDATE SKIP LOCKED)--> sending --> sent | retry | failed
//                                                                   \--> unknown (claimant died)
// Every change after the claim is a compare-and-set on (id, claimed_by, status).
import { hardFailuresOf, newestSentJoin } from '../../subscribers/records/postgres-delivered.ts';

/**
 * Claims up to $3 rows in one statement (one round trip): due retries (and rows planned with a time),
 * earliest first, then planned rows by lowest id for what is left, as in SQLite. SKIP LOCKED: rows another
 * worker is claiming this very moment are passed over, not waited for; the status again in the UPDATE is
 * the compare-and-set; sent in that order (due first). A CTE is read only as far as the LIMIT asks, so `planned` locks only what is left
 * (a LIMIT of $3 minus a count instead lost the row estimate: a seq scan and hash join, 137 ms per claim).
 * The UPDATE finds each locked row by its ctid (a Tid Scan), not by a second walk of the primary key: the row
 * is ours from the lock to the end of the statement, so its version cannot move; id and status are still
 * checked (BENCHMARKS.md "claim and record, fewer pages per digest": 2 buffer reads a row less).
 * Planned rows start above $4, the claimant's cursor (PgLedger.claimBatch): the index keeps a sent row's old
 * entry until VACUUM, so a walk from the lowest id read every row sent so far (1,386 buffers, 8 ms a claim
 * half way through a 1M edition).
 */
export const SQL_CLAIM = `
  WITH due AS (
    SELECT ctid, id FROM digests
    WHERE status IN ('retry', 'planned') AND next_attempt_at IS NOT NULL AND next_attempt_at <= $2
    ORDER BY next_attempt_at, id LIMIT $3
    FOR UPDATE SKIP LOCKED),
  planned AS (
    SELECT ctid, id FROM digests
    WHERE status = 'planned' AND next_attempt_at IS NULL AND id > $4
    ORDER BY id LIMIT $3
    FOR UPDATE SKIP LOCKED),
  next AS (SELECT ctid, id FROM (SELECT ctid, id FROM due UNION ALL SELECT ctid, id FROM planned) AS both_kinds LIMIT $3),
  claimed AS (
    UPDATE digests d SET status = 'sending', claimed_by = $1, claimed_at = $2
    FROM next WHERE d.ctid = next.ctid AND d.id = next.id AND d.status IN ('retry', 'planned')
    RETURNING d.id, d.subscriber_id, d.edition, d.to_paper, d.verp_nonce, d.attempts, d.next_attempt_at, d.ctid)
  SELECT id, subscriber_id, edition, to_paper, verp_nonce, attempts, ctid::text AS place, next_attempt_at IS NULL AS fresh
  FROM claimed ORDER BY next_attempt_at NULLS LAST, id`;

const SET_SENT = `status = 'sent', attempts = d.attempts + 1, message_id = r.message_id, smtp_code = r.code,
        smtp_response = r.response, sent_at = r.at, next_attempt_at = NULL`;

/**
 * Delivered rows ($1 ids, $3 message ids, $4 codes, $5 answers, $6 times), in ONE statement (one round trip,
 * one commit). 'unknown' too: someone may have given up on our claim (lease, lost liveness lock) while we were
 * still sending it; nobody else sends an unknown row. The subscriber's row is not written (its watermark is
 * read from the newest sent row: subscribers/records/postgres-delivered.ts), except for a row recorded from
 * 'unknown': a newer row of its reader may have been planned meanwhile, so its to_paper goes into the
 * watermark column and ends the failure streak, as every delivery did before migration 020. Only rows the
 * first update did not record are looked up for that (`NOT IN`): none, unless one was marked unknown.
 */
export const SQL_MARK_SENT = `
  WITH r AS (
    SELECT * FROM unnest($1::bigint[], $3::text[], $4::int[], $5::text[], $6::text[]) AS r(id, message_id, code, response, at)),
  d AS (
    UPDATE digests d SET ${SET_SENT}
    FROM r WHERE d.id = r.id AND d.claimed_by = $2 AND d.status = 'sending'
    RETURNING d.id),
  late AS (
    UPDATE digests d SET ${SET_SENT}
    FROM r WHERE d.id = r.id AND d.claimed_by = $2 AND d.status = 'unknown' AND r.id NOT IN (SELECT id FROM d)
    RETURNING d.id, d.subscriber_id, d.to_paper),
  w AS (
    SELECT subscriber_id, max(to_paper) AS to_paper FROM late GROUP BY subscriber_id),
  s AS (
    UPDATE subscribers s SET watermark = greatest(s.watermark, w.to_paper), hard_failures = 0
    FROM w WHERE s.id = w.subscriber_id)
  SELECT id FROM d UNION ALL SELECT id FROM late`;

/**
 * SQL_MARK_SENT for rows found by the place ($7, tids) their claim returned: a Tid Scan instead of a primary-key
 * walk per row. A row whose version moved since (another session marked it unknown) is not found here, never
 * wrongly found (id, claimant and status are checked too): the ledger records those by id (ledger.ts recordSent).
 */
export const SQL_MARK_SENT_AT = SQL_MARK_SENT.replace(
  'unnest($1::bigint[], $3::text[], $4::int[], $5::text[], $6::text[]) AS r(id, message_id, code, response, at)',
  'unnest($1::bigint[], $3::text[], $4::int[], $5::text[], $6::text[], $7::tid[]) AS r(id, message_id, code, response, at, place)',
).replaceAll('FROM r WHERE d.id = r.id AND', 'FROM r WHERE d.ctid = r.place AND d.id = r.id AND');

/** Temporary failure: retry at $3, or ($3 NULL: tries used up) give up. */
export const SQL_MARK_RETRY = `
  UPDATE digests
  SET status = CASE WHEN $3::text IS NULL THEN 'failed' ELSE 'retry' END,
      attempts = attempts + 1, next_attempt_at = $3, smtp_code = $4, smtp_response = $5
  WHERE id = $1 AND claimed_by = $2 AND status = 'sending'
  RETURNING status`;

/**
 * Permanent failure, and one more hard failure of the subscriber (suppressed at $5), in one statement.
 * The subscriber's update is the same rule as subscribers/repo.ts's SQL_COUNT_FAILURE, the streak counted
 * after the subscriber's newest sent row (restarted at 1 when a row was sent since the last failure counted).
 */
export const SQL_MARK_FAILED = `
  WITH d AS (
    UPDATE digests SET status = 'failed', attempts = attempts + 1, next_attempt_at = NULL, smtp_code = $3, smtp_response = $4
    WHERE id = $1 AND claimed_by = $2 AND status = 'sending'
    RETURNING subscriber_id),
  n AS (
    SELECT s.id, ${hardFailuresOf('s', 'ns')} + 1 AS k, ns.sent_id
    FROM d JOIN subscribers s ON s.id = d.subscriber_id ${newestSentJoin('s', 'ns')})
  UPDATE subscribers s
  SET hard_failures = n.k, failures_after = n.sent_id,
      status = CASE WHEN n.k >= $5 AND status = 'confirmed' THEN 'suppressed' ELSE status END,
      suppressed_at = CASE WHEN n.k >= $5 AND status = 'confirmed' THEN $6 ELSE suppressed_at END,
      opt_out_reason = CASE WHEN n.k >= $5 AND status = 'confirmed' THEN 'hard-bounce' ELSE opt_out_reason END,
      opt_out_detail = CASE WHEN n.k >= $5 AND status = 'confirmed'
                            THEN n.k || ' delivery failures in a row (5xx answers or soft bounces)' ELSE opt_out_detail END
  FROM n WHERE s.id = n.id
  RETURNING s.status`;

/** Not sent: the address is no longer confirmed (unsubscribed, suppressed since planning); as SQLite's SQL_MARK_SKIPPED. */
export const SQL_MARK_SKIPPED = `
  UPDATE digests SET status = 'suppressed', smtp_response = $3
  WHERE id = $1 AND claimed_by = $2 AND status = 'sending'`;

/** Nothing was sent and sending cannot work (unreadable row, render error): failed, no hard failure of the address. */
/** Refused by the relay for a reason that is not the address's (a policy block, a full mailbox): failed, no hard failure counted; the bounce store records it. */
export const SQL_MARK_REFUSED = `
  UPDATE digests SET status = 'failed', attempts = attempts + 1, next_attempt_at = NULL, smtp_code = $3, smtp_response = $4
  WHERE id = $1 AND claimed_by = $2 AND status = 'sending'`;

export const SQL_MARK_BROKEN = `
  UPDATE digests SET status = 'failed', attempts = attempts + 1, next_attempt_at = NULL, smtp_code = NULL, smtp_response = $3
  WHERE id = $1 AND claimed_by = $2 AND status = 'sending'`;

/** We stopped waiting for a send, or its claimant is gone: never resent (see src/send/ledger.ts). */
export const SQL_MARK_UNKNOWN = `
  UPDATE digests SET status = 'unknown', smtp_response = $3
  WHERE id = ANY($1::bigint[]) AND claimed_by = $2 AND status = 'sending'`;

/**
 * Rows of a claim never started (a worker stopping cleanly): back where they were, for another worker. A row
 * tried before (attempts, or given back after a relay-down: its response says so) goes back to 'retry', due
 * when it was; else 'planned'.
 */
export const SQL_RELEASE = `
  UPDATE digests SET status = CASE WHEN attempts > 0 OR smtp_response IS NOT NULL THEN 'retry' ELSE 'planned' END,
         claimed_by = NULL, claimed_at = NULL
  WHERE id = ANY($1::bigint[]) AND claimed_by = $2 AND status = 'sending'`;

/**
 * Relay down (as SQLite's SQL_GIVE_BACK): rows of the streak that paused the run go back to 'retry', due at
 * once ($4), each try of the streak given back ($2: how many per row), so a relay outage never fails a digest.
 */
export const SQL_GIVE_BACK = `
  UPDATE digests d SET attempts = greatest(d.attempts - g.n, 0), status = 'retry', next_attempt_at = $4, smtp_response = $5
  FROM unnest($1::bigint[], $2::int[]) AS g(id, n)
  WHERE d.id = g.id AND d.claimed_by = $3 AND d.status IN ('retry', 'failed')`;

/** The earliest retry still to come (a run waits for it within its retry window, as on SQLite). */
export const SQL_NEXT_RETRY_AT = `SELECT min(next_attempt_at) AS at FROM digests WHERE status = 'retry'`;

/**
 * Claimants of rows in flight, with their oldest claim. `claimed_by IS NOT NULL` (every claim sets it, on
 * both engines) is digests_open's range of claimed rows: without it the scan takes every planned row too.
 */
export const SQL_CLAIMANTS = `
  SELECT claimed_by, min(claimed_at) AS oldest FROM digests
  WHERE status = 'sending' AND claimed_by IS NOT NULL GROUP BY claimed_by`;

/** One claimant's rows in flight, all at once. */
export const SQL_MARK_CLAIMANT_UNKNOWN = `
  UPDATE digests SET status = 'unknown', smtp_response = $2
  WHERE status = 'sending' AND claimed_by = $1
  RETURNING id`;

export const SQL_OPEN_COUNT = `SELECT count(*)::int AS n FROM digests WHERE status IN ('planned', 'retry', 'sending')`;

/**
 * After a lost connection: rows this claimant holds but never started sending (their claim committed,
 * its answer was lost; or another worker marked them unknown while our liveness lock was down) go back
 * to be claimed again. $2: every row the worker knows (queued, started, just claimed): never touched here.
 */
export const SQL_RELEASE_ORPHANS = `
  UPDATE digests SET status = CASE WHEN attempts > 0 THEN 'retry' ELSE 'planned' END,
         claimed_by = NULL, claimed_at = NULL,
         smtp_response = CASE WHEN status = 'unknown' THEN NULL ELSE smtp_response END
  WHERE claimed_by = $1 AND status IN ('sending', 'unknown') AND NOT (id = ANY($2::bigint[]))
  RETURNING id`;
