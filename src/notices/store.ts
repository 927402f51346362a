// Where the notice sender reads and writes (a port with one adapter per engine): the notices table's
// compare-and-set steps and the few subscriber facts that decide whether an email may still go. The
// SQLite adapter below wraps the synchronous repositories; notices/postgres-store.ts is PostgreSQL's.
import { activeOptOuts, type ConsentEvent } from '../consent/history.ts';
import type { Db } from '../db/open.ts';
import { findResubscribeRequest, findSubscriberById, listTopics, type SubscriberRecord } from '../subscribers/records/repo.ts';
import { claimNotice, dueNotices, nextNoticeRetry, recoverNotices, settleNotice, type Notice, type NoticeOutcome } from './repo.ts';

export interface NoticeStore {
  claim(id: number, claimant: string, now: string, force: boolean): Promise<Notice | undefined>;
  settle(id: number, claimant: string, o: NoticeOutcome): Promise<boolean>;
  /** Rows claimed before `before` and still 'sending' become 'unknown'. */
  recover(before: string): Promise<number>;
  due(now: string, limit: number): Promise<number[]>;
  nextRetry(): Promise<string | null>;
  subscriber(id: number): Promise<SubscriberRecord | undefined>;
  activeOptOuts(email: string): Promise<ConsentEvent[]>;
  /** The topics of the address's open re-subscribe request (undefined: none). */
  resubscribeTopics(subscriberId: number): Promise<string[] | undefined>;
  topicCount(subscriberId: number): Promise<number>;
}

/** SQLite: the same statements as before, answered at once. */
export function sqliteNoticeStore(db: Db): NoticeStore {
  return {
    claim: async (id, claimant, now, force) => claimNotice(db, id, claimant, now, force),
    settle: async (id, claimant, o) => settleNotice(db, id, claimant, o),
    recover: async (before) => recoverNotices(db, before),
    due: async (now, limit) => dueNotices(db, now, limit),
    nextRetry: async () => nextNoticeRetry(db),
    subscriber: async (id) => findSubscriberById(db, id),
    activeOptOuts: async (email) => activeOptOuts(db, email),
    resubscribeTopics: async (id) => findResubscribeRequest(db, id)?.topics,
    topicCount: async (id) => listTopics(db, id).length,
  };
}
