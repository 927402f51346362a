// On PostgreSQL a delivery writes its ledger row only, not its subscriber's (BENCHMARKS.md "the record without
// the subscriber's row"): what the watermark and the failure streak were kept for is read from the ledger.
// - The watermark is the higher of `subscribers.watermark` (moved at confirming, and by a late record of an
//   'unknown' row) and the to_paper of the subscriber's newest sent row. No row is planned for a reader while
//   one of theirs is open and each new row's range starts at this watermark, so a row recorded sent from
//   'sending' is their newest and its to_paper the highest sent: this is what `greatest` over every delivery was.
// - `hard_failures` counts permanent failures after the sent row `failures_after` (migration 020): once a
//   newer row is sent, the streak is over (0), as the per-delivery reset made it.
// The newest sent row: walked backwards on UNIQUE (subscriber_id, edition), one or two rows read.

/** `s`'s newest sent row as `alias`(sent_id, sent_to): for a FROM clause whose subscribers are `s`. */
export const newestSentJoin = (s: string, alias: string) => `
  LEFT JOIN LATERAL (SELECT x.id AS sent_id, x.to_paper AS sent_to FROM digests x
                     WHERE x.subscriber_id = ${s}.id AND x.status = 'sent' ORDER BY x.edition DESC LIMIT 1) ${alias} ON true`;

/** The watermark of subscriber `s`, given its newestSentJoin `n`. */
export const watermarkOf = (s: string, n: string) => `greatest(${s}.watermark, coalesce(${n}.sent_to, 0))`;

/** The watermark of subscriber `s` as one scalar subquery (evaluated only for the rows that reach it). */
export const watermarkExpr = (s: string) =>
  `greatest(${s}.watermark, coalesce((SELECT x.to_paper FROM digests x WHERE x.subscriber_id = ${s}.id AND x.status = 'sent'
                                       ORDER BY x.edition DESC LIMIT 1), 0))`;

/** Failures in a row of subscriber `s`, given its newestSentJoin `n`. */
export const hardFailuresOf = (s: string, n: string) =>
  `(CASE WHEN ${s}.failures_after IS NOT DISTINCT FROM ${n}.sent_id THEN ${s}.hard_failures ELSE 0 END)`;
