// GET /unsubscribe/:token: a page with a button (a GET never unsubscribes: mail scanners and link
// prefetchers open links). POST /unsubscribe/:token: RFC 8058 one-click. Mail providers post
// `List-Unsubscribe=One-Click` as form-urlencoded or multipart/form-data; any type is accepted, and
// no cookie or CSRF token is needed: the signed link is the authority.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { sendPage } from '../respond.ts';
import type { RouteDeps } from '../deps.ts';
import { tokenParams } from '../token-param.ts';

/** The body is not needed to act, only read (and bounded) so that no content type is refused. */
const ONE_CLICK_BODY_LIMIT = 64 * 1024;

export function registerUnsubscribeRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const { door: subscribers, pages } = deps;

  app.withTypeProvider<ZodTypeProvider>().get('/unsubscribe/:token', { schema: { params: tokenParams } }, async (req, reply) => {
    const who = await subscribers.describeUnsubscribe(req.params.token);
    return sendPage(reply, pages, 'unsubscribe', { title: 'Unsubscribe', token: req.params.token, ...who });
  });

  void app.register(async (scope) => {
    // Whatever the content type (urlencoded, multipart, text/plain, JSON, none), the POST reaches the route.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: ONE_CLICK_BODY_LIMIT }, (_req, _body, done) =>
      done(null, undefined),
    );
    scope
      .withTypeProvider<ZodTypeProvider>()
      .post('/unsubscribe/:token', { schema: { params: tokenParams } }, async (req, reply) => {
        const r = await subscribers.unsubscribe(req.params.token);
        return sendPage(reply, pages, 'unsubscribed', { title: 'You are unsubscribed', email: r.email });
      });
  });
}
