// The personal feed's link token: purpose `feed`, signed over the subscriber's token salt and, once the
// reader has asked for a new feed address, the feed's own salt (subscribers.feed_salt). Rotating it ends
// the old feed URL and leaves every other link (preferences, unsubscribe, digests) as it was; rotating the
// token salt still ends them all, the feed included.
import type { Clock } from '../clock.ts';
import type { Db } from '../db/open.ts';
import { statement } from '../db/statements.ts';
import { AppError } from '../errors.ts';
import { findSubscriberById, type SubscriberRecord } from '../subscribers/records/repo.ts';
import { invalidLink } from '../subscribers/records/link-tokens.ts';
import { newSalt, type Tokens, type TokenSubject } from '../tokens.ts';

/** The feed's own salt (NULL: never rotated). */
const SQL_FEED_SALT = `SELECT feed_salt FROM subscribers WHERE id = ?`;
/** A new feed address: the old feed token no longer verifies. */
const SQL_ROTATE_FEED_SALT = `UPDATE subscribers SET feed_salt = ? WHERE id = ?`;

/** What the feed token of `s` is signed for: the subscriber id and the salts it depends on. */
export function feedSubject(db: Db, s: TokenSubject): TokenSubject {
  const row = statement<[number], { feed_salt: string | null }>(db, SQL_FEED_SALT).get(s.id);
  return feedSubjectOf(s, row?.feed_salt ?? null);
}

export function rotateFeedSalt(db: Db, subscriberId: number): void {
  statement(db, SQL_ROTATE_FEED_SALT).run(newSalt(), subscriberId);
}

/**
 * The subscriber a feed token names, when its signature holds with their current feed salt; 403 otherwise.
 * A reader who unsubscribed gets 410: feed readers stop polling a gone feed.
 */
export function resolveFeedLink(db: Db, tokens: Tokens, clock: Clock, token: string): SubscriberRecord {
  const claimed = tokens.peek(token);
  const subscriber = claimed ? findSubscriberById(db, claimed.subscriberId) : undefined;
  return checkFeedToken(tokens, clock, token, subscriber, subscriber && feedSubject(db, subscriber));
}

/** The feed salt's part of a feed token's subject (either engine reads the salt from its own table). */
export function feedSubjectOf(s: TokenSubject, feedSalt: string | null): TokenSubject {
  return { id: s.id, tokenSalt: feedSalt === null ? s.tokenSalt : `${s.tokenSalt}.${feedSalt}` };
}

/** Either engine's check of a feed token against the subscriber it claims and their feed subject. */
export function checkFeedToken(tokens: Tokens, clock: Clock, token: string, subscriber: SubscriberRecord | undefined, subject: TokenSubject | undefined): SubscriberRecord {
  // verify() runs (and spends the same time) whether or not the subscriber exists.
  const check = tokens.verify(token, subject, clock.now());
  if (!check.ok || !subscriber || check.token.purpose !== 'feed') throw invalidLink('feed');
  if (subscriber.status === 'unsubscribed') {
    throw new AppError('FEED_GONE', 'This feed has ended: its reader unsubscribed. Subscribe again to get a new one.');
  }
  return subscriber;
}
