// What a relay's webhook post does, once the route has its body as text: read and verify it
// (webhooks.ts), find the digest through the VERP tag of the envelope sender (verp.ts), and record the
// report (service.ts). A webhook whose settings are missing is off: `off` names what to set.
import type { Config } from '../config.ts';
import { AppError } from '../errors.ts';
import type { Clock } from '../clock.ts';
import type { Logger } from '../log.ts';
import { eventHash } from './mailgun-tokens.ts';
import type { BounceChannel, BounceDeps, BounceInput, BounceOutcome } from './service.ts';
import { taggedDigestIn, type BounceStore } from './store.ts';
import { verpFrom } from './verp.ts';
import { readMailgun, readSesThroughSns, type WebhookEvent } from './webhooks.ts';

export type WebhookOutcome = BounceOutcome | 'ignored' | 'no-tag' | 'subscribed';
export type WebhookRelay = 'mailgun' | 'ses';

export interface WebhookDeps {
  /** The store the digests were sent from: the SQLite file, or PostgreSQL with DATABASE_URL (store.ts). */
  store: BounceStore;
  clock: Clock;
  logger: Logger;
  config: BounceDeps['config'] &
    Pick<Config, 'MAILGUN_WEBHOOK_SIGNING_KEY' | 'SES_SNS_TOPIC_ARN' | 'BOUNCE_ADDRESS' | 'SECRET_KEY'>;
  /** GET for the SNS signing certificates and SubscribeURL (default: fetch, 10 s, no redirects; tests serve their own). */
  fetchText?: ((url: string) => Promise<string>) | undefined;
}

export interface WebhookEvents {
  /** undefined when this relay's webhook is on, else the settings it needs. */
  off(relay: WebhookRelay): string | undefined;
  mailgun(body: string): Promise<WebhookOutcome>;
  ses(body: string): Promise<WebhookOutcome>;
}

async function fetchText(url: string): Promise<string> {
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000), redirect: 'error' });
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  return res.text();
}

export function createWebhookEvents(deps: WebhookDeps): WebhookEvents {
  const { config, clock, logger } = deps;
  const verp = verpFrom(config);

  /** The report an event makes, once its tag verified; 'ignored' or 'no-tag' (logged) when there is none. */
  const reportOf = async (event: WebhookEvent | null, channel: BounceChannel): Promise<BounceInput | 'ignored' | 'no-tag'> => {
    if (!event) return 'ignored';
    const tagged = await taggedDigestIn(deps.store, verp!, event.envelopeSender);
    if (!tagged) {
      logger.warn({ channel, kind: event.kind }, 'webhook event without a valid VERP tag, ignored');
      return 'no-tag';
    }
    return { digestId: tagged.digestId, kind: event.kind, channel, status: event.status, detail: event.detail };
  };

  const need = (setting: string | undefined, name: string) => (setting && verp ? undefined : `${name} and BOUNCE_ADDRESS`);

  return {
    off: (relay) =>
      relay === 'mailgun'
        ? need(config.MAILGUN_WEBHOOK_SIGNING_KEY, 'MAILGUN_WEBHOOK_SIGNING_KEY')
        : need(config.SES_SNS_TOPIC_ARN, 'SES_SNS_TOPIC_ARN'),

    async mailgun(body) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {
        throw new AppError('WEBHOOK_INVALID', 'body: not JSON (Mailgun webhooks post JSON)');
      }
      const now = clock.now();
      const post = readMailgun(parsed, config.MAILGUN_WEBHOOK_SIGNING_KEY!, now);
      // The tag is checked first (a read); the token and what the event does are then written together:
      // a post that fails leaves the token unused for the relay's retry.
      const report = await reportOf(post.event, 'mailgun');
      const input = typeof report === 'string' ? null : report;
      const r = await deps.store.recordWithToken({ token: post.token, hash: eventHash(post.eventData), expiresAt: post.expiresAt, now }, input);
      if (r.use === 'replay') throw new AppError('WEBHOOK_REFUSED', 'signature.token: already used with other event data');
      if (r.use === 'repeat') return 'duplicate';
      return r.outcome ?? (report as 'ignored' | 'no-tag');
    },

    async ses(body) {
      const r = await readSesThroughSns(body, { topicArn: config.SES_SNS_TOPIC_ARN!, fetchText: deps.fetchText ?? fetchText });
      if (r.type === 'subscribed') return 'subscribed';
      if (r.type === 'other') return 'ignored';
      const report = await reportOf(r.event, 'ses');
      return typeof report === 'string' ? report : deps.store.record(report);
    },
  };
}
