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
import type { Links } from '../links.ts';
import type { Logger } from '../log.ts';
import { decodeItems, plainItems } from '../ledger/index.ts';
import { resolveLink } from '../subscribers/records/link-tokens.ts';
import * as repo from '../subscribers/records/repo.ts';
import type { SubscriberRecord } from '../subscribers/records/repo.ts';
import type { Tokens } from '../tokens.ts';
import { ensureQuery } from '../match/matcher.ts';
import { MAX_TOPICS, parseTopic } from '../match/parse.ts';
import {
  authorTopic,
  FEEDBACK_KINDS,
  hasTopic,
  listedInDigest,
  needsDigestCheck,
  notInDigest,
  paperGone,
  refuseUnsubscribed,
  topicsFull,
  type DigestOfLink,
  type LinkedPaper,
} from './link-rules.ts';
import { recordVote } from './profile.ts';

/** The paper a feedback link names: what its page shows. */
const SQL_PAPER_LINK_FIELDS = 'SELECT id, title, url, authors FROM papers WHERE id = ?';

/** The digest a digest token names: whose it is and its paper list (NULL once retention pruned it). */
const SQL_LINK_DIGEST = 'SELECT subscriber_id, from_paper, to_paper, items, topic_ids FROM digests WHERE id = ?';

/** Whether the digest suggested the paper ("you may also like", at most MAX_SUGGESTIONS rows, all shown). */
const SQL_LINK_SUGGESTION = 'SELECT 1 FROM digest_suggestions WHERE digest_id = ? AND paper_id = ?';

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
    const { name, text, key } = authorTopic(paper, authorIndex);
    const already = hasTopic(repo.listTopics(this.deps.db, subscriber.id), key);
    return { email: subscriber.email, name, topic: text, already, paper: { title: paper.title } };
  }

  follow(token: string, authorIndex: number, paperId: number) {
    const { db, clock, links, logger } = this.deps;
    const { subscriber, paper } = this.resolve(token, paperId);
    const { name, text } = authorTopic(paper, authorIndex);
    const added = this.addTopic(subscriber, text);
    if (added) logger.info({ subscriberId: subscriber.id, paperId }, 'author followed');
    // Following an author is also a "more like this" on the paper it was done from: the model learns it.
    recordVote(db, subscriber.id, paper.id, 1, clock.now());
    return { email: subscriber.email, name, topic: text, added, preferencesUrl: links.preferences(subscriber) };
  }

  private resolve(token: string, paperId: number): { subscriber: SubscriberRecord; paper: LinkedPaper } {
    const { db, clock, tokens, links } = this.deps;
    const { subscriber, kind, targetId } = resolveLink(db, tokens, clock, token, FEEDBACK_KINDS);
    if (needsDigestCheck(kind, targetId, paperId)) {
      const listed = listedInDigest(this.linkedDigest(targetId!), subscriber, paperId, () => links.preferences(subscriber));
      if (!listed && statement<[number, number]>(db, SQL_LINK_SUGGESTION).get(targetId!, paperId) === undefined) throw notInDigest();
    }
    refuseUnsubscribed(subscriber);
    const row = statement<[number], PaperRow<keyof LinkedPaper>>(db, SQL_PAPER_LINK_FIELDS).get(paperId);
    if (!row) throw paperGone();
    return { subscriber, paper: paperFromRow(row) };
  }

  /** The digest a digest token names, with the papers of its list (a reference row's lists merged). */
  private linkedDigest(digestId: number): DigestOfLink | undefined {
    const { db } = this.deps;
    const d = statement<[number], LinkDigestRow>(db, SQL_LINK_DIGEST).get(digestId);
    if (!d) return undefined;
    const papers = d.items === null ? undefined : decodeItems(plainItems(db, d.items, d.from_paper, d.to_paper), d.from_paper, d.topic_ids).map((i) => i.paperId);
    return { subscriberId: d.subscriber_id, papers };
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
      if (hasTopic(current, parsed.fts)) return false;
      if (current.length >= MAX_TOPICS) throw topicsFull();
      const desired = current.map((t) => ({ text: t.text, queryId: t.queryId }));
      repo.replaceTopics(db, subscriber.id, [...desired, { text, queryId: ensureQuery(db, parsed) }]);
      return true;
    }).immediate();
  }
}
