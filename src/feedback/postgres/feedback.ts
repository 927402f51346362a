// The email's feedback and follow links on PostgreSQL (DATABASE_URL=postgres://…), for the digests the
// workers send from there: the same tokens, checks and pages as service.ts on SQLite (link-rules.ts), over
// PostgreSQL's rows. A vote is one row per reader and paper (the last counts). Decision: no reader model
// is trained here, as none is on PostgreSQL yet (README "Running on more than one machine"): the votes and
// follows are kept for when it is. A lost database answers 503 (answerDbLoss), nothing changed.
import type pg from 'pg';
import type { Clock } from '../../clock.ts';
import { paperFromRow, type PaperRow } from '../../db/paper-row.ts';
import type { Pg } from '../../db/postgres/pool.ts';
import { answerDbLoss } from '../../db/postgres/retry.ts';
import { digestSuggested, readLinkedDigest } from '../../ledger/postgres/link-row.ts';
import type { Links } from '../../links.ts';
import type { Logger } from '../../log.ts';
import { MAX_TOPICS, parseTopic } from '../../match/parse.ts';
import { resolveLinkPg } from '../../subscribers/records/link-tokens.ts';
import * as records from '../../subscribers/records/postgres.ts';
import type { SubscriberRecord } from '../../subscribers/records/repo.ts';
import type { Tokens } from '../../tokens.ts';
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
  type LinkedPaper,
} from '../link-rules.ts';
import type { Direction, ReaderFeedback, VoteDone } from '../port.ts';

const SQL_PAPER_LINK_FIELDS = `SELECT id, title, url, authors FROM papers WHERE id = $1`;

const SQL_VOTE = `
  INSERT INTO feedback (subscriber_id, paper_id, vote, at) VALUES ($1, $2, $3, $4)
  ON CONFLICT (subscriber_id, paper_id) DO UPDATE SET vote = excluded.vote, at = excluded.at`;

/** The subscriber's unmuted topics that matched this paper (what "less like this" offers to mute). */
const SQL_MATCHING_TOPICS = `
  SELECT t.id, t.text FROM topics t JOIN query_matches m ON m.query_id = t.query_id
  WHERE t.subscriber_id = $1 AND m.paper_id = $2 AND t.muted = 0 ORDER BY t.position`;

export interface PostgresFeedbackDeps {
  pool: pg.Pool;
  clock: Clock;
  tokens: Tokens;
  links: Links;
  logger: Logger;
}

export function createPostgresFeedback(deps: PostgresFeedbackDeps): ReaderFeedback {
  const f = new PgFeedback(deps);
  return {
    engine: 'postgres',
    describe: (token, paperId, direction) => answerDbLoss(() => f.describe(token, paperId, direction)),
    record: (token, paperId, direction) => answerDbLoss(() => f.record(token, paperId, direction)),
    describeFollow: (token, authorIndex, paperId) => answerDbLoss(() => f.describeFollow(token, authorIndex, paperId)),
    follow: (token, authorIndex, paperId) => answerDbLoss(() => f.follow(token, authorIndex, paperId)),
  };
}

class PgFeedback {
  constructor(private readonly deps: PostgresFeedbackDeps) {}

  async describe(token: string, paperId: number, direction: Direction) {
    const { subscriber, paper } = await this.resolve(token, paperId);
    return { email: subscriber.email, paper: { title: paper.title, url: paper.url }, direction, more: direction === 'more' };
  }

  async record(token: string, paperId: number, direction: Direction): Promise<VoteDone> {
    const { pool, links, logger } = this.deps;
    const { subscriber, paper } = await this.resolve(token, paperId);
    await this.vote(pool, subscriber, paper, direction === 'more' ? 1 : -1);
    logger.info({ subscriberId: subscriber.id, paperId, direction }, 'feedback recorded');
    const manage = links.manageToken(subscriber);
    const muteTopics =
      direction === 'less'
        ? (await pool.query<{ id: number; text: string }>(SQL_MATCHING_TOPICS, [subscriber.id, paper.id])).rows.map((t) => ({ text: t.text, muteUrl: links.muteOf(manage, Number(t.id)) }))
        : [];
    return { email: subscriber.email, paper: { title: paper.title, url: paper.url }, more: direction === 'more', muteTopics, preferencesUrl: links.manageOf(manage).preferences };
  }

  async describeFollow(token: string, authorIndex: number, paperId: number) {
    const { subscriber, paper } = await this.resolve(token, paperId);
    const { name, text, key } = authorTopic(paper, authorIndex);
    const already = hasTopic(await records.listTopics(this.deps.pool, subscriber.id), key);
    return { email: subscriber.email, name, topic: text, already, paper: { title: paper.title } };
  }

  /** Adds the author: topic unless an equivalent one is there, and counts as "more like this" on the paper. */
  async follow(token: string, authorIndex: number, paperId: number) {
    const { pool, links, logger } = this.deps;
    const { subscriber, paper } = await this.resolve(token, paperId);
    const { name, text } = authorTopic(paper, authorIndex);
    const parsed = parseTopic(text);
    // The address's lock: a follow and a preferences save for one reader write one after the other.
    const added = await records.forAddress(pool, subscriber.email, async (c) => {
      const current = await records.listTopics(c, subscriber.id);
      const fresh = !hasTopic(current, parsed.fts);
      if (fresh) {
        if (current.length >= MAX_TOPICS) throw topicsFull();
        const desired = current.map((t) => ({ text: t.text, queryId: t.queryId }));
        await records.replaceTopics(c, subscriber.id, [...desired, { text, queryId: await records.ensureQuery(c, parsed) }]);
      }
      await this.vote(c, subscriber, paper, 1);
      return fresh;
    });
    if (added) logger.info({ subscriberId: subscriber.id, paperId }, 'author followed');
    return { email: subscriber.email, name, topic: text, added, preferencesUrl: links.preferences(subscriber) };
  }

  private async vote(c: Pg, subscriber: SubscriberRecord, paper: LinkedPaper, vote: 1 | -1): Promise<void> {
    await c.query(SQL_VOTE, [subscriber.id, paper.id, vote, this.deps.clock.now().toISOString()]);
  }

  private async resolve(token: string, paperId: number): Promise<{ subscriber: SubscriberRecord; paper: LinkedPaper }> {
    const { pool, clock, tokens, links } = this.deps;
    const { subscriber, kind, targetId } = await resolveLinkPg(pool, tokens, clock, token, FEEDBACK_KINDS);
    if (needsDigestCheck(kind, targetId, paperId)) {
      const listed = listedInDigest(await readLinkedDigest(pool, targetId!), subscriber, paperId, () => links.preferences(subscriber));
      if (!listed && !(await digestSuggested(pool, targetId!, paperId))) throw notInDigest();
    }
    refuseUnsubscribed(subscriber);
    const row = (await pool.query<PaperRow<keyof LinkedPaper>>(SQL_PAPER_LINK_FIELDS, [paperId])).rows[0];
    if (!row) throw paperGone();
    return { subscriber, paper: paperFromRow(row) };
  }
}
