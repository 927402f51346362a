// What the subscriber use cases return of a topic or a subscriber: narrow views of the stored rows.
import type { Links } from '../links.ts';
import { nextDeliveryWords, scheduleWords } from './records/delivery-words.ts';
import type { ConfirmResult } from './subscription.ts';
import type { TokenSubject } from '../tokens.ts';
import type { Topic } from '../types.ts';
import type { LearningPrefs } from './records/learning-prefs.ts';
import type { SubscriberRecord } from './records/repo.ts';
import type { PreferencesView, SubscriberListing, TopicView } from './types.ts';

export function toTopicView(t: Topic): TopicView {
  return { id: t.id, text: t.text, muted: t.muted };
}

export function toListing(s: SubscriberRecord, topics: Topic[]): SubscriberListing {
  return {
    id: s.id,
    email: s.email,
    status: s.status,
    topics: topics.map(toTopicView),
    timezone: s.timezone,
    deliveryHour: s.deliveryHour,
    frequency: s.frequency,
    weeklyDay: s.weeklyDay,
    pausedUntil: s.pausedUntil,
    hardFailures: s.hardFailures,
    createdAt: s.createdAt,
    confirmedAt: s.confirmedAt,
  };
}

/** What a preferences page shows, on either engine: each reads the parts from its own tables. */
export interface PreferencesParts {
  now: Date;
  links: Links;
  topics: TopicView[];
  learning: LearningPrefs;
  /** The feed link's subject (its salt rotates with "new feed address"). */
  feed: TokenSubject;
  /** "Why no email today", or '' where it is not known. */
  lastSlot: string;
}

export function toPreferencesView(s: SubscriberRecord, p: PreferencesParts): PreferencesView {
  const paused = s.pausedUntil !== null && Date.parse(s.pausedUntil) > p.now.getTime();
  return {
    email: s.email,
    status: s.status,
    timezone: s.timezone,
    deliveryHour: s.deliveryHour,
    frequency: s.frequency,
    weeklyDay: s.weeklyDay,
    pausedUntil: paused ? s.pausedUntil : null,
    topics: p.topics,
    unsubscribeUrl: p.links.unsubscribe(s),
    preferencesUrl: p.links.preferences(s),
    ...p.learning,
    feedUrl: p.links.feed(p.feed),
    lastSlot: p.lastSlot,
  };
}

/** What the confirmation page shows, the same on both engines: the schedule in words and the unmuted topics. */
export function toConfirmResult(s: SubscriberRecord, topics: Topic[], alreadyConfirmed: boolean, links: Pick<Links, 'preferences'>, now: Date): ConfirmResult {
  return {
    subscriberId: s.id,
    email: s.email,
    alreadyConfirmed,
    preferencesUrl: links.preferences(s),
    schedule: scheduleWords(s),
    nextDelivery: nextDeliveryWords(s, now),
    topics: topics.filter((t) => !t.muted).map((t) => t.text),
  };
}
