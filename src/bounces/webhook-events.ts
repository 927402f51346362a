// What a relay's webhook post does, once the route has its body as text: read and verify it
// (webhooks.ts), find the digest through the VERP tag of the envelope sender (verp.ts), and record the
// report (service.ts). A webhook whose settings are missing is off: `off` names what to set.
import type { Config } from '../config.ts';
import { AppError } from '../errors.ts';
import { taggedDigest } from './digest-tag.ts';
import { eventHash, useMailgunToken } from './mailgun-tokens.ts';
import { recordBounce, type BounceChannel, type BounceDeps, type BounceOutcome } from './service.ts';
import { verpFrom } from './verp.ts';
import { readMailgun, readSesThroughSns, type WebhookEvent } from './webhooks.ts';

export type WebhookOutcome = BounceOutcome | 'ignored' | 'no-tag' | 'subscribed';
export type WebhookRelay = 'mailgun' | 'ses';

export interface WebhookDeps extends BounceDeps {
  config: BounceDeps['config'] &
    Pick<Config, 'MAILGUN_WEBHOOK_SIGNING_KEY' | 'SES_SNS_TOPIC_ARN' | 'BOUNCE_ADDRESS' | 'SECRET_KEY'>;
  /** GET for the SNS signing certificates and SubscribeURL (default: fetch, 10 s, no redirects; tests serve their own). */
  fetchText?: ((url: string) => Promise<string>) | undefined;
}

export interface WebhookEvents {
  /** undefined when this relay's webhook is on, else the settings it needs. */
  off(relay: WebhookRelay): string | undefined;
  mailgun(body: string): WebhookOutcome;
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

  const act = (event: WebhookEvent | null, channel: BounceChannel): WebhookOutcome => {
    if (!event) return 'ignored';
    const tagged = taggedDigest(deps.db, verp!, event.envelopeSender);
    if (!tagged) {
      logger.warn({ channel, kind: event.kind }, 'webhook event without a valid VERP tag, ignored');
      return 'no-tag';
    }
    return recordBounce(deps, { digestId: tagged.digestId, kind: event.kind, channel, status: event.status, detail: event.detail });
  };

  const need = (setting: string | undefined, name: string) => (setting && verp ? undefined : `${name} and BOUNCE_ADDRESS`);

  return {
    off: (relay) =>
      relay === 'mailgun'
        ? need(config.MAILGUN_WEBHOOK_SIGNING_KEY, 'MAILGUN_WEBHOOK_SIGNING_KEY')
        : need(config.SES_SNS_TOPIC_ARN, 'SES_SNS_TOPIC_ARN'),

    mailgun(body) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {
        throw new AppError('WEBHOOK_INVALID', 'body: not JSON (Mailgun webhooks post JSON)');
      }
      const now = clock.now();
      const post = readMailgun(parsed, config.MAILGUN_WEBHOOK_SIGNING_KEY!, now);
      // The token and what the event does are written together: a post that fails leaves the token unused.
      return deps.db
        .transaction((): WebhookOutcome => {
          const use = useMailgunToken(deps.db, { token: post.token, hash: eventHash(post.eventData), expiresAt: post.expiresAt, now });
          if (use === 'replay') throw new AppError('WEBHOOK_REFUSED', 'signature.token: already used with other event data');
          if (use === 'repeat') return 'duplicate';
          return act(post.event, 'mailgun');
        })
        .immediate();
    },

    async ses(body) {
      const r = await readSesThroughSns(body, { topicArn: config.SES_SNS_TOPIC_ARN!, fetchText: deps.fetchText ?? fetchText });
      if (r.type === 'subscribed') return 'subscribed';
      if (r.type === 'other') return 'ignored';
      return act(r.event, 'ses');
    },
  };
}
