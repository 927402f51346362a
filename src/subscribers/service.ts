// Subscribers: double opt-in subscribe, confirm, preferences, mute and unsubscribe.
// Answers never reveal whether an address exists; a bad topic saves nothing (one transaction).
import { nextDeliveryWords, scheduleWords } from './delivery-words.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/open.ts';
import type { Renderer } from '../render/render.ts';
import { AppError, errorMessage } from '../errors.ts';
import { CONFIRM_TTL_MS, type Links } from '../links.ts';
import { createNoticeSender } from '../notices/sender.ts';
import { queueNotice, type Queued } from '../notices/queue.ts';
import { noticesOf } from '../notices/repo.ts';
import type { RetrySettings } from '../send/retry-policy.ts';
import { subscriptionWrites } from './subscription-writes.ts';
import type { Logger } from '../log.ts';
import type { Mailer } from '../mail/types.ts';
import type { Tokens } from '../tokens.ts';
import { parseTopic, parseTopics, type ParsedTopic } from '../topics/parse.ts';
import { ensureQuery } from '../topics/matcher.ts';
import { feedSubject } from '../feed/feed-link.ts';
import { ensureExamples } from '../like/like.ts';
import type { LikeLookups } from '../like/lookups.ts';
import type { SubscriberStatus, Topic } from '../types.ts';
import { normaliseEmail } from './email-address.ts';
import { resolveLink } from './link-tokens.ts';
import { checkFrequency, checkHour, checkPauseDays, checkTimezone, checkWeekday } from './preferences-input.ts';
import { lastSlotReport } from '../report/why-no-email.ts';
import { checkMaxPapers } from './learning-prefs.ts';
import * as repo from './repo.ts';
import type { SubscriberRecord } from './repo.ts';
import type {
  MuteView,
  PreferencesInput,
  PreferencesView,
  SubscribeInput,
  SubscribeOptions,
  SubscribeResult,
  SubscriberListing,
  TopicView,
} from './types.ts';

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
  /** Looks up like: examples that are not in the database (bounded, in the background: like/lookups.ts); unset: refused. */
  likeLookups?: LikeLookups | undefined;
}

export type SubscriberService = ReturnType<typeof createSubscriberService>;

interface CheckedTopic {
  text: string;
  parsed: ParsedTopic;
  muted: boolean | undefined;
}

export function createSubscriberService(deps: SubscriberServiceDeps) {
  const { db, clock, tokens, links, renderer, config, logger } = deps;
  const nowIso = () => clock.now().toISOString();
  // Confirmation emails are deliveries of their own (notices table): written, then sent and retried.
  const notices = createNoticeSender({ db, clock, mailer: deps.mailer, renderer, links, logger, config });
  const { writeSubscription, confirmWrite } = subscriptionWrites({ db, clock, desiredTopics, checkTopics });

  /**
   * Parses every topic once (writes nothing); throws TOPIC_INVALID naming the topic by its place in the
   * list. Blank entries are skipped; of two topics with the same query the first is kept.
   */
  function checkTopics(items: Array<string | { text: string; muted?: boolean }>): CheckedTopic[] {
    const texts = items.map((t) => (typeof t === 'string' ? t : t.text));
    return parseTopics(texts).map((p) => {
      const item = items[p.index];
      return { text: p.text, parsed: p, muted: typeof item === 'object' ? item.muted : undefined };
    });
  }

  /** Creates the distinct queries (inside the caller's transaction). */
  function desiredTopics(checked: CheckedTopic[]): repo.DesiredTopic[] {
    return checked.map((c) => ({
      text: c.text,
      queryId: ensureQuery(db, c.parsed),
      ...(c.muted === undefined ? {} : { muted: c.muted }),
    }));
  }

  /**
   * Looks up the like: examples of these topics that the database lacks (before any transaction: it
   * may ask arXiv). Unparseable topics are left for checkTopics to report.
   */
  async function prepareExamples(items: Array<string | { text: string }> | undefined): Promise<void> {
    const ids = new Set<string>();
    for (const item of items ?? []) {
      const text = typeof item === 'string' ? item : item.text;
      try {
        for (const id of parseTopic(text).like ?? []) ids.add(id);
      } catch {
        continue;
      }
    }
    if (ids.size === 0) return;
    if (deps.likeLookups) await deps.likeLookups.ensure([...ids]);
    else await ensureExamples(db, [...ids], undefined, clock.now());
  }

  function topicViews(subscriberId: number): TopicView[] {
    return repo.listTopics(db, subscriberId).map(toTopicView);
  }

  function getPreferences(token: string): PreferencesView {
    const { subscriber: s } = resolveLink(db, tokens, clock, token, 'manage');
    const paused = s.pausedUntil !== null && Date.parse(s.pausedUntil) > clock.now().getTime();
    return {
      email: s.email,
      status: s.status,
      timezone: s.timezone,
      deliveryHour: s.deliveryHour,
      frequency: s.frequency,
      weeklyDay: s.weeklyDay,
      pausedUntil: paused ? s.pausedUntil : null,
      topics: topicViews(s.id),
      unsubscribeUrl: links.unsubscribe(s),
      preferencesUrl: links.preferences(s),
      ...repo.getLearningPrefs(db, s.id),
      feedUrl: links.feed(feedSubject(db, s)),
      lastSlot: lastSlotReport(db, s.id, clock.now())?.message ?? '',
    };
  }

  /**
   * Sends a written notice: the CLI and the console wait for it (a failure is an error that says it will
   * be retried); the web does not (it is stored, so the page may say "on its way"; failures are retried and
   * counted).
   */
  async function deliver(queued: Queued, wait: boolean, subscriberId: number): Promise<SubscribeResult['emailState']> {
    if (queued === 'throttled') {
      logger.info({ subscriberId }, 'confirmation email throttled (per-address limits)');
      return 'throttled';
    }
    if (!wait) {
      // A notice that was waiting for a retry goes now: the person asked again.
      if (queued.reused) void notices.sendNow(queued.id).catch((e: unknown) => logger.error({ err: errorMessage(e) }, 'confirmation email failed'));
      else notices.kick();
      return 'queued';
    }
    const result = await notices.sendNow(queued.id);
    if (result === 'sent') return 'sent';
    if (result === undefined) return 'queued'; // another process is sending it right now
    const row = noticesOf(db, subscriberId, 1)[0];
    const why = row?.smtpResponse ?? result;
    const later = result === 'retry' ? '; it is kept and retried by the next run' : '';
    throw new AppError('CONFIRM_EMAIL_FAILED', `Could not send the confirmation email: ${why}${later}`, {
      status: 502,
      temporary: result === 'retry',
    });
  }

  function prefsFrom(input: SubscribeInput, current?: repo.SubscriberPrefs): repo.SubscriberPrefs {
    return {
      timezone: input.timezone !== undefined ? checkTimezone(input.timezone) : (current?.timezone ?? config.DIGEST_TZ),
      deliveryHour: input.deliveryHour !== undefined ? checkHour(input.deliveryHour) : (current?.deliveryHour ?? config.DIGEST_HOUR),
      frequency: input.frequency !== undefined ? checkFrequency(input.frequency) : (current?.frequency ?? 'daily'),
    };
  }

  return {
    /** The sender of confirmation emails (the pipeline and `digest serve` send what is due through it). */
    notices,

    async subscribe(input: SubscribeInput, options: SubscribeOptions = {}): Promise<SubscribeResult> {
      const email = normaliseEmail(input.email);
      const admin = options.confirmed === true;
      const sendEmail = options.sendEmail ?? !admin;
      // Everything is validated before anything is written, whatever the address, so that a bad topic
      // is refused the same way for known and unknown addresses.
      prefsFrom(input); // throws naming a bad time zone, hour or frequency
      const checked = checkTopics(input.topics);
      await prepareExamples(input.topics);
      const written = db.transaction(() => {
        const w = writeSubscription(email, input, prefsFrom, checked, admin);
        const queued = sendEmail && w.notice && w.id !== undefined ? queueNotice(db, { subscriberId: w.id, email, kind: w.notice, now: clock.now() }) : undefined;
        return { ...w, queued };
      }).immediate();
      const { id, outcome, queued } = written;
      const s = id === undefined ? undefined : repo.findSubscriberById(db, id);
      logger.info({ subscriberId: id, outcome }, 'subscribe');
      let mailState: SubscribeResult['emailState'] = 'none';
      if (queued && id !== undefined) mailState = await deliver(queued, options.waitForEmail ?? true, id);
      return { subscriberId: id, email: s?.email ?? email, outcome, status: s?.status ?? written.status, emailState: mailState };
    },

    /**
     * Confirms a pending subscriber, or the re-subscribe request of an unsubscribed one (only with a link
     * sent after the request); confirming twice is harmless. The page shows the topics (the email does not).
     */
    confirm(token: string): {
      subscriberId: number;
      email: string;
      alreadyConfirmed: boolean;
      preferencesUrl: string;
      /** When digests come, in the reader's zone: "every day at 07:00, Europe/Berlin" and the next slot after today's. */
      schedule: string;
      nextDelivery: string;
      /** The reader's unmuted topics (the page lists them and shows what already matches them). */
      topics: string[];
    } {
      const { subscriber: s } = resolveLink(db, tokens, clock, token, 'confirm');
      const alreadyConfirmed = s.status === 'confirmed';
      if (!alreadyConfirmed) {
        const issuedAt = (tokens.peek(token)?.exp ?? 0) * 1000 - CONFIRM_TTL_MS;
        db.transaction(() => confirmWrite(s, issuedAt)).immediate();
        logger.info({ subscriberId: s.id }, 'subscriber confirmed');
      }
      return {
        subscriberId: s.id,
        email: s.email,
        alreadyConfirmed,
        preferencesUrl: links.preferences(s),
        schedule: scheduleWords(s),
        nextDelivery: nextDeliveryWords(s, clock.now()),
        topics: repo.listTopics(db, s.id).filter((t) => !t.muted).map((t) => t.text),
      };
    },

    getPreferences,
    prepareExamples,

    /** Applies the whole form at once, or nothing (a bad topic or value throws a 400 naming it). */
    updatePreferences(token: string, input: PreferencesInput): PreferencesView {
      const { subscriber: s } = resolveLink(db, tokens, clock, token, 'manage');
      if (s.status === 'unsubscribed') {
        throw new AppError('UNSUBSCRIBED', 'You are unsubscribed. Subscribe again from the home page to change topics.', {
          status: 409,
        });
      }
      const timezone = input.timezone !== undefined ? checkTimezone(input.timezone) : s.timezone;
      const deliveryHour = input.deliveryHour !== undefined ? checkHour(input.deliveryHour) : s.deliveryHour;
      const frequency = input.frequency !== undefined ? checkFrequency(input.frequency) : s.frequency;
      const weeklyDay = input.weeklyDay !== undefined ? checkWeekday(input.weeklyDay) : s.weeklyDay;
      let pausedUntil = s.pausedUntil;
      if (input.pauseDays !== undefined) {
        const days = checkPauseDays(input.pauseDays);
        pausedUntil = days === 0 ? null : new Date(clock.now().getTime() + days * 86_400_000).toISOString();
      }
      const learning = repo.getLearningPrefs(db, s.id);
      if (input.maxPapers !== undefined) learning.maxPapers = checkMaxPapers(input.maxPapers);
      if (input.suggestions !== undefined) learning.suggestions = input.suggestions;
      if (input.modelOnly !== undefined) learning.modelOnly = input.modelOnly;
      const checked = input.topics === undefined ? undefined : checkTopics(input.topics);
      db.transaction(() => {
        if (checked !== undefined) repo.replaceTopics(db, s.id, desiredTopics(checked));
        repo.updatePreferenceColumns(db, s.id, { timezone, deliveryHour, frequency, weeklyDay, pausedUntil });
        repo.setLearningPrefs(db, s.id, learning);
      }).immediate();
      logger.info({ subscriberId: s.id }, 'preferences updated');
      return getPreferences(token);
    },

    /** Checks a manage link and says whose it is (for the unsubscribe page); changes nothing. */
    describeUnsubscribe(token: string): { email: string; status: SubscriberStatus; preferencesUrl: string } {
      const { subscriber: s } = resolveLink(db, tokens, clock, token, 'manage');
      return { email: s.email, status: s.status, preferencesUrl: links.preferences(s) };
    },

    /** Takes effect at once; unsubscribing twice is harmless. */
    unsubscribe(token: string): { email: string; changed: boolean } {
      const { subscriber: s } = resolveLink(db, tokens, clock, token, 'manage');
      const changed = repo.markUnsubscribed(db, s.id, nowIso(), { kind: 'unsubscribe', detail: 'unsubscribe link' });
      if (changed) logger.info({ subscriberId: s.id }, 'unsubscribed');
      return { email: s.email, changed };
    },

    /** Operator console: the confirmation email again, for a pending subscriber (same per-address limits). */
    async resendConfirmation(id: number): Promise<SubscribeResult['emailState']> {
      const s = repo.findSubscriberById(db, id);
      if (!s) throw new AppError('NOT_FOUND', `no subscriber with id ${id}`, { status: 404 });
      if (s.status !== 'pending') throw new AppError('NOT_PENDING', `${s.email} is ${s.status}: only a pending address gets a confirmation email`);
      const queued = db.transaction(() => queueNotice(db, { subscriberId: s.id, email: s.email, kind: 'confirm', now: clock.now() })).immediate();
      return deliver(queued, true, s.id);
    },

    /** Admin path (the person asked the operator). False when the address is unknown; true when it is now unsubscribed (even if it was already). */
    unsubscribeByEmail(email: string): boolean {
      const s = repo.findSubscriberByEmail(db, normaliseEmail(email));
      if (!s) return false;
      if (repo.markUnsubscribed(db, s.id, nowIso(), { kind: 'unsubscribe', detail: 'by the operator (digest unsubscribe)' })) {
        logger.info({ subscriberId: s.id }, 'unsubscribed by an administrator');
      }
      return true;
    },

    /**
     * Checks a mute link and names its topic (for the GET page); changes nothing. `topicId`: the link's
     * topic when its token is the manage token (links.ts mute()); without it, a token of an email sent
     * before, which names the topic itself.
     */
    describeMute(token: string, topicId?: number): MuteView {
      const { subscriber: s, topic } = resolveMute(token, topicId);
      return { email: s.email, topic: toTopicView(topic), preferencesUrl: links.preferences(s) };
    },

    muteByToken(token: string, topicId?: number): MuteView {
      const { subscriber: s, topic } = resolveMute(token, topicId);
      repo.setTopicMuted(db, s.id, topic.id, true);
      logger.info({ subscriberId: s.id, topicId: topic.id }, 'topic muted');
      return { email: s.email, topic: { ...toTopicView(topic), muted: true }, preferencesUrl: links.preferences(s) };
    },

    /** Checks a web-view link; returns the digest id it names and whose it is. */
    resolveDigestLink(token: string): { subscriberId: number; digestId: number } {
      // Its own read:<digestId> token, or the view:<digestId> one emails sent before it carry.
      const { subscriber, targetId } = resolveLink(db, tokens, clock, token, ['read', 'view']);
      return { subscriberId: subscriber.id, digestId: targetId! };
    },

    /** Streamed: one subscriber and their topics at a time, whatever the size of the list. */
    *list(): Generator<SubscriberListing> {
      for (const s of repo.iterateSubscribers(db)) yield toListing(s, repo.listTopics(db, s.id));
    },

    findByEmail(email: string): SubscriberListing | undefined {
      let normalised: string;
      try {
        normalised = normaliseEmail(email);
      } catch {
        return undefined;
      }
      const s = repo.findSubscriberByEmail(db, normalised);
      return s && toListing(s, repo.listTopics(db, s.id));
    },
  };

  function resolveMute(token: string, topicId: number | undefined): { subscriber: SubscriberRecord; topic: Topic } {
    const link = topicId === undefined ? resolveLink(db, tokens, clock, token, 'mute') : resolveLink(db, tokens, clock, token, 'manage');
    const { subscriber } = link;
    const targetId = topicId ?? link.targetId;
    // An address that left gets nothing more to mute: say so, as the preferences page does.
    if (subscriber.status === 'unsubscribed') {
      throw new AppError('UNSUBSCRIBED', 'You are unsubscribed, so no topic of yours is sent any more. Subscribe again from the home page to choose topics.', {
        status: 409,
      });
    }
    const topic = repo.listTopics(db, subscriber.id).find((t) => t.id === targetId);
    if (!topic) {
      throw new AppError('TOPIC_GONE', 'This topic is no longer in your preferences, so there is nothing to mute.', {
        status: 410,
      });
    }
    return { subscriber, topic };
  }
}

function toTopicView(t: Topic): TopicView {
  return { id: t.id, text: t.text, muted: t.muted };
}

function toListing(s: SubscriberRecord, topics: Topic[]): SubscriberListing {
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
