// Sends the notices table's emails (confirmation, "already subscribed"): claim a row, check that the
// address may still get it, render it (the link is signed now, so it is valid for its whole life from the
// moment it leaves), send, record the outcome. A failure follows the service's retry policy and backoff
// curve (send/retry-policy.ts, backoff.ts); a relay that cannot be used at all (refused, TLS, AUTH) is
// retried for NOTICE_GIVE_UP_MS whatever the attempts, so a confirmation goes out once the relay is fixed.
import { scheduleWords } from '../subscribers/records/delivery-words.ts';
import { hostname } from 'node:os';
import { retryDelayMs } from '../backoff.ts';
import type { Clock } from '../clock.ts';
import { personMayReverse } from '../consent/history.ts';
import type { Db } from '../db/open.ts';
import { errorMessage } from '../errors.ts';
import type { Links } from '../links.ts';
import type { Logger } from '../log.ts';
import { toMailError } from '../mail/errors.ts';
import type { Mailer } from '../mail/types.ts';
import type { Renderer } from '../render/render.ts';
import { afterFailure, type RetrySettings } from '../send/retry-policy.ts';
import type { SubscriberRecord } from '../subscribers/records/repo.ts';
import type { Notice, NoticeOutcome } from './repo.ts';
import { sqliteNoticeStore, type NoticeStore } from './store.ts';

/** A relay that cannot be used is retried this long after the notice was written; then it fails. */
export const NOTICE_GIVE_UP_MS = 24 * 3600 * 1000;
/** A row still 'sending' after this was left by a stopped process. */
const STALE_SENDING_MS = 15 * 60 * 1000;
/** A connection failure ends a run of due notices: the relay cannot be used, the rest wait for it. */
const RELAY_DOWN_AFTER = 1;

export type NoticeSenderDeps = NoticeSenderCommon & ({ db: Db; store?: undefined } | { db?: undefined; store: NoticeStore });

interface NoticeSenderCommon {
  clock: Clock;
  mailer: Mailer;
  renderer: Pick<Renderer, 'confirm'>;
  links: Links;
  logger: Logger;
  config: RetrySettings;
  random?: () => number;
}

export type NoticeResult = NoticeOutcome['status'];

export interface NoticeRunSummary {
  sent: number;
  failed: number;
  retrying: number;
  unknown: number;
  /** The relay's answer when the run stopped because it could not be used. */
  relayDown?: string;
}

/** One claimed notice's outcome; `connection` when the relay could not be used (ends a run). */
interface Attempt {
  result: NoticeResult;
  connection: boolean;
  response: string;
}

/**
 * Sends the notices table's emails. A class so each step (claim, render, settle, retry, run, timer)
 * is a named method sharing the deps, the claimant name and the one-run-at-a-time state.
 */
export class NoticeSender {
  private readonly random: () => number;
  private readonly claimant = `${hostname()}:${process.pid}:notices`;
  private running: Promise<NoticeRunSummary> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly store: NoticeStore;

  constructor(private readonly deps: NoticeSenderDeps) {
    this.random = deps.random ?? Math.random;
    // Where notices are claimed and settled: the SQLite database, or another engine's store.
    this.store = deps.store ?? sqliteNoticeStore(deps.db);
  }

  /** One notice now (`force`: even before its retry time); undefined when it was not ours to send. */
  async sendNow(id: number, force = true): Promise<NoticeResult | undefined> {
    return (await this.attempt(id, force))?.result;
  }

  async sendDue(): Promise<NoticeRunSummary> {
    // A run of its own after the background one, so the caller's summary counts what it sent.
    if (this.running) await this.running.catch(() => undefined);
    return this.runDue();
  }

  /** Sends what is due in the background (one run at a time), then waits for the next retry. */
  kick(): void {
    if (this.closed || this.running) return;
    this.running = this.runDue();
    this.running
      .catch((e: unknown) => this.deps.logger.error({ err: errorMessage(e) }, 'confirmation emails: run failed'))
      .finally(() => {
        this.running = undefined;
        this.scheduleNextRetry().catch((e: unknown) => this.deps.logger.error({ err: errorMessage(e) }, 'confirmation emails: next retry not scheduled'));
      });
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
  }

  /** Whether this email may still go to this address now (it may have left, or confirmed, since). */
  private async stillWanted(n: Notice, s: SubscriberRecord | undefined): Promise<boolean> {
    const { store } = this;
    if (!s) return false;
    if (n.kind === 'already-subscribed') return s.status === 'confirmed';
    if (s.status === 'pending') return personMayReverse(await store.activeOptOuts(s.email));
    return s.status === 'unsubscribed' && (await store.resubscribeTopics(s.id)) !== undefined && personMayReverse(await store.activeOptOuts(s.email));
  }

  private async render(n: Notice, s: SubscriberRecord) {
    const { renderer, links } = this.deps;
    const topicCount = n.kind === 'confirm' ? ((await this.store.resubscribeTopics(s.id))?.length ?? (await this.store.topicCount(s.id))) : 0;
    return renderer.confirm({
      email: s.email,
      confirmUrl: links.confirm(s),
      topicCount,
      alreadySubscribed: n.kind === 'already-subscribed',
      manageUrl: links.preferences(s),
      schedule: scheduleWords(s),
    });
  }

  private async settle(n: Notice, o: Partial<NoticeOutcome> & { status: NoticeResult }): Promise<NoticeResult> {
    await this.store.settle(n.id, this.claimant, { nextAttemptAt: null, code: null, response: null, sentAt: null, ...o });
    return o.status;
  }

  /** What a failed send does to the notice (retry-policy.ts, with the relay-down rule above). */
  private async afterError(n: Notice, e: unknown): Promise<Attempt> {
    const { clock, config } = this.deps;
    const err = toMailError(e);
    const now = clock.now();
    const base = { code: err.responseCode ?? null, response: err.response.slice(0, 500) };
    if (err.kind === 'connection') {
      const tooOld = now.getTime() - Date.parse(n.createdAt) >= NOTICE_GIVE_UP_MS;
      const delay = retryDelayMs(n.attempts + 1, { baseMs: config.SMTP_RETRY_BASE_MS, maxMs: config.SMTP_RETRY_MAX_MS }, this.random);
      const result = tooOld
        ? await this.settle(n, { status: 'failed', ...base })
        : await this.settle(n, { status: 'retry', nextAttemptAt: new Date(now.getTime() + delay).toISOString(), ...base });
      return { result, connection: true, response: base.response };
    }
    const d = afterFailure(err.kind, n.attempts, config, now, this.random);
    const status = d.action === 'retry' ? 'retry' : d.action === 'unknown' ? 'unknown' : 'failed';
    const result = await this.settle(n, { status, nextAttemptAt: d.action === 'retry' ? d.at.toISOString() : null, ...base });
    return { result, connection: false, response: base.response };
  }

  private async attempt(id: number, force: boolean): Promise<Attempt | undefined> {
    const { clock, mailer, logger } = this.deps;
    const n = await this.store.claim(id, this.claimant, clock.now().toISOString(), force);
    if (!n) return undefined; // another sender has it, or it is settled
    const s = n.subscriberId === null ? undefined : await this.store.subscriber(n.subscriberId);
    if (!s || !(await this.stillWanted(n, s))) {
      return { result: await this.settle(n, { status: 'failed', response: 'not sent: the address no longer wants it (it left, or confirmed, first)' }), connection: false, response: '' };
    }
    const mail = await this.render(n, s);
    try {
      const sent = await mailer.send({ to: s.email, subject: mail.subject, html: mail.html, text: mail.text });
      logger.info({ subscriberId: s.id, notice: n.id, kind: n.kind }, 'confirmation email sent');
      return { result: await this.settle(n, { status: 'sent', response: sent.response.slice(0, 500), sentAt: clock.now().toISOString() }), connection: false, response: '' };
    } catch (e) {
      const r = await this.afterError(n, e);
      logger.warn({ subscriberId: s.id, notice: n.id, kind: n.kind, outcome: r.result, err: errorMessage(e) }, 'confirmation email not sent');
      return r;
    }
  }

  /** One run over the due notices; stops early when the relay cannot be used. */
  private async runDue(): Promise<NoticeRunSummary> {
    const { clock } = this.deps;
    const summary: NoticeRunSummary = { sent: 0, failed: 0, retrying: 0, unknown: 0 };
    await this.store.recover(new Date(clock.now().getTime() - STALE_SENDING_MS).toISOString());
    let downInARow = 0;
    const tried = new Set<number>();
    for (;;) {
      const ids = (await this.store.due(clock.now().toISOString(), 50)).filter((id) => !tried.has(id));
      if (ids.length === 0) break;
      for (const id of ids) {
        tried.add(id);
        const r = await this.attempt(id, false);
        if (!r) continue;
        if (r.result === 'sent') summary.sent++;
        else if (r.result === 'failed') summary.failed++;
        else if (r.result === 'unknown') summary.unknown++;
        else summary.retrying++;
        downInARow = r.connection ? downInARow + 1 : 0;
        if (downInARow >= RELAY_DOWN_AFTER) {
          summary.relayDown = r.response;
          return summary;
        }
      }
    }
    return summary;
  }

  private async scheduleNextRetry(): Promise<void> {
    if (this.closed) return;
    const at = await this.store.nextRetry();
    if (this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (!at) return;
    this.timer = setTimeout(() => this.kick(), Math.max(1000, Date.parse(at) - this.deps.clock.now().getTime()));
    this.timer.unref();
  }
}

export function createNoticeSender(deps: NoticeSenderDeps): NoticeSender {
  return new NoticeSender(deps);
}
