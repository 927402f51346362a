// The roster: leaving (the unsubscribe link, the operator's unsubscribe) and the lists the operator
// reads. Unsubscribing takes effect at once and is recorded in the consent history (repo.markUnsubscribed).
import type { Clock } from '../clock.ts';
import type { Db } from '../db/open.ts';
import type { Links } from '../links.ts';
import type { Logger } from '../log.ts';
import type { Tokens } from '../tokens.ts';
import type { SubscriberStatus } from '../types.ts';
import { normaliseEmail } from './records/email-address.ts';
import { resolveLink } from './records/link-tokens.ts';
import * as repo from './records/repo.ts';
import type { SubscriberListing } from './types.ts';
import { toListing } from './views.ts';

export interface RosterDeps {
  db: Db;
  clock: Clock;
  tokens: Tokens;
  links: Links;
  logger: Logger;
}

export class Roster {
  private readonly deps: RosterDeps;

  constructor(deps: RosterDeps) {
    this.deps = deps;
  }

  /** Checks a manage link and says whose it is (for the unsubscribe page); changes nothing. */
  describeUnsubscribe(token: string): { email: string; status: SubscriberStatus; preferencesUrl: string } {
    const { db, tokens, clock, links } = this.deps;
    const { subscriber: s } = resolveLink(db, tokens, clock, token, 'manage');
    return { email: s.email, status: s.status, preferencesUrl: links.preferences(s) };
  }

  /** Takes effect at once; unsubscribing twice is harmless. */
  unsubscribe(token: string): { email: string; changed: boolean } {
    const { db, tokens, clock, logger } = this.deps;
    const { subscriber: s } = resolveLink(db, tokens, clock, token, 'manage');
    const changed = repo.markUnsubscribed(db, s.id, clock.now().toISOString(), { kind: 'unsubscribe', detail: 'unsubscribe link' });
    if (changed) logger.info({ subscriberId: s.id }, 'unsubscribed');
    return { email: s.email, changed };
  }

  /** Admin path (the person asked the operator). False when the address is unknown; true when it is now unsubscribed (even if it was already). */
  unsubscribeByEmail(email: string): boolean {
    const { db, clock, logger } = this.deps;
    const s = repo.findSubscriberByEmail(db, normaliseEmail(email));
    if (!s) return false;
    if (repo.markUnsubscribed(db, s.id, clock.now().toISOString(), { kind: 'unsubscribe', detail: 'by the operator (digest unsubscribe)' })) {
      logger.info({ subscriberId: s.id }, 'unsubscribed by an administrator');
    }
    return true;
  }

  /** Streamed: one subscriber and their topics at a time, whatever the size of the list. */
  *list(): Generator<SubscriberListing> {
    const { db } = this.deps;
    for (const s of repo.iterateSubscribers(db)) yield toListing(s, repo.listTopics(db, s.id));
  }

  findByEmail(email: string): SubscriberListing | undefined {
    const { db } = this.deps;
    let normalised: string;
    try {
      normalised = normaliseEmail(email);
    } catch {
      return undefined;
    }
    const s = repo.findSubscriberByEmail(db, normalised);
    return s && toListing(s, repo.listTopics(db, s.id));
  }
}
