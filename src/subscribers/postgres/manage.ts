// The manage links on PostgreSQL: unsubscribe (the page and RFC 8058's one-click POST), the preferences
// page's read and save, and a digest's mute links. The same checks and answers as roster.ts and
// preferences.ts on SQLite, "why no email today" included (report/postgres/why-no-email.ts).
import { AppError } from '../../errors.ts';
import { feedSubjectOf } from '../../feed/feed-link.ts';
import type { Topic } from '../../types.ts';
import { checkMaxPapers } from '../records/learning-prefs.ts';
import * as records from '../records/postgres.ts';
import type { SubscriberRecord } from '../records/repo.ts';
import { checkFrequency, checkHour, checkPauseDays, checkTimezone, checkWeekday } from '../preferences-input.ts';
import type { MuteView, PreferencesInput, PreferencesView } from '../types.ts';
import { toPreferencesView, toTopicView } from '../views.ts';
import { lastSlotReportPg } from '../../report/postgres/why-no-email.ts';
import { forAddress, resolveLinkPg, type PgDoorDeps } from './common.ts';
import { checkTopics } from '../topic-input.ts';
import { desiredTopicsPg } from './subscription.ts';

export class PgManage {
  constructor(private readonly deps: PgDoorDeps) {}

  async describeUnsubscribe(token: string): Promise<{ email: string; status: SubscriberRecord['status']; preferencesUrl: string }> {
    const { subscriber: s } = await resolveLinkPg(this.deps.pool, this.deps, token, 'manage');
    return { email: s.email, status: s.status, preferencesUrl: this.deps.links.preferences(s) };
  }

  /** Takes effect at once (the history's trigger records it); twice is harmless. */
  async unsubscribe(token: string): Promise<{ email: string; changed: boolean }> {
    const { pool, clock, logger } = this.deps;
    const { subscriber: s } = await resolveLinkPg(pool, this.deps, token, 'manage');
    const changed = await records.markUnsubscribed(pool, s.id, clock.now().toISOString(), { kind: 'unsubscribe', detail: 'unsubscribe link' });
    if (changed) logger.info({ subscriberId: s.id }, 'unsubscribed');
    return { email: s.email, changed };
  }

  async getPreferences(token: string): Promise<PreferencesView> {
    const { pool, clock, links } = this.deps;
    const { subscriber: s } = await resolveLinkPg(pool, this.deps, token, 'manage');
    const feedSalt = await records.feedSalt(pool, s.id);
    return toPreferencesView(s, {
      now: clock.now(),
      links,
      topics: (await records.listTopics(pool, s.id)).map(toTopicView),
      learning: await records.getLearningPrefs(pool, s.id),
      feed: feedSubjectOf(s, feedSalt),
      lastSlot: (await lastSlotReportPg(pool, s.id, clock.now()))?.message ?? '',
    });
  }

  /** The whole form at once, or nothing (a bad topic or value throws a 400 naming it). */
  async updatePreferences(token: string, input: PreferencesInput): Promise<PreferencesView> {
    const { pool, logger } = this.deps;
    const { subscriber: s } = await resolveLinkPg(pool, this.deps, token, 'manage');
    if (s.status === 'unsubscribed') throw new AppError('UNSUBSCRIBED', 'You are unsubscribed. Subscribe again from the home page to change topics.');
    const columns = this.checkColumns(s, input);
    const maxPapers = input.maxPapers === undefined ? undefined : checkMaxPapers(input.maxPapers);
    const checked = input.topics === undefined ? undefined : checkTopics(input.topics);
    await forAddress(pool, s.email, async (c) => {
      const learning = await records.getLearningPrefs(c, s.id);
      if (maxPapers !== undefined) learning.maxPapers = maxPapers;
      if (input.suggestions !== undefined) learning.suggestions = input.suggestions;
      if (input.modelOnly !== undefined) learning.modelOnly = input.modelOnly;
      if (checked !== undefined) await records.replaceTopics(c, s.id, await desiredTopicsPg(c, checked));
      await records.updatePreferenceColumns(c, s.id, columns);
      await records.setLearningPrefs(c, s.id, learning);
    });
    logger.info({ subscriberId: s.id }, 'preferences updated');
    return this.getPreferences(token);
  }

  async describeMute(token: string, topicId?: number): Promise<MuteView> {
    const { subscriber: s, topic } = await this.resolveMute(token, topicId);
    return { email: s.email, topic: toTopicView(topic), preferencesUrl: this.deps.links.preferences(s) };
  }

  async muteByToken(token: string, topicId?: number): Promise<MuteView> {
    const { subscriber: s, topic } = await this.resolveMute(token, topicId);
    await records.setTopicMuted(this.deps.pool, s.id, topic.id, true);
    this.deps.logger.info({ subscriberId: s.id, topicId: topic.id }, 'topic muted');
    return { email: s.email, topic: { ...toTopicView(topic), muted: true }, preferencesUrl: this.deps.links.preferences(s) };
  }

  private checkColumns(s: SubscriberRecord, input: PreferencesInput): Parameters<typeof records.updatePreferenceColumns>[2] {
    let pausedUntil = s.pausedUntil;
    if (input.pauseDays !== undefined) {
      const days = checkPauseDays(input.pauseDays);
      pausedUntil = days === 0 ? null : new Date(this.deps.clock.now().getTime() + days * 86_400_000).toISOString();
    }
    return {
      timezone: input.timezone !== undefined ? checkTimezone(input.timezone) : s.timezone,
      deliveryHour: input.deliveryHour !== undefined ? checkHour(input.deliveryHour) : s.deliveryHour,
      frequency: input.frequency !== undefined ? checkFrequency(input.frequency) : s.frequency,
      weeklyDay: input.weeklyDay !== undefined ? checkWeekday(input.weeklyDay) : s.weeklyDay,
      pausedUntil,
    };
  }

  private async resolveMute(token: string, topicId: number | undefined): Promise<{ subscriber: SubscriberRecord; topic: Topic }> {
    const { pool } = this.deps;
    const link = await resolveLinkPg(pool, this.deps, token, topicId === undefined ? 'mute' : 'manage');
    const { subscriber } = link;
    const targetId = topicId ?? link.targetId;
    if (subscriber.status === 'unsubscribed') {
      throw new AppError('UNSUBSCRIBED', 'You are unsubscribed, so no topic of yours is sent any more. Subscribe again from the home page to choose topics.');
    }
    const topic = (await records.listTopics(pool, subscriber.id)).find((t) => t.id === targetId);
    if (!topic) throw new AppError('TOPIC_GONE', 'This topic is no longer in your preferences, so there is nothing to mute.');
    return { subscriber, topic };
  }
}
