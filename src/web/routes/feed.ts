// GET /feed/:token: the subscriber's personal Atom feed. The signed token is the key; it
// answers 410 once its reader unsubscribed. POST /preferences/:token/feed gives the feed a new address.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { ReaderFeeds } from '../../feed/port.ts';
import { tokenParams } from '../token-param.ts';

export function registerFeedRoutes(app: FastifyInstance, feeds: ReaderFeeds): void {
  app.withTypeProvider<ZodTypeProvider>().get('/feed/:token', { schema: { params: tokenParams } }, async (req, reply) => {
    const xml = await feeds.atom(req.params.token);
    return reply.type('application/atom+xml; charset=utf-8').header('cache-control', 'private, max-age=300').send(xml);
  });

  // "New feed address" on the preferences page (a button of its form): the old feed URL stops working.
  app.withTypeProvider<ZodTypeProvider>().post('/preferences/:token/feed', { schema: { params: tokenParams } }, async (req, reply) => {
    await feeds.rotate(req.params.token);
    return reply.redirect(`/preferences/${req.params.token}?saved=1`, 303);
  });
}
