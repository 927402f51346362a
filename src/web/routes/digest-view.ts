// GET /digests/:token: the web view of one digest ("view in browser", and the target of the
// "N more papers" link when the email was capped). Lists every paper of the digest.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { RouteDeps } from '../deps.ts';
import { DIGEST_CSP } from '../security-headers.ts';
import { tokenParams } from '../token-param.ts';

export function registerDigestViewRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const { renderer, digests } = deps;
  app.withTypeProvider<ZodTypeProvider>().get('/digests/:token', { schema: { params: tokenParams } }, async (req, reply) => {
    const view = await digests.open(req.params.token);
    return reply
      .header('content-security-policy', DIGEST_CSP)
      .type('text/html; charset=utf-8')
      .send(renderer.webView(view));
  });
}
