// GET /mute/:token/:topicId: a page with a button naming the topic; POST mutes it. The token is the
// subscriber's manage token (links.ts mute()). GET/POST /mute/:token: the same for the links of emails sent
// before, whose token names the topic itself (purpose mute:<topicId>).
// Like unsubscribe, a GET changes nothing, so link prefetchers cannot mute.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { sendPage } from '../respond.ts';
import type { RouteDeps } from '../deps.ts';
import { tokenParams } from '../token-param.ts';

const topicParams = tokenParams.extend({ topicId: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER) });

export function registerMuteRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const { door: subscribers, pages } = deps;
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get('/mute/:token/:topicId', { schema: { params: topicParams } }, async (req, reply) => {
    const view = await subscribers.describeMute(req.params.token, req.params.topicId);
    return sendPage(reply, pages, 'mute', { title: 'Mute a topic', action: req.url, ...view });
  });

  r.post('/mute/:token/:topicId', { schema: { params: topicParams } }, async (req, reply) => {
    const view = await subscribers.muteByToken(req.params.token, req.params.topicId);
    return sendPage(reply, pages, 'muted', { title: 'Topic muted', ...view });
  });

  r.get('/mute/:token', { schema: { params: tokenParams } }, async (req, reply) => {
    const view = await subscribers.describeMute(req.params.token);
    return sendPage(reply, pages, 'mute', { title: 'Mute a topic', action: req.url, ...view });
  });

  r.post('/mute/:token', { schema: { params: tokenParams } }, async (req, reply) => {
    const view = await subscribers.muteByToken(req.params.token);
    return sendPage(reply, pages, 'muted', { title: 'Topic muted', ...view });
  });
}
