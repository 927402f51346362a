// The console's read models on PostgreSQL (admin/subscribers.ts is SQLite's): subscriber search by the
// start of an address or of a topic (keyset pages), and one subscriber's detail from PostgreSQL's rows.
import type { BounceEventRow } from '../../bounces/service.ts';
import { consentHistory } from '../../consent/postgres.ts';
import type { Pg } from '../../db/postgres/pool.ts';
import type { Links } from '../../links.ts';
import { noticesOfPg } from '../../notices/postgres-store.ts';
import * as records from '../../subscribers/records/postgres.ts';
import { decodeTopicCursor, PAGE_SIZE, withWebViews, type LastDigestRow, type SearchHit, type SearchPage, type SubscriberDetail } from '../../admin/subscribers.ts';
import type { SearchQuery } from '../roster.ts';

// Case-insensitive, as SQLite's NOCASE range; starts_with keeps a prefix a prefix whatever the collation.
// In "C" order over migration 018's indexes: only there does PostgreSQL read the prefix as an index range.
export const SQL_BY_ADDRESS = `
  SELECT id, email, status FROM subscribers
  WHERE starts_with(lower(email) COLLATE "C", lower($1)) AND lower(email) COLLATE "C" > lower($2)
  ORDER BY lower(email) COLLATE "C" LIMIT $3`;

export const SQL_BY_TOPIC = `
  SELECT s.id, s.email, s.status, t.text AS topic FROM topics t JOIN subscribers s ON s.id = t.subscriber_id
  WHERE starts_with(lower(t.text) COLLATE "C", lower($1)) AND (lower(t.text) COLLATE "C", t.subscriber_id) > (lower($2), $3)
  ORDER BY lower(t.text) COLLATE "C", t.subscriber_id LIMIT $4`;

// One subscriber's last digests (unique index (subscriber_id, edition)).
const SQL_LAST_DIGESTS = `
  SELECT id, edition, status, paper_count AS "paperCount", sent_at AS "sentAt", smtp_response AS response,
         items IS NOT NULL AS viewable
  FROM digests WHERE subscriber_id = $1 ORDER BY edition DESC LIMIT 20`;

const SQL_BOUNCES = `
  SELECT digest_id AS "digestId", kind, channel, status, detail, outcome, received_at AS "receivedAt"
  FROM bounce_events WHERE subscriber_id = $1 ORDER BY received_at DESC LIMIT 50`;

export async function searchSubscribersPg(c: Pg, q: SearchQuery): Promise<SearchPage> {
  const text = q.text.trim();
  if (q.by === 'address') {
    const hits = (await c.query<SearchHit>(SQL_BY_ADDRESS, [text, q.after ?? '', PAGE_SIZE])).rows;
    return { hits, next: hits.length === PAGE_SIZE ? hits[hits.length - 1]!.email : undefined };
  }
  const [afterText, afterId] = decodeTopicCursor(q.after);
  const hits = (await c.query<SearchHit>(SQL_BY_TOPIC, [text, afterText, afterId, PAGE_SIZE])).rows;
  const last = hits[hits.length - 1];
  return { hits, next: hits.length === PAGE_SIZE && last ? `${last.id}:${last.topic}` : undefined };
}

/** With each sent digest's web view link, signed as the worker signed the email's (PostgreSQL's `links`). */
export async function subscriberDetailPg(c: Pg, links: Links, id: number): Promise<SubscriberDetail | undefined> {
  const subscriber = await records.findSubscriberById(c, id);
  if (!subscriber) return undefined;
  return {
    subscriber,
    topics: await records.listTopics(c, id),
    digests: withWebViews(links, subscriber, (await c.query<LastDigestRow>(SQL_LAST_DIGESTS, [id])).rows),
    bounces: (await c.query<BounceEventRow>(SQL_BOUNCES, [id])).rows,
    consent: await consentHistory(c, subscriber.email),
    notices: await noticesOfPg(c, id),
  };
}
