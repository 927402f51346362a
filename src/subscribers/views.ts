// What the subscriber use cases return of a topic or a subscriber: narrow views of the stored rows.
import type { Topic } from '../types.ts';
import type { SubscriberRecord } from './records/repo.ts';
import type { SubscriberListing, TopicView } from './types.ts';

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
