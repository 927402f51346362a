// What operators see: per-edition counts and common failure reasons (`digest status`), and the operator
// figures (figures.ts) in Prometheus text format (GET /metrics). Read-only queries over the ledger. An edition is a
// delivery date in the subscribers' own time zones, so one day's count can span two UTC days.
import type { Db } from '../db/open.ts';
import { statement } from '../db/statements.ts';
import { systemClock } from '../clock.ts';
import { ALL_TIME, operatorFigures, type OperatorFigures } from './figures.ts';

export interface FailureReason {
  reason: string;
  count: number;
}

export interface EditionStatus {
  edition: string;
  /** Rows planned for the edition (every status). */
  planned: number;
  sent: number;
  /** planned + sending + retry: still to go. */
  pending: number;
  failed: number;
  suppressed: number;
  unknown: number;
  /** Most common reasons among failed, retrying and unknown rows, most frequent first. */
  topFailures: FailureReason[];
}

/** Counts per status for the most recent editions. */
const SQL_EDITION_COUNTS = `
  SELECT edition,
         count(*)                                          AS planned,
         sum(status = 'sent')                              AS sent,
         sum(status IN ('planned', 'sending', 'retry'))    AS pending,
         sum(status = 'failed')                            AS failed,
         sum(status = 'suppressed')                        AS suppressed,
         sum(status = 'unknown')                           AS unknown
  FROM digests
  WHERE edition IN (SELECT DISTINCT edition FROM digests ORDER BY edition DESC LIMIT :limit)
  GROUP BY edition
  ORDER BY edition DESC`;

/**
 * Raw failure responses of those editions, grouped; normalised and merged in JS. The rows come from the
 * partial index digests_trouble (migration 007), whose WHERE the query repeats word for word.
 */
const SQL_EDITION_FAILURES = `
  SELECT edition, smtp_code AS code, smtp_response AS response, count(*) AS n
  FROM digests
  WHERE edition IN (SELECT DISTINCT edition FROM digests ORDER BY edition DESC LIMIT :limit)
    AND (status = 'retry' OR status = 'failed' OR status = 'unknown') AND smtp_response IS NOT NULL
  GROUP BY edition, smtp_code, smtp_response`;

const SUBSCRIBER_STATUSES = ['pending', 'confirmed', 'unsubscribed', 'suppressed'] as const;
const TOP_REASONS = 3;

export function editionStatus(db: Db, opts: { limit: number }): EditionStatus[] {
  const limit = Math.max(1, Math.floor(opts.limit));
  return editionsWithReasons(
    statement(db, SQL_EDITION_COUNTS).all({ limit }) as EditionCounts[],
    statement(db, SQL_EDITION_FAILURES).all({ limit }) as EditionFailure[],
  );
}

export type EditionCounts = Omit<EditionStatus, 'topFailures'>;
/** One raw failure response of an edition and how many rows gave it. */
export interface EditionFailure {
  edition: string;
  code: number | null;
  response: string;
  n: number;
}

/** Each edition's counts with its most common failure reasons (normalised and merged here, whichever engine read them). */
export function editionsWithReasons(rows: EditionCounts[], failures: EditionFailure[]): EditionStatus[] {
  const reasons = new Map<string, Map<string, number>>();
  for (const f of failures) {
    const key = normaliseReason(f.code, f.response);
    const perEdition = reasons.get(f.edition) ?? new Map<string, number>();
    perEdition.set(key, (perEdition.get(key) ?? 0) + f.n);
    reasons.set(f.edition, perEdition);
  }
  return rows.map((r) => ({
    ...r,
    topFailures: [...(reasons.get(r.edition) ?? new Map<string, number>())]
      .map(([reason, count]) => ({ reason, count }))
      .sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason))
      .slice(0, TOP_REASONS),
  }));
}

/**
 * Groups replies that differ only by the address or a queue id:
 * "550 5.1.1 <a@x.org>: Recipient address rejected" and the same for b@y.org are one reason.
 */
export function normaliseReason(code: number | null, response: string): string {
  let text = response
    .replace(/<?[^\s<>@]+@[^\s<>@]+>?/g, '<address>')
    .replace(/\b(?=[A-Za-z0-9]*\d)[A-Za-z0-9]{10,}\b/g, '…')
    .replace(/\s+/g, ' ')
    .trim();
  if (text.length > 160) text = `${text.slice(0, 159)}…`;
  if (code !== null && !text.startsWith(String(code))) text = `${code} ${text}`;
  return text;
}

/** GET /metrics: the operator figures over all time. ALL_TIME reads the overdue figure the last tick stored, so no clock is read. */
export function metricsText(db: Db): string {
  return formatMetrics(operatorFigures(db, systemClock, ALL_TIME));
}

/** Prometheus text exposition (version 0.0.4) of the operator figures. */
export function formatMetrics(f: OperatorFigures): string {
  const t = f.ledger!;
  const subs = f.subscribers!;
  const out: string[] = [];
  const metric = (name: string, type: 'counter' | 'gauge', help: string, samples: Array<[string, number]>) => {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [labels, value] of samples) out.push(`${name}${labels} ${value}`);
  };
  metric('digest_editions_total', 'counter', 'Editions with at least one planned digest.', [['', t.editions]]);
  metric('digest_emails_planned_total', 'counter', 'Digest emails planned (ledger rows).', [['', t.planned]]);
  metric('digest_emails_sent_total', 'counter', 'Digest emails accepted by the SMTP relay.', [['', t.sent]]);
  metric('digest_emails_failed_total', 'counter', 'Digest emails failed (5xx, or retries exhausted).', [['', t.failed]]);
  metric('digest_emails_suppressed_total', 'counter', 'Digest emails not sent because the address was suppressed or unsubscribed.', [
    ['', t.suppressed],
  ]);
  metric('digest_emails_unknown_total', 'counter', 'Digest emails whose send was in flight when its process stopped (never resent).', [
    ['', t.unknown],
  ]);
  metric('digest_emails_pending', 'gauge', 'Digest emails still to send (planned, sending or retry).', [['', t.pending]]);
  metric('digest_emails_retrying', 'gauge', 'Digest emails waiting for a retry after a temporary failure.', [['', t.retrying]]);
  const overdue = f.overdue;
  metric(
    'digest_overdue_subscribers',
    'gauge',
    'Subscribers with matched papers waiting longer than their schedule allows (36 h daily, 8.5 days weekly), as of the last tick.',
    [['', overdue?.subscribers ?? 0]],
  );
  metric('digest_overdue_checked_timestamp_seconds', 'gauge', 'When the overdue count was last computed (0: never).', [
    ['', overdue ? Math.round(Date.parse(overdue.at) / 1000) : 0],
  ]);
  const reports = f.bounces!;
  metric('digest_bounces_total', 'counter', 'Bounces by kind: reports after delivery (DSNs, relay webhooks) and send-time refusals that are policy blocks or full mailboxes (policy: the receiver refused our mail as spam, blocklisted or unauthenticated; the reader stays subscribed); each digest counted once per kind.', [
    ['{kind="hard"}', reports.hard],
    ['{kind="soft"}', reports.soft],
    ['{kind="policy"}', reports.policy],
  ]);
  metric('digest_complaints_total', 'counter', 'Spam complaints received (ARF feedback loops, relay webhooks); each unsubscribed the address.', [
    ['', reports.complaint],
  ]);
  const n = f.notices!;
  metric('digest_confirmation_emails_total', 'counter', 'Confirmation and "already subscribed" emails by outcome (sent; failed for good; unknown: in flight when a process stopped).', [
    ['{status="sent"}', n.sent],
    ['{status="failed"}', n.failed],
    ['{status="unknown"}', n.unknown],
  ]);
  metric('digest_confirmation_emails_waiting', 'gauge', 'Confirmation emails not sent yet (new, in flight, or waiting for a retry after the relay failed).', [
    ['', n.planned + n.sending + n.retry],
  ]);
  metric('digest_confirmation_emails_retrying', 'gauge', 'Confirmation emails waiting for a retry after the relay failed (refused, TLS, AUTH, 4xx).', [['', n.retry]]);
  metric(
    'digest_subscribers',
    'gauge',
    'Subscribers by status.',
    SUBSCRIBER_STATUSES.map((s) => [`{status="${s}"}`, subs[s]]),
  );
  return `${out.join('\n')}\n`;
}
