// GET /mute/:token: a page with a button naming the topic; POST /mute/:token mutes it.
// Like unsubscribe, a GET changes nothing, so link prefetchers cannot mute.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { sendPage } from '../respond.ts';
import type { RouteDeps } from '../deps.ts';
import { tokenParams } from '../token-param.ts';

export function registerMuteRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const { subscribers, pages } = deps;
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get('/mute/:token', { schema: { params: tokenParams } }, async (req, reply) => {
    const view = subscribers.describeMute(req.params.token);
    return sendPage(reply, pages, 'mute', { title: 'Mute a topic', token: req.params.token, ...view });
  });

  r.post('/mute/:token', { schema: { params: tokenParams } }, async (req, reply) => {
    const view = subscribers.muteByToken(req.params.token);
    return sendPage(reply, pages, 'muted', { title: 'Topic muted', ...view });
  });
}
