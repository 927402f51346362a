// POST /webhooks/mailgun and POST /webhooks/ses: relays' bounce and complaint events (see
// src/bounces/webhooks.ts for how each is verified). Each answers 404 unless configured
// (MAILGUN_WEBHOOK_SIGNING_KEY; SES_SNS_TOPIC_ARN, and BOUNCE_ADDRESS for both: the VERP tag is what maps an
// event to a subscriber). A bad signature answers 401 and changes nothing.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { recordBounce } from '../../bounces/service.ts';
import { verpFrom } from '../../bounces/verp.ts';
import { readMailgun, readSesThroughSns, type WebhookEvent } from '../../bounces/webhooks.ts';
import type { BounceChannel } from '../../bounces/service.ts';
import { AppError } from '../../errors.ts';
import type { RouteDeps } from '../deps.ts';

const defaultFetchText = async (url: string): Promise<string> => {
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000), redirect: 'error' });
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  return res.text();
};

export function registerWebhookRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const { config, db, clock, logger } = deps;
  const verp = verpFrom(config);
  const disabled = (reply: FastifyReply, what: string) =>
    reply.code(404).send({ ok: false, code: 'NOT_FOUND', error: `this webhook is off: set ${what} and BOUNCE_ADDRESS` });

  const act = (event: WebhookEvent | null, channel: BounceChannel) => {
    if (!event) return { ok: true, outcome: 'ignored' };
    const tagged = verp!.parse(event.envelopeSender);
    if (!tagged) {
      logger.warn({ channel, kind: event.kind }, 'webhook event without a valid VERP tag, ignored');
      return { ok: true, outcome: 'no-tag' };
    }
    const outcome = recordBounce({ db, clock, logger, config }, { digestId: tagged.digestId, kind: event.kind, channel, status: event.status, detail: event.detail });
    return { ok: true, outcome };
  };

  // Bodies are read as text whatever the type (SNS posts JSON as text/plain), then parsed here.
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: 256 * 1024 }, (_req, body, done) => done(null, body));

    scope.post('/webhooks/mailgun', async (req, reply) => {
      if (!config.MAILGUN_WEBHOOK_SIGNING_KEY || !verp) return disabled(reply, 'MAILGUN_WEBHOOK_SIGNING_KEY');
      let body: unknown;
      try {
        body = JSON.parse(String(req.body ?? ''));
      } catch {
        throw new AppError('WEBHOOK_INVALID', 'body: not JSON (Mailgun webhooks post JSON)');
      }
      return act(readMailgun(body, config.MAILGUN_WEBHOOK_SIGNING_KEY, clock.now()), 'mailgun');
    });

    scope.post('/webhooks/ses', async (req, reply) => {
      if (!config.SES_SNS_TOPIC_ARN || !verp) return disabled(reply, 'SES_SNS_TOPIC_ARN');
      const r = await readSesThroughSns(String(req.body ?? ''), { topicArn: config.SES_SNS_TOPIC_ARN, fetchText: deps.snsFetchText ?? defaultFetchText });
      if (r.type === 'subscribed') return { ok: true, outcome: 'subscribed' };
      if (r.type === 'other') return { ok: true, outcome: 'ignored' };
      return act(r.event, 'ses');
    });
  });
}
