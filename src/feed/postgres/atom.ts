// A reader's personal Atom feed on PostgreSQL (DATABASE_URL=postgres://…): the same token, window, entries
// and document as atom.ts on SQLite, from PostgreSQL's topics, matches and papers; "new feed address"
// rotates PostgreSQL's feed salt. A lost database answers 503 (answerDbLoss).
import type pg from 'pg';
import type { Clock } from '../../clock.ts';
import { answerDbLoss } from '../../db/postgres/retry.ts';
import { newSalt, type Tokens } from '../../tokens.ts';
import type { Links } from '../../links.ts';
import { resolveLinkPg } from '../../subscribers/records/link-tokens.ts';
import * as records from '../../subscribers/records/postgres.ts';
import { atomDocument, FEED_MAX_ENTRIES, feedSince, type FeedRow } from '../atom.ts';
import { checkFeedToken, feedSubjectOf } from '../feed-link.ts';
import type { ReaderFeeds } from '../port.ts';

/** atom.ts SQL_FEED: matched papers first seen in the window, through the reader's unmuted topics, topics named. */
const SQL_FEED = `
  SELECT p.id, p.paper_key, p.title, p.abstract, p.authors, p.url, p.code_url, p.created_at, p.updated_at,
         string_agg(t.text, '; ' ORDER BY t.position) AS topics
  FROM topics t
  JOIN query_matches m ON m.query_id = t.query_id
  JOIN papers p ON p.id = m.paper_id
  WHERE t.subscriber_id = $1 AND t.muted = 0 AND p.created_at >= $2
  GROUP BY p.id
  ORDER BY p.id DESC
  LIMIT ${FEED_MAX_ENTRIES}`;

const SQL_ROTATE_FEED_SALT = `UPDATE subscribers SET feed_salt = $2 WHERE id = $1`;

export function createPostgresFeeds(deps: { pool: pg.Pool; clock: Clock; tokens: Tokens; links: Links }): ReaderFeeds {
  const { pool, clock, tokens, links } = deps;
  return {
    engine: 'postgres',
    holdsReader: (token) =>
      answerDbLoss(async () => {
        const claimed = tokens.peek(token);
        return claimed !== null && (await records.findSubscriberById(pool, claimed.subscriberId)) !== undefined;
      }),
    rotate: (manageToken) =>
      answerDbLoss(async () => {
        const { subscriber } = await resolveLinkPg(pool, tokens, clock, manageToken, 'manage');
        await pool.query(SQL_ROTATE_FEED_SALT, [subscriber.id, newSalt()]);
      }),
    atom: (token) =>
      answerDbLoss(async () => {
        const claimed = tokens.peek(token);
        const found = claimed ? await records.findSubscriberById(pool, claimed.subscriberId) : undefined;
        const subject = found && feedSubjectOf(found, await records.feedSalt(pool, found.id));
        const subscriber = checkFeedToken(tokens, clock, token, found, subject);
        const rows = (await pool.query<FeedRow>(SQL_FEED, [subscriber.id, feedSince(clock)])).rows;
        return atomDocument({ links, now: clock.now(), subscriber, self: links.feed(subject!), rows });
      }),
  };
}
