// Feedback from the email, what reader models learn from: "more like this" / "less like this" on a paper, and following
// one of its authors. A link carries the digest's own token (purpose view:<digestId>, the token of its
// web view link), signed for one subscriber and one digest; the paper in the link must be one of that
// digest's papers or suggestions. Links in emails sent before carry a per-paper token (purpose
// paper:<id>) whose paper must be the one in the link; they keep working. Either way a link forged,
// altered to name a paper not in it, or taken from another subscriber's email is refused with the same
// 403, whichever check failed. A digest whose paper list retention has pruned answers 410: its links
// expired with it. A GET only describes; the POST acts (mail scanners open links, they do not submit
// forms).
//
// Decision: one token per digest instead of one per paper shown. Signing was one HMAC per paper shown,
// ~5% of a sending thread's time; now it is one per digest, and the check moves here, where it costs a
// row read and a decode of its packed list per click. The authority is unchanged: the web view page,
// reachable with that same token, has always shown every paper's feedback links.
import type { Clock } from '../clock.ts';
import { statement } from '../db/statements.ts';
import type { Db } from '../db/open.ts';
import { paperFromRow, type PaperRow } from '../db/paper-row.ts';
import { AppError } from '../errors.ts';
import type { Links } from '../links.ts';
import type { Logger } from '../log.ts';
import { decodeItems, plainItems } from '../ledger/index.ts';
import { invalidLink, resolveLink, type LinkKind } from '../subscribers/records/link-tokens.ts';
import * as repo from '../subscribers/records/repo.ts';
import type { SubscriberRecord } from '../subscribers/records/repo.ts';
import type { Tokens } from '../tokens.ts';
import { ensureQuery } from '../match/matcher.ts';
import { MAX_TOPICS, parseTopic } from '../match/parse.ts';
import { recordVote } from './profile.ts';
import type { Paper } from '../types.ts';

/** The paper a feedback link names: what its page shows. */
const SQL_PAPER_LINK_FIELDS = 'SELECT id, title, url, authors FROM papers WHERE id = ?';

/** The digest a digest token names: whose it is and its paper list (NULL once retention pruned it). */
const SQL_LINK_DIGEST = 'SELECT subscriber_id, from_paper, to_paper, items, topic_ids FROM digests WHERE id = ?';

/** Whether the digest suggested the paper ("you may also like", at most MAX_SUGGESTIONS rows, all shown). */
const SQL_LINK_SUGGESTION = 'SELECT 1 FROM digest_suggestions WHERE digest_id = ? AND paper_id = ?';

/** The tokens a feedback or follow link may carry: the digest's own, or an older email's per-paper one. */
const FEEDBACK_KINDS = ['paper', 'view'] as const satisfies readonly LinkKind[];

interface LinkDigestRow {
  subscriber_id: number;
  from_paper: number;
  to_paper: number;
  items: Buffer | null;
  topic_ids: string;
}

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

/** Builds the service; the returned object has the same four methods, bound, that callers always got. */
export function createFeedbackService(deps: FeedbackDeps) {
  const service = new FeedbackActions(deps);
  return {
    describe: service.describe.bind(service),
    record: service.record.bind(service),
    describeFollow: service.describeFollow.bind(service),
    follow: service.follow.bind(service),
  };
}

// A class so that each step (resolve, the digest check, the mute offer, the follow transaction) is its own
// short method sharing deps; the factory above keeps its private helpers out of the FeedbackService type.
class FeedbackActions {
  constructor(private readonly deps: FeedbackDeps) {}

  describe(token: string, paperId: number, direction: Direction) {
    const { subscriber, paper } = this.resolve(token, paperId);
    return { email: subscriber.email, paper: { title: paper.title, url: paper.url }, direction, more: direction === 'more' };
  }

  record(token: string, paperId: number, direction: Direction) {
    const { db, clock, links, logger } = this.deps;
    const { subscriber, paper } = this.resolve(token, paperId);
    recordVote(db, subscriber.id, paper.id, direction === 'more' ? 1 : -1, clock.now());
    logger.info({ subscriberId: subscriber.id, paperId, direction }, 'feedback recorded');
    // The manage token, signed once: the preferences link and every mute link carry it (links.ts mute()).
    const manage = links.manageToken(subscriber);
    const muteTopics = direction === 'less' ? this.muteOffers(subscriber, paper, manage) : [];
    return {
      email: subscriber.email,
      paper: { title: paper.title, url: paper.url },
      more: direction === 'more',
      muteTopics,
      preferencesUrl: links.manageOf(manage).preferences,
    };
  }

  describeFollow(token: string, authorIndex: number, paperId: number) {
    const { subscriber, paper } = this.resolve(token, paperId);
    const name = author(paper, authorIndex);
    const topic = `author:"${name}"`;
    const key = parseTopic(topic).fts;
    const already = repo.listTopics(this.deps.db, subscriber.id).some((t) => safeKey(t.text) === key);
    return { email: subscriber.email, name, topic, already, paper: { title: paper.title } };
  }

  follow(token: string, authorIndex: number, paperId: number) {
    const { db, clock, links, logger } = this.deps;
    const { subscriber, paper } = this.resolve(token, paperId);
    const name = author(paper, authorIndex);
    const text = `author:"${name}"`;
    const added = this.addTopic(subscriber, text);
    if (added) logger.info({ subscriberId: subscriber.id, paperId }, 'author followed');
    // Following an author is also a "more like this" on the paper it was done from: the model learns it.
    recordVote(db, subscriber.id, paper.id, 1, clock.now());
    return { email: subscriber.email, name, topic: text, added, preferencesUrl: links.preferences(subscriber) };
  }

  private resolve(token: string, paperId: number): { subscriber: SubscriberRecord; paper: LinkedPaper } {
    const { db, clock, tokens } = this.deps;
    const { subscriber, kind, targetId } = resolveLink(db, tokens, clock, token, FEEDBACK_KINDS);
    if (kind === 'paper') {
      // An older email's token names its paper: a link edited to point at another paper is not valid.
      if (targetId !== paperId) throw invalidLink('paper');
    } else {
      this.checkInDigest(subscriber, targetId!, paperId);
    }
    if (subscriber.status === 'unsubscribed') {
      throw new AppError('UNSUBSCRIBED', 'You are unsubscribed, so there is no digest to tune. Subscribe again from the home page.', {
        });
    }
    const row = statement<[number], PaperRow<keyof LinkedPaper>>(db, SQL_PAPER_LINK_FIELDS).get(paperId);
    if (!row) throw new AppError('PAPER_GONE', 'This paper is no longer in the digest database.');
    return { subscriber, paper: paperFromRow(row) };
  }

  /**
   * A digest token's link: the digest must be the subscriber's and the paper one it listed or suggested.
   * Every refusal is the same 403 as a forged link, so an answer never tells which check failed.
   */
  private checkInDigest(subscriber: SubscriberRecord, digestId: number, paperId: number): void {
    const { db, links } = this.deps;
    const d = statement<[number], LinkDigestRow>(db, SQL_LINK_DIGEST).get(digestId);
    if (!d || d.subscriber_id !== subscriber.id) throw invalidLink('paper');
    if (d.items === null) {
      throw new AppError(
        'DIGEST_EXPIRED',
        'This digest is older than the retention period, so its list of papers was removed and its feedback links have expired. You can still tune your digest on your preferences page.',
        { action: { url: links.preferences(subscriber), label: 'Your preferences' } },
      );
    }
    if (decodeItems(plainItems(db, d.items, d.from_paper, d.to_paper), d.from_paper, d.topic_ids).some((item) => item.paperId === paperId)) return;
    if (statement<[number, number]>(db, SQL_LINK_SUGGESTION).get(digestId, paperId) !== undefined) return;
    throw invalidLink('paper');
  }

  /** "Less like this" offers to mute the subscriber's unmuted topics that brought the paper. */
  private muteOffers(subscriber: SubscriberRecord, paper: LinkedPaper, manage: string) {
    type TopicRow = { id: number; text: string; muted: number };
    const rows = statement(this.deps.db, SQL_MATCHING_TOPICS).all(subscriber.id, paper.id) as TopicRow[];
    return rows.filter((t) => t.muted === 0).map((t) => ({ text: t.text, muteUrl: this.deps.links.muteOf(manage, t.id) }));
  }

  /** Adds the author: topic unless an equivalent one is there; false when it already was. */
  private addTopic(subscriber: SubscriberRecord, text: string): boolean {
    const { db } = this.deps;
    const parsed = parseTopic(text);
    return db.transaction((): boolean => {
      const current = repo.listTopics(db, subscriber.id);
      if (current.some((t) => safeKey(t.text) === parsed.fts)) return false;
      if (current.length >= MAX_TOPICS) {
        throw new AppError('TOPICS_FULL', `You already have ${MAX_TOPICS} topics, the most a digest can have; remove one on your preferences page first.`, {
          });
      }
      const desired = current.map((t) => ({ text: t.text, queryId: t.queryId }));
      repo.replaceTopics(db, subscriber.id, [...desired, { text, queryId: ensureQuery(db, parsed) }]);
      return true;
    }).immediate();
  }
}

function author(paper: LinkedPaper, index: number): string {
  const name = paper.authors[index];
  if (name === undefined) throw invalidLink('paper');
  // A name becomes a phrase in an author: topic; quotes inside it could not be typed there either.
  return name.replaceAll('"', '').trim();
}

function safeKey(text: string): string | null {
  try {
    return parseTopic(text).fts;
  } catch {
    return null;
  }
}
