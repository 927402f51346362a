// Subscription, the double opt-in: subscribe (or ask to come back), confirm, and the confirmation
// notices that carry the link. Answers never reveal whether an address exists: consent is decided in
// subscription-writes.ts; the per-address limits on confirmation emails in notices/queue.ts.
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/open.ts';
import { AppError } from '../errors.ts';
import { CONFIRM_TTL_MS, type Links } from '../links.ts';
import type { Logger } from '../log.ts';
import { queueNotice, type Queued } from '../notices/queue.ts';
import { noticesOf } from '../notices/repo.ts';
import type { NoticeSender } from '../notices/sender.ts';
import { deliverNotice } from './deliver-notice.ts';
import type { Tokens } from '../tokens.ts';
import { toConfirmResult } from './views.ts';
import { normaliseEmail } from './records/email-address.ts';
import { resolveLink } from './records/link-tokens.ts';
import { subscribePrefs } from './preferences-input.ts';
import * as repo from './records/repo.ts';
import { SubscriptionWrites, type SubscriptionWrite } from './subscription-writes.ts';
import { checkTopics, desiredTopics, prepareExamples, type CheckedTopic, type TopicInputDeps } from './topic-input.ts';
import type { SubscribeInput, SubscribeOptions, SubscribeResult } from './types.ts';

export interface SubscriptionDeps extends TopicInputDeps {
  db: Db;
  clock: Clock;
  tokens: Tokens;
  links: Links;
  config: Pick<Config, 'DIGEST_TZ' | 'DIGEST_HOUR'>;
  logger: Logger;
  notices: NoticeSender;
}

export interface ConfirmResult {
  subscriberId: number;
  email: string;
  alreadyConfirmed: boolean;
  preferencesUrl: string;
  /** When digests come, in the reader's zone: "every day at 07:00, Europe/Berlin" and the next slot after today's. */
  schedule: string;
  nextDelivery: string;
  /** The reader's unmuted topics (the page lists them and shows what already matches them). */
  topics: string[];
}

type EmailState = SubscribeResult['emailState'];

export class Subscription {
  private readonly deps: SubscriptionDeps;
  private readonly writes: SubscriptionWrites<CheckedTopic>;

  constructor(deps: SubscriptionDeps) {
    this.deps = deps;
    const { db, clock } = deps;
    this.writes = new SubscriptionWrites({ db, clock, desiredTopics: (checked: CheckedTopic[]) => desiredTopics(db, checked), checkTopics });
  }

  async subscribe(input: SubscribeInput, options: SubscribeOptions = {}): Promise<SubscribeResult> {
    const { db, logger } = this.deps;
    const email = normaliseEmail(input.email);
    const admin = options.confirmed === true;
    const sendEmail = options.sendEmail ?? !admin;
    // Everything is validated before anything is written, whatever the address, so that a bad topic
    // is refused the same way for known and unknown addresses.
    this.prefsFrom(input); // throws naming a bad time zone, hour or frequency
    const checked = checkTopics(input.topics);
    await prepareExamples(this.deps, input.topics);
    const written = this.writeAndQueue(email, input, checked, admin, sendEmail);
    const { id, outcome, queued } = written;
    const s = id === undefined ? undefined : repo.findSubscriberById(db, id);
    logger.info({ subscriberId: id, outcome }, 'subscribe');
    let mailState: EmailState = 'none';
    if (queued && id !== undefined) mailState = await this.deliver(queued, options.waitForEmail ?? true, id);
    return { subscriberId: id, email: s?.email ?? email, outcome, status: s?.status ?? written.status, emailState: mailState };
  }

  /**
   * Confirms a pending subscriber, or the re-subscribe request of an unsubscribed one (only with a link
   * sent after the request); confirming twice is harmless. The page shows the topics (the email does not).
   */
  confirm(token: string): ConfirmResult {
    const { db, tokens, clock, links, logger } = this.deps;
    const { subscriber: s } = resolveLink(db, tokens, clock, token, 'confirm');
    const alreadyConfirmed = s.status === 'confirmed';
    if (!alreadyConfirmed) {
      const issuedAt = (tokens.peek(token)?.exp ?? 0) * 1000 - CONFIRM_TTL_MS;
      db.transaction(() => this.writes.confirmWrite(s, issuedAt)).immediate();
      logger.info({ subscriberId: s.id }, 'subscriber confirmed');
    }
    return toConfirmResult(s, repo.listTopics(db, s.id), alreadyConfirmed, links, clock.now());
  }

  /** Operator console: the confirmation email again, for a pending subscriber (same per-address limits). */
  async resendConfirmation(id: number): Promise<EmailState> {
    const { db, clock } = this.deps;
    const s = repo.findSubscriberById(db, id);
    if (!s) throw new AppError('NOT_FOUND', `no subscriber with id ${id}`);
    if (s.status !== 'pending') throw new AppError('NOT_PENDING', `${s.email} is ${s.status}: only a pending address gets a confirmation email`);
    const queued = db.transaction(() => queueNotice(db, { subscriberId: s.id, email: s.email, kind: 'confirm', now: clock.now() })).immediate();
    return this.deliver(queued, true, s.id);
  }

  /** The subscription's rows and the notice it may lead to, in one transaction. */
  private writeAndQueue(email: string, input: SubscribeInput, checked: CheckedTopic[], admin: boolean, sendEmail: boolean): SubscriptionWrite & { queued: Queued | undefined } {
    const { db, clock } = this.deps;
    return db.transaction(() => {
      const w = this.writes.writeSubscription(email, input, (i, current) => this.prefsFrom(i, current), checked, admin);
      const queued = sendEmail && w.notice && w.id !== undefined ? queueNotice(db, { subscriberId: w.id, email, kind: w.notice, now: clock.now() }) : undefined;
      return { ...w, queued };
    }).immediate();
  }

  /** Sends a written notice (deliver-notice.ts). */
  private deliver(queued: Queued, wait: boolean, subscriberId: number): Promise<EmailState> {
    const lastResponse = (id: number) => noticesOf(this.deps.db, id, 1)[0]?.smtpResponse ?? undefined;
    return deliverNotice({ notices: this.deps.notices, logger: this.deps.logger, lastResponse }, queued, wait, subscriberId);
  }

  private prefsFrom(input: SubscribeInput, current?: repo.SubscriberPrefs): repo.SubscriberPrefs {
    return subscribePrefs(this.deps.config, input, current);
  }
}
