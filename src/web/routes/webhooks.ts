// POST /webhooks/mailgun and POST /webhooks/ses: relays' bounce and complaint events (see
// src/bounces/webhooks.ts for how each is verified, bounces/webhook-events.ts for what they do). Each
// answers 404 unless configured (MAILGUN_WEBHOOK_SIGNING_KEY; SES_SNS_TOPIC_ARN, and BOUNCE_ADDRESS for
// both: the VERP tag is what maps an event to a subscriber). A bad signature answers 401 and changes nothing.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { WebhookRelay } from '../../bounces/webhook-events.ts';
import type { RouteDeps } from '../deps.ts';
import { errorBody } from '../response-schemas.ts';

const handled = z.object({ ok: z.literal(true), outcome: z.string() });
const schema = { response: { 200: handled, 404: errorBody } };

export function registerWebhookRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const events = deps.webhooks;

  // Bodies are read as text whatever the type (SNS posts JSON as text/plain), then parsed by the service.
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: 256 * 1024 }, (_req, body, done) => done(null, body));
    const r = scope.withTypeProvider<ZodTypeProvider>();

    for (const relay of ['mailgun', 'ses'] as const satisfies readonly WebhookRelay[]) {
      // A webhook that is off answers before its body is read. An event's signature is in its body, so the
      // body is read unauthenticated: at most what the relay sends (SNS messages are at most 256 KB, a
      // Mailgun event a few KB).
      const onRequest = async (_req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | void> => {
        const off = events.off(relay);
        if (off) return reply.code(404).send({ ok: false, code: 'NOT_FOUND', error: `this webhook is off: set ${off}` });
      };
      const bodyLimit = relay === 'ses' ? 256 * 1024 : 64 * 1024;
      r.post(`/webhooks/${relay}`, { schema, onRequest, bodyLimit }, async (req) => {
        const body = String(req.body ?? '');
        const outcome = relay === 'mailgun' ? await events.mailgun(body) : await events.ses(body);
        return { ok: true as const, outcome };
      });
    }
  });
}
