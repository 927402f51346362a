// GET /feed/:token: the subscriber's personal Atom feed (issue 13). The signed token is the key.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { FeedService } from '../../feed/atom.ts';
import { tokenParams } from '../token-param.ts';

export function registerFeedRoutes(app: FastifyInstance, feeds: FeedService): void {
  app.withTypeProvider<ZodTypeProvider>().get('/feed/:token', { schema: { params: tokenParams } }, async (req, reply) => {
    const xml = feeds.atom(req.params.token);
    return reply.type('application/atom+xml; charset=utf-8').header('cache-control', 'private, max-age=300').send(xml);
  });
}
