// The personal Atom feed and "new feed address" as a port of Promise-returning methods, one adapter per
// engine (as the subscriber door, subscribers/door.ts): SQLite's wraps FeedService (atom.ts); PostgreSQL's
// is postgres/atom.ts. Both sign, check and write the same document (feed-link.ts, atomDocument).
import { eitherStore } from '../subscribers/records/link-tokens.ts';
import type { FeedService } from './atom.ts';

export interface ReaderFeeds {
  readonly engine: 'sqlite' | 'postgres';
  /** The feed document for a signed feed token (403 for anything else, 410 once its reader unsubscribed). */
  atom(token: string): Promise<string>;
  /** A new feed address for the reader of this manage token (the old one then answers 403). */
  rotate(manageToken: string): Promise<void>;
  /** Whether this store has the subscriber a feed token claims, whatever its signature (the move's fallback). */
  holdsReader?(token: string): Promise<boolean>;
}

/** SQLite: the service as it is (synchronous inside, one microtask more per call). */
export function sqliteFeeds(s: FeedService): ReaderFeeds {
  return {
    engine: 'sqlite',
    atom: async (token) => s.atom(token),
    rotate: async (manageToken) => s.rotate(manageToken),
  };
}

/**
 * During a move to PostgreSQL (subscribers/door.ts doorWithFallback): "new feed address" as every manage
 * link (the earlier store answers a token the primary did not sign). A feed token goes on only when the
 * primary store has no subscriber under its id: a feed address rotated on the primary store (salt
 * changed) must stay dead, never be answered by the earlier store's older salt.
 */
export function feedsWithFallback(primary: ReaderFeeds, earlier: ReaderFeeds, signedHere: (token: string) => Promise<boolean>): ReaderFeeds {
  const holdsReader = async (token: string) => (await primary.holdsReader?.(token)) !== false;
  return {
    engine: primary.engine,
    atom: (t) => eitherStore(holdsReader)(t, () => primary.atom(t), () => earlier.atom(t)),
    rotate: (t) => eitherStore(signedHere)(t, () => primary.rotate(t), () => earlier.rotate(t)),
  };
}
