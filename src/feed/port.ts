// The personal Atom feed and "new feed address" as a port of Promise-returning methods, one adapter per
// engine (as the subscriber door, subscribers/door.ts): SQLite's wraps FeedService (atom.ts); PostgreSQL's
// is postgres/atom.ts. Both sign, check and write the same document (feed-link.ts, atomDocument).
import type { FeedService } from './atom.ts';

export interface ReaderFeeds {
  readonly engine: 'sqlite' | 'postgres';
  /** The feed document for a signed feed token (403 for anything else, 410 once its reader unsubscribed). */
  atom(token: string): Promise<string>;
  /** A new feed address for the reader of this manage token (the old one then answers 403). */
  rotate(manageToken: string): Promise<void>;
}

/** SQLite: the service as it is (synchronous inside, one microtask more per call). */
export function sqliteFeeds(s: FeedService): ReaderFeeds {
  return {
    engine: 'sqlite',
    atom: async (token) => s.atom(token),
    rotate: async (manageToken) => s.rotate(manageToken),
  };
}
