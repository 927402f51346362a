// The double opt-in on PostgreSQL: subscribe (or ask to come back) and confirm, following the same
// consent rules as SQLite (consent-rules.ts) and the same per-address email limits (notices/queue.ts),
// counted from PostgreSQL's notices so every instance on the database counts the same emails.
import type pg from 'pg';
import { describeOptOuts } from '../../consent/history.ts';
import { activeOptOuts, recordConsentEvent } from '../../consent/postgres.ts';
import { AppError } from '../../errors.ts';
import { CONFIRM_TTL_MS } from '../../links.ts';
import { unknownExample } from '../../match/like/like.ts';
import { missingExamplesPg } from '../../match/postgres/like-examples.ts';
import { lastNoticePg, queueNoticePg } from '../../notices/postgres-store.ts';
import type { Queued } from '../../notices/queue.ts';
import type { NoticeSender } from '../../notices/sender.ts';
import { deliverNotice } from '../deliver-notice.ts';
import { newSalt } from '../../tokens.ts';
import { linkAfterRequest, mayConfirm, reconfirmation, RECONFIRMED_DETAIL, subscribeStep } from '../consent-rules.ts';
import { toConfirmResult } from '../views.ts';
import { normaliseEmail } from '../records/email-address.ts';
import { invalidLink } from '../records/link-tokens.ts';
import * as records from '../records/postgres.ts';
import type { DesiredTopic, SubscriberRecord } from '../records/repo.ts';
import { subscribePrefs } from '../preferences-input.ts';
import type { ConfirmResult } from '../subscription.ts';
import type { SubscriptionWrite } from '../subscription-writes.ts';
import { checkTopics, likeExampleIds, type CheckedTopic } from '../topic-input.ts';
import type { SubscribeInput, SubscribeOptions, SubscribeResult } from '../types.ts';
import { resolveLinkPg, forAddress, type PgDoorDeps } from './common.ts';

export interface PgSubscriptionDeps extends PgDoorDeps {
  notices: NoticeSender;
}

type EmailState = SubscribeResult['emailState'];

/**
 * The like: examples PostgreSQL lacks, looked up on arXiv (deps.likeLookups, over PostgreSQL's
 * like_examples) before any transaction, as on SQLite; without lookups an unknown example is refused
 * naming it. The same answer for every address.
 */
export async function prepareExamplesPg(deps: PgDoorDeps, items: Array<string | { text: string }> | undefined): Promise<void> {
  const ids = likeExampleIds(items);
  if (ids.length === 0) return;
  if (deps.likeLookups) return deps.likeLookups.ensure(ids);
  const missing = await missingExamplesPg(deps.pool, ids);
  if (missing.length > 0) throw unknownExample(missing[0]!, 'no arXiv source is configured to look it up');
}

/** The query rows of checked topics (inside the caller's transaction). */
export async function desiredTopicsPg(c: pg.PoolClient, checked: CheckedTopic[]): Promise<DesiredTopic[]> {
  const out: DesiredTopic[] = [];
  for (const t of checked) {
    out.push({ text: t.text, queryId: await records.ensureQuery(c, t.parsed), ...(t.muted === undefined ? {} : { muted: t.muted }) });
  }
  return out;
}

export class PgSubscription {
  constructor(private readonly deps: PgSubscriptionDeps) {}

  async subscribe(input: SubscribeInput, options: SubscribeOptions = {}): Promise<SubscribeResult> {
    const { pool, logger } = this.deps;
    const email = normaliseEmail(input.email);
    const admin = options.confirmed === true;
    const sendEmail = options.sendEmail ?? !admin;
    subscribePrefs(this.deps.config, input); // throws naming a bad time zone, hour or frequency
    const checked = checkTopics(input.topics);
    await prepareExamplesPg(this.deps, input.topics);
    const written = await forAddress(pool, email, async (c) => {
      const w = await this.write(c, email, input, checked, admin);
      const queued = sendEmail && w.notice && w.id !== undefined ? await queueNoticePg(c, { subscriberId: w.id, email, kind: w.notice, now: this.deps.clock.now() }) : undefined;
      const s = w.id === undefined ? undefined : await records.findSubscriberById(c, w.id);
      return { ...w, queued, stored: s };
    });
    const { id, outcome, queued, stored } = written;
    logger.info({ subscriberId: id, outcome }, 'subscribe');
    let mailState: EmailState = 'none';
    if (queued && id !== undefined) mailState = await this.deliver(queued, options.waitForEmail ?? true, id);
    return { subscriberId: id, email: stored?.email ?? email, outcome, status: stored?.status ?? written.status, emailState: mailState };
  }

  /** subscription-writes.ts writeSubscription, on PostgreSQL. */
  private async write(c: pg.PoolClient, email: string, input: SubscribeInput, checked: CheckedTopic[], admin: boolean): Promise<SubscriptionWrite> {
    const { clock, config } = this.deps;
    const existing = await records.findSubscriberByEmail(c, email);
    const active = await activeOptOuts(c, email);
    const now = clock.now().toISOString();
    const step = subscribeStep(existing, active, admin);
    if (step.kind === 'refuse') {
      const why = active.length > 0 ? describeOptOuts(active) : `${existing?.status}`;
      throw new AppError('OPTED_OUT', `${email} opted out (${why}): the operator never confirms it this way; lift it with a reason first`);
    }
    if (step.kind === 'nothing') return { id: existing?.id, outcome: step.outcome, status: step.status, ...(step.notice ? { notice: step.notice } : {}) };
    if (step.kind === 'resubscribe-request') {
      const { id } = existing!;
      await records.saveResubscribeRequest(c, id, { ...subscribePrefs(config, input, existing), topics: checked.map((t) => t.text), requestedAt: now });
      return { id, outcome: 'resubscribe-requested', status: 'unsubscribed', notice: 'confirm' };
    }
    const topics = await desiredTopicsPg(c, checked);
    let id: number;
    let outcome: SubscribeResult['outcome'];
    if (!existing) {
      id = await records.insertSubscriber(c, { email, salt: newSalt(), createdAt: now, ...subscribePrefs(config, input) });
      outcome = 'created';
    } else {
      id = existing.id;
      await records.updateSubscribePrefs(c, id, subscribePrefs(config, input, existing));
      outcome = existing.status === 'pending' ? 'updated' : 'confirmed';
    }
    await records.replaceTopics(c, id, topics);
    if (admin) {
      await records.markConfirmed(c, id, now);
      return { id, outcome: 'confirmed', status: 'confirmed' };
    }
    return { id, outcome, status: 'pending', notice: 'confirm' };
  }

  async confirm(token: string): Promise<ConfirmResult> {
    const { pool, tokens, clock, links, logger } = this.deps;
    const { subscriber: found } = await resolveLinkPg(pool, this.deps, token, 'confirm');
    const issuedAt = (tokens.peek(token)?.exp ?? 0) * 1000 - CONFIRM_TTL_MS;
    const s = await forAddress(pool, found.email, async (c) => {
      const before = (await records.findSubscriberById(c, found.id)) ?? found;
      if (before.status !== 'confirmed') await this.confirmWrite(c, before, issuedAt);
      return before;
    });
    const alreadyConfirmed = s.status === 'confirmed';
    if (!alreadyConfirmed) logger.info({ subscriberId: s.id }, 'subscriber confirmed');
    return toConfirmResult(s, await records.listTopics(pool, s.id), alreadyConfirmed, links, clock.now());
  }

  /** subscription-writes.ts confirmWrite, on PostgreSQL. */
  private async confirmWrite(c: pg.PoolClient, s: SubscriberRecord, issuedAt: number): Promise<void> {
    const active = await activeOptOuts(c, s.email);
    if (!mayConfirm(s.status, active)) throw invalidLink('confirm');
    const now = this.deps.clock.now().toISOString();
    if (s.status === 'unsubscribed') {
      const request = await records.findResubscribeRequest(c, s.id);
      if (!request || !linkAfterRequest(request, issuedAt)) throw invalidLink('confirm');
      await records.replaceTopics(c, s.id, await desiredTopicsPg(c, checkTopics(request.topics)));
      await records.updateSubscribePrefs(c, s.id, request);
      await records.deleteResubscribeRequest(c, s.id);
    }
    await records.markConfirmed(c, s.id, now);
    if (reconfirmation(s.status, active)) {
      await recordConsentEvent(c, { email: s.email, kind: 'reconfirmed', status: null, detail: RECONFIRMED_DETAIL, at: now });
    }
  }

  /** The console's "resend the confirmation": pending addresses only, within the per-address limits. */
  async resendConfirmation(id: number): Promise<EmailState> {
    const { pool, clock } = this.deps;
    const found = await records.findSubscriberById(pool, id);
    if (!found) throw new AppError('NOT_FOUND', `no subscriber with id ${id}`);
    const queued = await forAddress(pool, found.email, async (c) => {
      const s = await records.findSubscriberById(c, id);
      if (s?.status !== 'pending') throw new AppError('NOT_PENDING', `${found.email} is ${s?.status ?? 'deleted'}: only a pending address gets a confirmation email`);
      return queueNoticePg(c, { subscriberId: id, email: s.email, kind: 'confirm', now: clock.now() });
    });
    return this.deliver(queued, true, id);
  }

  /** Sends a written notice (deliver-notice.ts). */
  private deliver(queued: Queued, wait: boolean, subscriberId: number): Promise<EmailState> {
    const lastResponse = async (id: number) => (await lastNoticePg(this.deps.pool, id))?.smtpResponse ?? undefined;
    return deliverNotice({ notices: this.deps.notices, logger: this.deps.logger, lastResponse }, queued, wait, subscriberId);
  }
}
