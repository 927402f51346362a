// GET /confirm/:token: the double opt-in link from the confirmation email.
// Confirming is idempotent and harmless if a link scanner opens it first (it only confirms the address
// that received the email), so a GET is enough here, unlike unsubscribe and mute.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { sendPage } from '../respond.ts';
import type { RouteDeps } from '../deps.ts';
import { tokenParams } from '../token-param.ts';

export function registerConfirmRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const { subscribers, pages } = deps;
  app.withTypeProvider<ZodTypeProvider>().get('/confirm/:token', { schema: { params: tokenParams } }, async (req, reply) => {
    const r = subscribers.confirm(req.params.token);
    if (!r.alreadyConfirmed) deps.onConfirmed?.(r.subscriberId);
    return sendPage(reply, pages, 'confirmed', {
      title: r.alreadyConfirmed ? 'Already confirmed' : 'Subscription confirmed',
      ...r,
    });
  });
}
