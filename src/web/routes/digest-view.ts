// GET /digests/:token: the web view of one digest ("view in browser", and the target of the
// "N more papers" link when the email was capped). Lists every paper of the digest.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { loadDigest } from '../../render/view.ts';
import { AppError } from '../../errors.ts';
import type { RouteDeps } from '../deps.ts';
import { DIGEST_CSP } from '../security-headers.ts';
import { tokenParams } from '../token-param.ts';

export function registerDigestViewRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const { subscribers, db, links, renderer } = deps;
  app.withTypeProvider<ZodTypeProvider>().get('/digests/:token', { schema: { params: tokenParams } }, async (req, reply) => {
    const { subscriberId, digestId } = subscribers.resolveDigestLink(req.params.token);
    const loaded = loadDigest(db, digestId, links);
    // The token is signed for one subscriber and one digest: both must still agree.
    if (!loaded || loaded.row.subscriberId !== subscriberId) {
      throw new AppError('DIGEST_GONE', 'This digest is no longer available.', { status: 404 });
    }
    return reply
      .header('content-security-policy', DIGEST_CSP)
      .type('text/html; charset=utf-8')
      .send(renderer.webView(loaded.view));
  });
}
