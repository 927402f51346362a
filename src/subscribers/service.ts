// Subscribers: one facade over three use cases, each its own module with its dependencies passed in:
//   - subscription.ts: double opt-in subscribe, re-subscribe, confirm, confirmation notices;
//   - preferences.ts: the manage page's preferences and topics, mute links, feed and web-view links;
//   - roster.ts: unsubscribe (link and operator) and the operator's lists.
// Answers never reveal whether an address exists; a bad topic saves nothing (one transaction).
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/open.ts';
import type { Links } from '../links.ts';
import type { LikeLookups } from '../match/like/lookups.ts';
import type { Logger } from '../log.ts';
import type { Mailer } from '../mail/types.ts';
import { createNoticeSender } from '../notices/sender.ts';
import type { Renderer } from '../render/render.ts';
import type { RetrySettings } from '../send/retry-policy.ts';
import type { Tokens } from '../tokens.ts';
import { Preferences } from './preferences.ts';
import { Roster } from './roster.ts';
import { Subscription } from './subscription.ts';
import { prepareExamples } from './topic-input.ts';

export type * from './types.ts';

export interface SubscriberServiceDeps {
  db: Db;
  clock: Clock;
  tokens: Tokens;
  links: Links;
  mailer: Mailer;
  renderer: Pick<Renderer, 'confirm'>;
  config: Pick<Config, 'DIGEST_TZ' | 'DIGEST_HOUR'> & RetrySettings;
  logger: Logger;
  /** Looks up like: examples that are not in the database (bounded, in the background: match/like/lookups.ts); unset: refused. */
  likeLookups?: LikeLookups | undefined;
}

export type SubscriberService = ReturnType<typeof createSubscriberService>;

export function createSubscriberService(deps: SubscriberServiceDeps) {
  const { db, clock, tokens, links, renderer, config, logger, likeLookups } = deps;
  // Confirmation emails are deliveries of their own (notices table): written, then sent and retried.
  const notices = createNoticeSender({ db, clock, mailer: deps.mailer, renderer, links, logger, config });
  const subscription = new Subscription({ db, clock, tokens, links, config, logger, notices, likeLookups });
  const preferences = new Preferences({ db, clock, tokens, links, logger });
  const roster = new Roster({ db, clock, tokens, links, logger });

  return {
    /** The sender of confirmation emails (the pipeline and `digest serve` send what is due through it). */
    notices,
    subscribe: subscription.subscribe.bind(subscription),
    confirm: subscription.confirm.bind(subscription),
    getPreferences: preferences.getPreferences.bind(preferences),
    prepareExamples: (items: Array<string | { text: string }> | undefined): Promise<void> => prepareExamples({ db, clock, likeLookups }, items),
    updatePreferences: preferences.updatePreferences.bind(preferences),
    describeUnsubscribe: roster.describeUnsubscribe.bind(roster),
    unsubscribe: roster.unsubscribe.bind(roster),
    resendConfirmation: subscription.resendConfirmation.bind(subscription),
    unsubscribeByEmail: roster.unsubscribeByEmail.bind(roster),
    describeMute: preferences.describeMute.bind(preferences),
    muteByToken: preferences.muteByToken.bind(preferences),
    resolveDigestLink: preferences.resolveDigestLink.bind(preferences),
    list: roster.list.bind(roster),
    findByEmail: roster.findByEmail.bind(roster),
  };
}
