// A subscriber's personal Atom feed (RFC 4287): the papers their topics matched in the last
// FEED_DAYS days, newest first, at a signed URL shown on the preferences page. One SQL
// query per request (topics -> query_matches -> papers), bounded by FEED_MAX_ENTRIES.
import type { Clock } from '../clock.ts';
import { statement } from '../db/statements.ts';
import type { Db } from '../db/open.ts';
import { parseStringArray } from '../db/json-columns.ts';
import type { Links } from '../links.ts';
import { resolveLink } from '../subscribers/records/link-tokens.ts';
import { feedSubject, resolveFeedLink, rotateFeedSalt } from './feed-link.ts';
import type { Tokens } from '../tokens.ts';

export const FEED_DAYS = 30;
export const FEED_MAX_ENTRIES = 500;

/** Matched papers first seen in the window, through the subscriber's unmuted topics, with the topics named. */
const SQL_FEED = `
  SELECT p.id, p.paper_key, p.title, p.abstract, p.authors, p.url, p.code_url, p.created_at, p.updated_at,
         group_concat(t.text, '; ') AS topics
  FROM topics t
  JOIN query_matches m ON m.query_id = t.query_id
  JOIN papers p ON p.id = m.paper_id
  WHERE t.subscriber_id = @sid AND t.muted = 0 AND p.created_at >= @since
  GROUP BY p.id
  ORDER BY p.id DESC
  LIMIT ${FEED_MAX_ENTRIES}`;

/** One feed entry as either engine's feed query returns it. */
export interface FeedRow {
  id: number;
  paper_key: string;
  title: string;
  abstract: string;
  authors: string;
  url: string;
  code_url: string | null;
  created_at: string;
  updated_at: string;
  topics: string;
}

/** XML text: the five predefined entities, and characters XML 1.0 forbids removed. */
export function xmlEscape(s: string): string {
  return s
    .replace(/[^\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

export type FeedService = ReturnType<typeof createFeedService>;

export function createFeedService(deps: { db: Db; clock: Clock; tokens: Tokens; links: Links }) {
  const { db, clock, tokens, links } = deps;
  return {
    /** A new feed address for the reader of this manage token (the old one then answers 403). */
    rotate(manageToken: string): void {
      const { subscriber } = resolveLink(db, tokens, clock, manageToken, 'manage');
      rotateFeedSalt(db, subscriber.id);
    },

    /** The feed document for a signed feed token (403 for anything else, 410 once its reader unsubscribed). */
    atom(token: string): string {
      const subscriber = resolveFeedLink(db, tokens, clock, token);
      const rows = statement<{ sid: number; since: string }, FeedRow>(db, SQL_FEED).all({ sid: subscriber.id, since: feedSince(clock) });
      return atomDocument({ links, now: clock.now(), subscriber, self: links.feed(feedSubject(db, subscriber)), rows });
    },
  };
}

/** The oldest paper a feed shows: first seen FEED_DAYS days ago. */
export function feedSince(clock: Clock): string {
  return new Date(clock.now().getTime() - FEED_DAYS * 86_400_000).toISOString();
}

/** The Atom document of a reader's feed rows (either engine's query gives them, newest first). */
export function atomDocument(f: { links: Links; now: Date; subscriber: { id: number; email: string }; self: string; rows: readonly FeedRow[] }): string {
  const { links, subscriber, rows } = f;
  const updated = rows.reduce((max, r) => (r.updated_at > max ? r.updated_at : max), rows[0]?.created_at ?? f.now.toISOString());
  return (
    `<?xml version="1.0" encoding="utf-8"?>\n` +
    `<feed xmlns="http://www.w3.org/2005/Atom">\n` +
    `  <id>${xmlEscape(`${links.home()}feed/subscriber-${subscriber.id}`)}</id>\n` +
    `  <title>Paper Digest: papers for ${xmlEscape(subscriber.email)}</title>\n` +
    `  <subtitle>Papers your topics matched in the last ${FEED_DAYS} days</subtitle>\n` +
    `  <link rel="self" type="application/atom+xml" href="${xmlEscape(f.self)}"/>\n` +
    `  <link rel="alternate" href="${xmlEscape(links.home())}"/>\n` +
    `  <updated>${xmlEscape(updated)}</updated>\n` +
    `  <generator>Paper Digest</generator>\n` +
    rows.map(entry).join('') +
    `</feed>\n`
  );
}

function entry(r: FeedRow): string {
  const authors = parseStringArray(r.authors)
    .map((a) => `    <author><name>${xmlEscape(a)}</name></author>\n`)
    .join('');
  const code = r.code_url ? `    <link rel="related" title="Code" href="${xmlEscape(r.code_url)}"/>\n` : '';
  return (
    `  <entry>\n` +
    `    <id>${xmlEscape(entryId(r))}</id>\n` +
    `    <title>${xmlEscape(r.title)}</title>\n` +
    `    <link rel="alternate" href="${xmlEscape(r.url)}"/>\n` +
    code +
    `    <updated>${xmlEscape(r.updated_at)}</updated>\n` +
    `    <published>${xmlEscape(r.created_at)}</published>\n` +
    (authors === '' ? `    <author><name>Unknown</name></author>\n` : authors) +
    `    <summary>${xmlEscape(r.abstract)}</summary>\n` +
    `    <category term="${xmlEscape(r.topics.slice(0, 200))}" label="Matched topics"/>\n` +
    `  </entry>\n`
  );
}

/** A stable id per paper: arXiv ids as their abs URL form, others as a tag URI-like string. */
function entryId(r: FeedRow): string {
  return /^\d{4}\.\d{4,5}$/.test(r.paper_key) ? `https://arxiv.org/abs/${r.paper_key}` : `urn:paper-digest:paper:${r.id}`;
}
