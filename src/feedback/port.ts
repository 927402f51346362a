// The email's feedback and follow links as a port of Promise-returning methods, one adapter per engine (as
// the subscriber door, subscribers/door.ts): SQLite's wraps FeedbackService (service.ts); PostgreSQL's is
// postgres/feedback.ts. Both follow link-rules.ts: the same tokens, checks, refusals and pages.
import { eitherStore } from '../subscribers/records/link-tokens.ts';
import type { Direction, FeedbackService } from './service.ts';

export type { Direction };

interface PaperShown {
  title: string;
  url: string;
}

/** GET /feedback/…: the page with one button. */
export interface VoteAsk {
  email: string;
  paper: PaperShown;
  direction: Direction;
  more: boolean;
}

/** POST /feedback/…: the vote recorded; "less" offers to mute the reader's topics that brought the paper. */
export interface VoteDone {
  email: string;
  paper: PaperShown;
  more: boolean;
  muteTopics: Array<{ text: string; muteUrl: string }>;
  preferencesUrl: string;
}

/** GET /follow/…: whom the link would follow, and whether the reader already does. */
export interface FollowAsk {
  email: string;
  name: string;
  topic: string;
  already: boolean;
  paper: { title: string };
}

/** POST /follow/…: the author: topic added (false: an equivalent one was there). */
export interface FollowDone {
  email: string;
  name: string;
  topic: string;
  added: boolean;
  preferencesUrl: string;
}

export interface ReaderFeedback {
  readonly engine: 'sqlite' | 'postgres';
  describe(token: string, paperId: number, direction: Direction): Promise<VoteAsk>;
  record(token: string, paperId: number, direction: Direction): Promise<VoteDone>;
  describeFollow(token: string, authorIndex: number, paperId: number): Promise<FollowAsk>;
  follow(token: string, authorIndex: number, paperId: number): Promise<FollowDone>;
}

/** SQLite: the service as it is (synchronous inside, one microtask more per call). */
export function sqliteFeedback(s: FeedbackService): ReaderFeedback {
  return {
    engine: 'sqlite',
    describe: async (token, paperId, direction) => s.describe(token, paperId, direction),
    record: async (token, paperId, direction) => s.record(token, paperId, direction),
    describeFollow: async (token, authorIndex, paperId) => s.describeFollow(token, authorIndex, paperId),
    follow: async (token, authorIndex, paperId) => s.follow(token, authorIndex, paperId),
  };
}

/**
 * During a move to PostgreSQL (subscribers/door.ts doorWithFallback): a link the primary store did not sign
 * (`signedHere` false: an email sent from the earlier store) is answered there; the primary's own refusals are final.
 */
export function feedbackWithFallback(primary: ReaderFeedback, earlier: ReaderFeedback, signedHere: (token: string) => Promise<boolean>): ReaderFeedback {
  const either = eitherStore(signedHere);
  return {
    engine: primary.engine,
    describe: (t, p, d) => either(t, () => primary.describe(t, p, d), () => earlier.describe(t, p, d)),
    record: (t, p, d) => either(t, () => primary.record(t, p, d), () => earlier.record(t, p, d)),
    describeFollow: (t, a, p) => either(t, () => primary.describeFollow(t, a, p), () => earlier.describeFollow(t, a, p)),
    follow: (t, a, p) => either(t, () => primary.follow(t, a, p), () => earlier.follow(t, a, p)),
  };
}
