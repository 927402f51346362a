// Preferences: what a manage link shows and saves (topics, schedule, pause, learning), muting a topic
// from a digest's link, and the links a reader follows to their feed and web view.
// A bad topic or value saves nothing (one transaction).
import type { Clock } from '../clock.ts';
import type { Db } from '../db/open.ts';
import { AppError } from '../errors.ts';
import { feedSubject } from '../feed/feed-link.ts';
import type { Links } from '../links.ts';
import type { Logger } from '../log.ts';
import { lastSlotReport } from '../report/why-no-email.ts';
import type { Tokens } from '../tokens.ts';
import type { Topic } from '../types.ts';
import { checkMaxPapers } from './records/learning-prefs.ts';
import { resolveLink, WEB_VIEW_KINDS } from './records/link-tokens.ts';
import { checkFrequency, checkHour, checkPauseDays, checkTimezone, checkWeekday } from './preferences-input.ts';
import * as repo from './records/repo.ts';
import type { SubscriberRecord } from './records/repo.ts';
import { checkTopics, desiredTopics } from './topic-input.ts';
import type { MuteView, PreferencesInput, PreferencesView, TopicView } from './types.ts';
import { toPreferencesView, toTopicView } from './views.ts';

export interface PreferencesDeps {
  db: Db;
  clock: Clock;
  tokens: Tokens;
  links: Links;
  logger: Logger;
}

export class Preferences {
  private readonly deps: PreferencesDeps;

  constructor(deps: PreferencesDeps) {
    this.deps = deps;
  }

  getPreferences(token: string): PreferencesView {
    const { db, tokens, clock, links } = this.deps;
    const { subscriber: s } = resolveLink(db, tokens, clock, token, 'manage');
    return toPreferencesView(s, {
      now: clock.now(),
      links,
      topics: this.topicViews(s.id),
      learning: repo.getLearningPrefs(db, s.id),
      feed: feedSubject(db, s),
      lastSlot: lastSlotReport(db, s.id, clock.now())?.message ?? '',
    });
  }

  /** Applies the whole form at once, or nothing (a bad topic or value throws a 400 naming it). */
  updatePreferences(token: string, input: PreferencesInput): PreferencesView {
    const { db, tokens, clock, logger } = this.deps;
    const { subscriber: s } = resolveLink(db, tokens, clock, token, 'manage');
    if (s.status === 'unsubscribed') {
      throw new AppError('UNSUBSCRIBED', 'You are unsubscribed. Subscribe again from the home page to change topics.', {
        });
    }
    const columns = this.checkColumns(s, input);
    const learning = repo.getLearningPrefs(db, s.id);
    if (input.maxPapers !== undefined) learning.maxPapers = checkMaxPapers(input.maxPapers);
    if (input.suggestions !== undefined) learning.suggestions = input.suggestions;
    if (input.modelOnly !== undefined) learning.modelOnly = input.modelOnly;
    const checked = input.topics === undefined ? undefined : checkTopics(input.topics);
    db.transaction(() => {
      if (checked !== undefined) repo.replaceTopics(db, s.id, desiredTopics(db, checked));
      repo.updatePreferenceColumns(db, s.id, columns);
      repo.setLearningPrefs(db, s.id, learning);
    }).immediate();
    logger.info({ subscriberId: s.id }, 'preferences updated');
    return this.getPreferences(token);
  }

  /**
   * Checks a mute link and names its topic (for the GET page); changes nothing. `topicId`: the link's
   * topic when its token is the manage token (links.ts mute()); without it, a token of an email sent
   * before, which names the topic itself.
   */
  describeMute(token: string, topicId?: number): MuteView {
    const { subscriber: s, topic } = this.resolveMute(token, topicId);
    return { email: s.email, topic: toTopicView(topic), preferencesUrl: this.deps.links.preferences(s) };
  }

  muteByToken(token: string, topicId?: number): MuteView {
    const { db, logger, links } = this.deps;
    const { subscriber: s, topic } = this.resolveMute(token, topicId);
    repo.setTopicMuted(db, s.id, topic.id, true);
    logger.info({ subscriberId: s.id, topicId: topic.id }, 'topic muted');
    return { email: s.email, topic: { ...toTopicView(topic), muted: true }, preferencesUrl: links.preferences(s) };
  }

  /** Checks a web-view link; returns the digest id it names and whose it is. */
  resolveDigestLink(token: string): { subscriberId: number; digestId: number } {
    const { db, tokens, clock } = this.deps;
    // Its own read:<digestId> token, or the view:<digestId> one emails sent before it carry.
    const { subscriber, targetId } = resolveLink(db, tokens, clock, token, WEB_VIEW_KINDS);
    return { subscriberId: subscriber.id, digestId: targetId! };
  }

  private topicViews(subscriberId: number): TopicView[] {
    return repo.listTopics(this.deps.db, subscriberId).map(toTopicView);
  }

  /** The schedule columns the form sets (each checked, naming a bad value), the others as they are. */
  private checkColumns(s: SubscriberRecord, input: PreferencesInput): Parameters<typeof repo.updatePreferenceColumns>[2] {
    const timezone = input.timezone !== undefined ? checkTimezone(input.timezone) : s.timezone;
    const deliveryHour = input.deliveryHour !== undefined ? checkHour(input.deliveryHour) : s.deliveryHour;
    const frequency = input.frequency !== undefined ? checkFrequency(input.frequency) : s.frequency;
    const weeklyDay = input.weeklyDay !== undefined ? checkWeekday(input.weeklyDay) : s.weeklyDay;
    let pausedUntil = s.pausedUntil;
    if (input.pauseDays !== undefined) {
      const days = checkPauseDays(input.pauseDays);
      pausedUntil = days === 0 ? null : new Date(this.deps.clock.now().getTime() + days * 86_400_000).toISOString();
    }
    return { timezone, deliveryHour, frequency, weeklyDay, pausedUntil };
  }

  private resolveMute(token: string, topicId: number | undefined): { subscriber: SubscriberRecord; topic: Topic } {
    const { db, tokens, clock } = this.deps;
    const link = topicId === undefined ? resolveLink(db, tokens, clock, token, 'mute') : resolveLink(db, tokens, clock, token, 'manage');
    const { subscriber } = link;
    const targetId = topicId ?? link.targetId;
    // An address that left gets nothing more to mute: say so, as the preferences page does.
    if (subscriber.status === 'unsubscribed') {
      throw new AppError('UNSUBSCRIBED', 'You are unsubscribed, so no topic of yours is sent any more. Subscribe again from the home page to choose topics.', {
        });
    }
    const topic = repo.listTopics(db, subscriber.id).find((t) => t.id === targetId);
    if (!topic) {
      throw new AppError('TOPIC_GONE', 'This topic is no longer in your preferences, so there is nothing to mute.', {
        });
    }
    return { subscriber, topic };
  }
}
