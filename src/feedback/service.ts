// Feedback from the email (issue 13): "more like this" / "less like this" on a paper, and following
// one of its authors. Every link is signed for one subscriber and one paper (purpose paper:<id>), so a
// link forged, altered to name another paper, or taken from another subscriber's email is refused
// (403). A GET only describes; the POST acts (mail scanners open links, they do not submit forms).
import type { Clock } from '../clock.ts';
import { statement } from '../db/statements.ts';
import type { Db } from '../db/open.ts';
import { paperFromRow, type PaperRow } from '../db/paper-row.ts';
import { AppError } from '../errors.ts';
import type { Links } from '../links.ts';
import type { Logger } from '../log.ts';
import { invalidLink, resolveLink } from '../subscribers/link-tokens.ts';
import * as repo from '../subscribers/repo.ts';
import type { SubscriberRecord } from '../subscribers/repo.ts';
import type { Tokens } from '../tokens.ts';
import { ensureQuery } from '../topics/matcher.ts';
import { MAX_TOPICS, parseTopic } from '../topics/parse.ts';
import { recordVote } from './profile.ts';
import type { Paper } from '../types.ts';

/** The paper a feedback link names: what its page shows. */
const SQL_PAPER_LINK_FIELDS = 'SELECT id, title, url, authors FROM papers WHERE id = ?';

export type Direction = 'more' | 'less';

export interface FeedbackDeps {
  db: Db;
  clock: Clock;
  tokens: Tokens;
  links: Links;
  logger: Logger;
}

type LinkedPaper = Pick<Paper, 'id' | 'title' | 'url' | 'authors'>;

/** The subscriber's topics that matched this paper (what "less like this" offers to mute). */
const SQL_MATCHING_TOPICS = `
  SELECT t.id, t.text, t.muted FROM topics t JOIN query_matches m ON m.query_id = t.query_id
  WHERE t.subscriber_id = ? AND m.paper_id = ? ORDER BY t.position`;

export type FeedbackService = ReturnType<typeof createFeedbackService>;

export function createFeedbackService(deps: FeedbackDeps) {
  const { db, clock, tokens, links, logger } = deps;

  function resolve(token: string, paperId: number): { subscriber: SubscriberRecord; paper: LinkedPaper } {
    const { subscriber, targetId } = resolveLink(db, tokens, clock, token, 'paper');
    // The token names its paper: a link edited to point at another paper is not valid.
    if (targetId !== paperId) throw invalidLink('paper');
    if (subscriber.status === 'unsubscribed') {
      throw new AppError('UNSUBSCRIBED', 'You are unsubscribed, so there is no digest to tune. Subscribe again from the home page.', {
        status: 409,
      });
    }
    const row = statement<[number], PaperRow<keyof LinkedPaper>>(db, SQL_PAPER_LINK_FIELDS).get(paperId);
    if (!row) throw new AppError('PAPER_GONE', 'This paper is no longer in the digest database.', { status: 410 });
    return { subscriber, paper: paperFromRow(row) };
  }

  function author(paper: LinkedPaper, index: number): string {
    const name = paper.authors[index];
    if (name === undefined) throw invalidLink('paper');
    // A name becomes a phrase in an author: topic; quotes inside it could not be typed there either.
    return name.replaceAll('"', '').trim();
  }

  return {
    describe(token: string, paperId: number, direction: Direction) {
      const { subscriber, paper } = resolve(token, paperId);
      return { email: subscriber.email, paper: { title: paper.title, url: paper.url }, direction, more: direction === 'more' };
    },

    record(token: string, paperId: number, direction: Direction) {
      const { subscriber, paper } = resolve(token, paperId);
      recordVote(db, subscriber.id, paper.id, direction === 'more' ? 1 : -1, clock.now());
      logger.info({ subscriberId: subscriber.id, paperId, direction }, 'feedback recorded');
      const topics = (statement(db, SQL_MATCHING_TOPICS).all(subscriber.id, paper.id) as Array<{ id: number; text: string; muted: number }>)
        .filter((t) => t.muted === 0)
        .map((t) => ({ text: t.text, muteUrl: links.mute(subscriber, t.id) }));
      return {
        email: subscriber.email,
        paper: { title: paper.title, url: paper.url },
        more: direction === 'more',
        // "Less like this" offers to mute the topics that brought the paper.
        muteTopics: direction === 'less' ? topics : [],
        preferencesUrl: links.preferences(subscriber),
      };
    },

    describeFollow(token: string, authorIndex: number, paperId: number) {
      const { subscriber, paper } = resolve(token, paperId);
      const name = author(paper, authorIndex);
      const topic = `author:"${name}"`;
      const key = parseTopic(topic).fts;
      const already = repo.listTopics(db, subscriber.id).some((t) => safeKey(t.text) === key);
      return { email: subscriber.email, name, topic, already, paper: { title: paper.title } };
    },

    follow(token: string, authorIndex: number, paperId: number) {
      const { subscriber, paper } = resolve(token, paperId);
      const name = author(paper, authorIndex);
      const text = `author:"${name}"`;
      const parsed = parseTopic(text);
      const added = db.transaction((): boolean => {
        const current = repo.listTopics(db, subscriber.id);
        if (current.some((t) => safeKey(t.text) === parsed.fts)) return false;
        if (current.length >= MAX_TOPICS) {
          throw new AppError('TOPICS_FULL', `You already have ${MAX_TOPICS} topics, the most a digest can have; remove one on your preferences page first.`, {
            status: 409,
          });
        }
        const desired = current.map((t) => ({ text: t.text, queryId: t.queryId }));
        repo.replaceTopics(db, subscriber.id, [...desired, { text, queryId: ensureQuery(db, parsed) }]);
        return true;
      }).immediate();
      if (added) logger.info({ subscriberId: subscriber.id, paperId }, 'author followed');
      return { email: subscriber.email, name, topic: text, added, preferencesUrl: links.preferences(subscriber) };
    },
  };
}

function safeKey(text: string): string | null {
  try {
    return parseTopic(text).fts;
  } catch {
    return null;
  }
}
