// The writes behind subscribe and confirm, where consent is decided (inside the caller's transaction):
//   - a confirmed address: nothing changes ("already subscribed" email);
//   - an address whose opt-outs the person may not reverse themselves (complaint, hard bounce, the
//     operator's suppression): nothing is written and nothing is mailed;
//   - an unsubscribed address: its request is stored apart; the row stays unsubscribed (no digest) until
//     the confirmation link sent after the request is clicked;
//   - the operator's paths (`--confirmed`, imports) never confirm an address with an opt-out: lift it first.
// The web answer is the same whatever happens here (no address enumeration).
import type { Clock } from '../clock.ts';
import { activeOptOuts, describeOptOuts, recordConsentEvent } from '../consent/history.ts';
import { linkAfterRequest, mayConfirm, reconfirmation, RECONFIRMED_DETAIL, subscribeStep } from './consent-rules.ts';
import type { Db } from '../db/open.ts';
import { AppError } from '../errors.ts';
import type { NoticeKind } from '../notices/repo.ts';
import { newSalt } from '../tokens.ts';
import type { SubscriberStatus } from '../types.ts';
import { invalidLink } from './records/link-tokens.ts';
import * as repo from './records/repo.ts';
import type { SubscriberRecord } from './records/repo.ts';
import type { SubscribeInput, SubscribeOutcome } from './types.ts';

export interface SubscriptionWrite {
  /** The subscriber row (none when an opted-out address's row was deleted: nothing is created). */
  id: number | undefined;
  outcome: SubscribeOutcome;
  status: SubscriberStatus;
  /** The email this request may lead to (the caller applies the per-address limits). */
  notice?: NoticeKind;
}

export interface SubscriptionWritesDeps<C extends { text: string }> {
  db: Db;
  clock: Clock;
  desiredTopics: (checked: C[]) => repo.DesiredTopic[];
  checkTopics: (texts: string[]) => C[];
}

export class SubscriptionWrites<C extends { text: string }> {
  private readonly deps: SubscriptionWritesDeps<C>;

  constructor(deps: SubscriptionWritesDeps<C>) {
    this.deps = deps;
  }

  private refuseOptedOut(email: string, active: ReturnType<typeof activeOptOuts>, status: SubscriberStatus | undefined): never {
    const why = active.length > 0 ? describeOptOuts(active) : `${status}`;
    throw new AppError(
      'OPTED_OUT',
      `${email} opted out (${why}): the operator never confirms it this way; if the person asked to come back, lift it with a reason first (digest unsuppress ${email} --reason "…")`
    );
  }

  writeSubscription(
    email: string,
    input: SubscribeInput,
    prefsFrom: (input: SubscribeInput, current?: repo.SubscriberPrefs) => repo.SubscriberPrefs,
    checked: C[],
    admin: boolean,
  ): SubscriptionWrite {
    const { db, clock } = this.deps;
    const existing = repo.findSubscriberByEmail(db, email);
    const active = activeOptOuts(db, email);
    const now = clock.now().toISOString();
    const step = subscribeStep(existing, active, admin);
    if (step.kind === 'refuse') this.refuseOptedOut(email, active, existing?.status);
    if (step.kind === 'nothing') return { id: existing?.id, outcome: step.outcome, status: step.status, ...(step.notice ? { notice: step.notice } : {}) };
    if (step.kind === 'resubscribe-request') {
      const { id } = existing!;
      repo.saveResubscribeRequest(db, id, { ...prefsFrom(input, existing), topics: checked.map((c) => c.text), requestedAt: now });
      return { id, outcome: 'resubscribe-requested', status: 'unsubscribed', notice: 'confirm' };
    }
    return this.writeRow(email, existing, input, prefsFrom, checked, admin, now);
  }

  /** A new or pending address, or the operator's path (confirmed at once): its row, preferences and topics. */
  private writeRow(
    email: string,
    existing: SubscriberRecord | undefined,
    input: SubscribeInput,
    prefsFrom: (input: SubscribeInput, current?: repo.SubscriberPrefs) => repo.SubscriberPrefs,
    checked: C[],
    admin: boolean,
    now: string,
  ): SubscriptionWrite {
    const { db, desiredTopics } = this.deps;
    const topics = desiredTopics(checked);
    let id: number;
    let outcome: SubscribeOutcome;
    if (!existing) {
      id = repo.insertSubscriber(db, { email, salt: newSalt(), createdAt: now, ...prefsFrom(input) });
      outcome = 'created';
    } else {
      id = existing.id;
      repo.updateSubscribePrefs(db, id, prefsFrom(input, existing));
      outcome = existing.status === 'pending' ? 'updated' : 'confirmed';
    }
    repo.replaceTopics(db, id, topics);
    if (admin) {
      repo.markConfirmed(db, id, now);
      return { id, outcome: 'confirmed', status: 'confirmed' };
    }
    return { id, outcome, status: 'pending', notice: 'confirm' };
  }

  /**
   * A confirmation link clicked (`issuedAt`: when it was signed). An unsubscribed address comes back only
   * through a link sent after its re-subscribe request, and then takes that request's topics and schedule.
   */
  confirmWrite(s: SubscriberRecord, issuedAt: number): void {
    const { db, clock, desiredTopics, checkTopics } = this.deps;
    const active = activeOptOuts(db, s.email);
    if (!mayConfirm(s.status, active)) throw invalidLink('confirm');
    const now = clock.now().toISOString();
    if (s.status === 'unsubscribed') {
      const request = repo.findResubscribeRequest(db, s.id);
      if (!request || !linkAfterRequest(request, issuedAt)) throw invalidLink('confirm');
      repo.replaceTopics(db, s.id, desiredTopics(checkTopics(request.topics)));
      repo.updateSubscribePrefs(db, s.id, request);
      repo.deleteResubscribeRequest(db, s.id);
    }
    repo.markConfirmed(db, s.id, now);
    if (reconfirmation(s.status, active)) {
      recordConsentEvent(db, { email: s.email, kind: 'reconfirmed', status: null, detail: RECONFIRMED_DETAIL, at: now });
    }
  }
}
