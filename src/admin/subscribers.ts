// The console's subscribers: search by address or topic (a prefix range over an index, keyset pages),
// one subscriber's detail (status, topics, schedule, last digests with web views, bounce history) and the
// operator's actions on them. Named queries; the routes only call these.
import type { Clock } from '../clock.ts';
import type { Db } from '../db/open.ts';
import { statement } from '../db/statements.ts';
import type { Links } from '../links.ts';
import { bounceHistory, type BounceEventRow } from '../bounces/service.ts';
import { deleteSubscriberRow, findSubscriberById, listTopics, markSuppressed, markUnsubscribed, type SubscriberRecord } from '../subscribers/records/repo.ts';
import type { Topic } from '../types.ts';
import { consentHistory, type ConsentEvent } from '../consent/history.ts';
import { noticesOf, type Notice } from '../notices/repo.ts';

export const PAGE_SIZE = 50;
/** Above every character: `prefix` <= x < prefix + TOP is "x starts with prefix" (NOCASE folds ASCII). */
const TOP = '\u{10FFFF}';

/** Addresses from a prefix, after the last address of the previous page (subscribers' NOCASE unique index). */
const SQL_BY_ADDRESS = `
  SELECT id, email, status FROM subscribers
  WHERE email >= :lo AND email < :hi AND email > :after
  ORDER BY email LIMIT :limit`;

/** Subscribers with a topic starting with the text (index topics_text (text NOCASE, subscriber_id)). */
const SQL_BY_TOPIC = `
  SELECT s.id, s.email, s.status, t.text AS topic FROM topics t JOIN subscribers s ON s.id = t.subscriber_id
  WHERE t.text COLLATE NOCASE >= :lo AND t.text COLLATE NOCASE < :hi
    AND (t.text COLLATE NOCASE, t.subscriber_id) > (:afterText, :afterId)
  ORDER BY t.text COLLATE NOCASE, t.subscriber_id LIMIT :limit`;

/** One subscriber's last digests (unique index (subscriber_id, edition)). */
const SQL_LAST_DIGESTS = `
  SELECT id, edition, status, paper_count AS paperCount, sent_at AS sentAt, smtp_response AS response,
         items IS NOT NULL AS viewable
  FROM digests WHERE subscriber_id = ? ORDER BY edition DESC LIMIT 20`;



export interface SearchHit {
  id: number;
  email: string;
  status: string;
  topic?: string;
}

export interface SearchPage {
  hits: SearchHit[];
  /** Opaque cursor for the next page, when there may be one. */
  next: string | undefined;
}

export function searchSubscribers(db: Db, q: { by: 'address' | 'topic'; text: string; after?: string | undefined }): SearchPage {
  const text = q.text.trim();
  if (q.by === 'address') {
    const hits = statement<Record<string, unknown>, SearchHit>(db, SQL_BY_ADDRESS).all({ lo: text, hi: text + TOP, after: q.after ?? '', limit: PAGE_SIZE });
    return { hits, next: hits.length === PAGE_SIZE ? hits[hits.length - 1]!.email : undefined };
  }
  const [afterText, afterId] = decodeTopicCursor(q.after);
  const hits = statement<Record<string, unknown>, SearchHit>(db, SQL_BY_TOPIC).all({ lo: text, hi: text + TOP, afterText, afterId, limit: PAGE_SIZE });
  const last = hits[hits.length - 1];
  return { hits, next: hits.length === PAGE_SIZE && last ? `${last.id}:${last.topic}` : undefined };
}

export function decodeTopicCursor(after: string | undefined): [string, number] {
  const m = after ? /^(\d+):(.*)$/s.exec(after) : null;
  return m ? [m[2]!, Number(m[1])] : ['', 0];
}

export interface SubscriberDetail {
  subscriber: SubscriberRecord;
  topics: Topic[];
  digests: Array<{ id: number; edition: string; status: string; paperCount: number; sentAt: string | null; response: string | null; webView?: string }>;
  bounces: BounceEventRow[];
  /** The address's opt-out history, newest first (kept by address: it outlives a delete). */
  consent: ConsentEvent[];
  /** Its last confirmation emails and what became of them. */
  notices: Notice[];
}

/** A subscriber's last digests as either engine reads them: `viewable` when the row still holds its papers. */
export type LastDigestRow = Omit<SubscriberDetail['digests'][number], 'webView'> & { viewable: number | boolean };

/** The console's "web view" link of each sent digest that still holds its papers (the link the email carried). */
export function withWebViews(links: Links, subscriber: SubscriberRecord, rows: LastDigestRow[]): SubscriberDetail['digests'] {
  return rows.map(({ viewable, ...d }) => ({ ...d, webView: viewable && d.status === 'sent' ? links.webView(subscriber, d.id) : undefined }));
}

export function subscriberDetail(db: Db, links: Links, id: number): SubscriberDetail | undefined {
  const subscriber = findSubscriberById(db, id);
  if (!subscriber) return undefined;
  const digests = withWebViews(links, subscriber, statement<[number], LastDigestRow>(db, SQL_LAST_DIGESTS).all(id));
  return {
    subscriber,
    topics: listTopics(db, id),
    digests,
    bounces: bounceHistory(db, id),
    consent: consentHistory(db, subscriber.email),
    notices: noticesOf(db, id),
  };
}

/** The operator's actions. Each returns false when it did not apply (unknown id, already in that state). */
export function suppressSubscriber(db: Db, clock: Clock, id: number, detail = ''): boolean {
  return markSuppressed(db, id, clock.now().toISOString(), { kind: 'operator', detail: detail || 'suppressed from the console' });
}

export function unsubscribeSubscriber(db: Db, clock: Clock, id: number): boolean {
  return markUnsubscribed(db, id, clock.now().toISOString(), { kind: 'unsubscribe', detail: 'by the operator (console)' });
}

export function deleteSubscriber(db: Db, id: number): boolean {
  return deleteSubscriberRow(db, id);
}
