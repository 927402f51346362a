// What a bounce or complaint does, whichever way it arrived (our SMTP receiver, a relay's webhook).
// The caller has already verified the digest's VERP tag: this maps the digest to its subscriber through
// the ledger row and acts in one transaction (kinds: classify.ts):
//   hard bounce   -> the address is suppressed at once
//   soft bounce   -> suppressed once SOFT_BOUNCES_TO_SUPPRESS soft bounces arrived within
//                    SOFT_BOUNCE_WINDOW_DAYS (weeks for a weekly reader), whatever the relay accepted in
//                    between: a relay's "250" says nothing about a mailbox that is full for weeks
//   policy block  -> nothing happens to the reader (the receiver refused us, not their address); recorded,
//                    counted and logged as an error for the operator
//   complaint     -> unsubscribed, and recorded
// A report for the same digest and kind is recorded once (UNIQUE in bounce_events): a replayed DSN or a
// webhook the relay retries changes nothing the second time.
import type { Clock } from '../clock.ts';
import type { Db } from '../db/open.ts';
import { statement } from '../db/statements.ts';
import type { Logger } from '../log.ts';
import { markSuppressed, markUnsubscribed } from '../subscribers/records/repo.ts';
import type { ReportKind } from './reports.ts';

/** smtp: our bounce receiver; mailgun, ses: their webhooks; send: the relay's answer at send time. */
export type BounceChannel = 'smtp' | 'mailgun' | 'ses' | 'send';

export interface BounceInput {
  digestId: number;
  kind: ReportKind;
  channel: BounceChannel;
  status: string | null;
  detail: string;
}

export type BounceOutcome = 'suppressed' | 'counted' | 'unsubscribed' | 'alerted' | 'none' | 'duplicate' | 'unknown-digest';

export interface BounceDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  config: { SOFT_BOUNCES_TO_SUPPRESS: number; SOFT_BOUNCE_WINDOW_DAYS: number };
}

/** The subscriber a digest was for, and how often they get one (a weekly reader's window is in weeks). */
const SQL_DIGEST_SUBSCRIBER = `
  SELECT d.subscriber_id AS subscriberId, s.frequency
  FROM digests d JOIN subscribers s ON s.id = d.subscriber_id WHERE d.id = ?`;

/** Soft bounces of one subscriber received since a time, this one included (index bounce_events_subscriber). */
const SQL_SOFT_SINCE = `
  SELECT count(*) AS n FROM bounce_events
  WHERE subscriber_id = :subscriberId AND received_at >= :since AND kind = 'soft'`;

/** Records the event unless this digest already has one of this kind (then nothing is returned). */
const SQL_INSERT_EVENT = `
  INSERT INTO bounce_events (digest_id, subscriber_id, kind, channel, status, detail, outcome, received_at)
  VALUES (:digestId, :subscriberId, :kind, :channel, :status, :detail, 'none', :now)
  ON CONFLICT (digest_id, kind) DO NOTHING
  RETURNING id`;

const SQL_SET_OUTCOME = `UPDATE bounce_events SET outcome = :outcome WHERE id = :id`;

// What each kind does to the subscriber is written by subscribers/records/repo.ts (the one writer of that table):
// hard and soft at the limit -> markSuppressed, complaint -> markUnsubscribed.

const DAY_MS = 86_400_000;

/** Start of the soft-bounce window for a subscriber of this frequency (a weekly reader's is in weeks). */
export function softWindowSince(config: BounceDeps['config'], frequency: string, now: Date): string {
  const days = config.SOFT_BOUNCE_WINDOW_DAYS * (frequency === 'weekly' ? 7 : 1);
  return new Date(now.getTime() - days * DAY_MS).toISOString();
}

/** Whether this subscriber's soft bounces in the window have reached the limit (this one counted). */
function softLimitReached(deps: BounceDeps, subscriberId: number, frequency: string, now: Date): boolean {
  const since = softWindowSince(deps.config, frequency, now);
  const n = statement<Record<string, unknown>, { n: number }>(deps.db, SQL_SOFT_SINCE).get({ subscriberId, since })!.n;
  return n >= deps.config.SOFT_BOUNCES_TO_SUPPRESS;
}

export function recordBounce(deps: BounceDeps, input: BounceInput): BounceOutcome {
  const { db, clock, logger } = deps;
  const at = clock.now();
  const now = at.toISOString();
  const outcome = db.transaction((): BounceOutcome => {
    const d = statement<[number], { subscriberId: number; frequency: string }>(db, SQL_DIGEST_SUBSCRIBER).get(input.digestId);
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
      result = softLimitReached(deps, subscriberId, d.frequency, at) && markSuppressed(db, subscriberId, now) ? 'suppressed' : 'counted';
    } else if (input.kind === 'policy') {
      result = 'alerted';
    } else if (markUnsubscribed(db, subscriberId, now)) {
      result = 'unsubscribed';
    }
    statement(db, SQL_SET_OUTCOME).run({ id: inserted.id, outcome: result });
    return result;
  }).immediate();
  logBounce(logger, input, outcome);
  return outcome;
}

/** The log line of one handled report, whichever store recorded it; a policy block is an error for the operator. */
export function logBounce(logger: Logger, input: BounceInput, outcome: BounceOutcome): void {
  const fields = { digest: input.digestId, kind: input.kind, channel: input.channel, status: input.status, outcome };
  if (input.kind === 'policy' && outcome === 'alerted') {
    // An alarm: receivers are refusing our mail as spam or for our reputation or authentication.
    logger.error({ ...fields, detail: input.detail }, 'policy block: a receiving server refused our mail (spam, blocklist, reputation or SPF/DKIM/DMARC); the reader stays subscribed, check the sending domain and IP');
  } else {
    logger.info(fields, 'bounce report');
  }
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
  const out: Record<ReportKind, number> = { hard: 0, soft: 0, policy: 0, complaint: 0 };
  for (const r of statement<[string], { kind: ReportKind; n: number }>(db, SQL_COUNTS_SINCE).all(sinceIso)) out[r.kind] = r.n;
  return out;
}
