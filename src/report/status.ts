// What operators see: per-edition counts and common failure reasons (`digest status`), and the same
// counts in Prometheus text format (GET /metrics). Read-only queries over the ledger. An edition is a
// delivery date in the subscribers' own time zones, so one day's count can span two UTC days.
import { bounceCounts } from '../bounces/service.ts';
import type { Db } from '../db/open.ts';
import { statement } from '../db/statements.ts';
import { storedOverdue } from './overdue.ts';
import { noticeCounts } from '../notices/repo.ts';

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

/** Ledger totals for the metrics endpoint. */
const SQL_TOTALS = `
  SELECT count(DISTINCT edition)                       AS editions,
         count(*)                                      AS planned,
         coalesce(sum(status = 'sent'), 0)             AS sent,
         coalesce(sum(status = 'failed'), 0)           AS failed,
         coalesce(sum(status = 'suppressed'), 0)       AS suppressed,
         coalesce(sum(status = 'unknown'), 0)          AS unknown,
         coalesce(sum(status IN ('planned', 'sending', 'retry')), 0) AS pending,
         coalesce(sum(status = 'retry'), 0)            AS retrying
  FROM digests`;

/** Digests sent for the editions (local delivery dates) since a day: covered by digests_edition, no scan. */
const SQL_SENT_SINCE = `SELECT count(*) AS n FROM digests WHERE edition >= ? AND status = 'sent'`;

/** Digests sent since a time (by edition date, so within a day of the time zones' spread). */
export function sentSince(db: Db, sinceIso: string): number {
  return (statement(db, SQL_SENT_SINCE).get(sinceIso.slice(0, 10)) as { n: number }).n;
}

const SQL_SUBSCRIBERS_BY_STATUS = `SELECT status, count(*) AS n FROM subscribers GROUP BY status`;

const SUBSCRIBER_STATUSES = ['pending', 'confirmed', 'unsubscribed', 'suppressed'] as const;
const TOP_REASONS = 3;

export function editionStatus(db: Db, opts: { limit: number }): EditionStatus[] {
  const limit = Math.max(1, Math.floor(opts.limit));
  const rows = statement(db, SQL_EDITION_COUNTS).all({ limit }) as Omit<EditionStatus, 'topFailures'>[];
  const reasons = new Map<string, Map<string, number>>();
  for (const f of statement(db, SQL_EDITION_FAILURES).all({ limit }) as { edition: string; code: number | null; response: string; n: number }[]) {
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

/** Prometheus text exposition (version 0.0.4) of the ledger and subscriber counts. */
export function metricsText(db: Db): string {
  const t = statement(db, SQL_TOTALS).get() as Record<string, number>;
  const subs = new Map<string, number>();
  for (const r of statement(db, SQL_SUBSCRIBERS_BY_STATUS).all() as { status: string; n: number }[]) subs.set(r.status, r.n);

  const out: string[] = [];
  const metric = (name: string, type: 'counter' | 'gauge', help: string, samples: Array<[string, number]>) => {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [labels, value] of samples) out.push(`${name}${labels} ${value}`);
  };
  metric('digest_editions_total', 'counter', 'Editions with at least one planned digest.', [['', t.editions ?? 0]]);
  metric('digest_emails_planned_total', 'counter', 'Digest emails planned (ledger rows).', [['', t.planned ?? 0]]);
  metric('digest_emails_sent_total', 'counter', 'Digest emails accepted by the SMTP relay.', [['', t.sent ?? 0]]);
  metric('digest_emails_failed_total', 'counter', 'Digest emails failed (5xx, or retries exhausted).', [['', t.failed ?? 0]]);
  metric('digest_emails_suppressed_total', 'counter', 'Digest emails not sent because the address was suppressed or unsubscribed.', [
    ['', t.suppressed ?? 0],
  ]);
  metric('digest_emails_unknown_total', 'counter', 'Digest emails whose send was in flight when its process stopped (never resent).', [
    ['', t.unknown ?? 0],
  ]);
  metric('digest_emails_pending', 'gauge', 'Digest emails still to send (planned, sending or retry).', [['', t.pending ?? 0]]);
  metric('digest_emails_retrying', 'gauge', 'Digest emails waiting for a retry after a temporary failure.', [['', t.retrying ?? 0]]);
  const overdue = storedOverdue(db);
  metric(
    'digest_overdue_subscribers',
    'gauge',
    'Subscribers with matched papers waiting longer than their schedule allows (36 h daily, 8.5 days weekly), as of the last tick.',
    [['', overdue?.subscribers ?? 0]],
  );
  metric('digest_overdue_checked_timestamp_seconds', 'gauge', 'When the overdue count was last computed (0: never).', [
    ['', overdue ? Math.round(Date.parse(overdue.at) / 1000) : 0],
  ]);
  const reports = bounceCounts(db);
  metric('digest_bounces_total', 'counter', 'Bounces by kind: reports after delivery (DSNs, relay webhooks) and send-time refusals that are policy blocks or full mailboxes (policy: the receiver refused our mail as spam, blocklisted or unauthenticated; the reader stays subscribed); each digest counted once per kind.', [
    ['{kind="hard"}', reports.hard],
    ['{kind="soft"}', reports.soft],
    ['{kind="policy"}', reports.policy],
  ]);
  metric('digest_complaints_total', 'counter', 'Spam complaints received (ARF feedback loops, relay webhooks); each unsubscribed the address.', [
    ['', reports.complaint],
  ]);
  const n = noticeCounts(db);
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
    SUBSCRIBER_STATUSES.map((s) => [`{status="${s}"}`, subs.get(s) ?? 0]),
  );
  return `${out.join('\n')}\n`;
}
