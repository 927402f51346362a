// What a bounce or complaint does, whichever way it arrived (our SMTP receiver, a relay's webhook).
// The caller has already verified the digest's VERP tag: this maps the digest to its subscriber through
// the ledger row and acts in one transaction:
//   hard bounce (5.x.x)  -> the address is suppressed at once
//   soft bounce (4.x.x)  -> one more toward HARD_FAILURES_TO_SUPPRESS (the same counter as 5xx answers at
//                           send time; a delivered digest resets it), suppressed at the limit
//   complaint            -> unsubscribed, and recorded
// A report for the same digest and kind is recorded once (UNIQUE in bounce_events): a replayed DSN or a
// webhook the relay retries changes nothing the second time.
import type { Clock } from '../clock.ts';
import type { Db } from '../db/open.ts';
import { statement } from '../db/statements.ts';
import type { Logger } from '../log.ts';
import { countDeliveryFailure, markSuppressed, markUnsubscribed } from '../subscribers/repo.ts';
import type { ReportKind } from './reports.ts';

export type BounceChannel = 'smtp' | 'mailgun' | 'ses';

export interface BounceInput {
  digestId: number;
  kind: ReportKind;
  channel: BounceChannel;
  status: string | null;
  detail: string;
}

export type BounceOutcome = 'suppressed' | 'counted' | 'unsubscribed' | 'none' | 'duplicate' | 'unknown-digest';

export interface BounceDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  config: { HARD_FAILURES_TO_SUPPRESS: number };
}

/** The subscriber a digest was for. */
const SQL_DIGEST_SUBSCRIBER = `SELECT subscriber_id AS subscriberId FROM digests WHERE id = ?`;

/** Records the event unless this digest already has one of this kind (then nothing is returned). */
const SQL_INSERT_EVENT = `
  INSERT INTO bounce_events (digest_id, subscriber_id, kind, channel, status, detail, outcome, received_at)
  VALUES (:digestId, :subscriberId, :kind, :channel, :status, :detail, 'none', :now)
  ON CONFLICT (digest_id, kind) DO NOTHING
  RETURNING id`;

const SQL_SET_OUTCOME = `UPDATE bounce_events SET outcome = :outcome WHERE id = :id`;

// What each kind does to the subscriber is written by subscribers/repo.ts (the one writer of that table):
// hard -> markSuppressed, soft -> countDeliveryFailure, complaint -> markUnsubscribed.

export function recordBounce(deps: BounceDeps, input: BounceInput): BounceOutcome {
  const { db, clock, logger } = deps;
  const now = clock.now().toISOString();
  const outcome = db.transaction((): BounceOutcome => {
    const d = statement<[number], { subscriberId: number }>(db, SQL_DIGEST_SUBSCRIBER).get(input.digestId);
    if (!d) return 'unknown-digest';
    const subscriberId = d.subscriberId;
    const inserted = statement<Record<string, unknown>, { id: number }>(db, SQL_INSERT_EVENT).get({
      ...input,
      detail: input.detail.slice(0, 500),
      subscriberId,
      now,
    });
    if (!inserted) return 'duplicate';
    let result: BounceOutcome = 'none';
    if (input.kind === 'hard') {
      if (markSuppressed(db, subscriberId, now)) result = 'suppressed';
    } else if (input.kind === 'soft') {
      const status = countDeliveryFailure(db, subscriberId, deps.config.HARD_FAILURES_TO_SUPPRESS, now);
      result = status === 'suppressed' ? 'suppressed' : 'counted';
    } else if (markUnsubscribed(db, subscriberId, now)) {
      result = 'unsubscribed';
    }
    statement(db, SQL_SET_OUTCOME).run({ id: inserted.id, outcome: result });
    return result;
  }).immediate();
  logger.info({ digest: input.digestId, kind: input.kind, channel: input.channel, status: input.status, outcome }, 'bounce report');
  return outcome;
}

/** A recorded report: what came in, what it did, when. */
export interface BounceEventRow extends BounceInput {
  outcome: string;
  receivedAt: string;
}

/** One subscriber's reports, newest first (console detail page). */
const SQL_HISTORY = `
  SELECT digest_id AS digestId, kind, channel, status, detail, outcome, received_at AS receivedAt
  FROM bounce_events WHERE subscriber_id = ? ORDER BY received_at DESC LIMIT ?`;

export function bounceHistory(db: Db, subscriberId: number, limit = 50): BounceEventRow[] {
  return statement<[number, number], BounceEventRow>(db, SQL_HISTORY).all(subscriberId, limit);
}

/** Reports by kind since a time (digest status, /metrics with since = ''). */
const SQL_COUNTS_SINCE = `SELECT kind, count(*) AS n FROM bounce_events WHERE received_at >= ? GROUP BY kind`;

export function bounceCounts(db: Db, sinceIso = ''): Record<ReportKind, number> {
  const out: Record<ReportKind, number> = { hard: 0, soft: 0, complaint: 0 };
  for (const r of statement<[string], { kind: ReportKind; n: number }>(db, SQL_COUNTS_SINCE).all(sinceIso)) out[r.kind] = r.n;
  return out;
}
