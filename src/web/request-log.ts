// One structured log line per request, with the signed tokens in link paths replaced: the logs
// must not become a list of working unsubscribe, preferences, feedback or feed links.
import type { FastifyInstance } from 'fastify';

const TOKEN_PATH = /^\/(confirm|preferences|unsubscribe|mute|digests|feedback|follow|feed)\/[^/?#]+/;

export function redactUrl(url: string): string {
  return url.replace(TOKEN_PATH, '/$1/[token]');
}

export function logRequests(app: FastifyInstance): void {
  app.addHook('onResponse', async (req, reply) => {
    req.log.info(
      { method: req.method, url: redactUrl(req.url), status: reply.statusCode, ms: Math.round(reply.elapsedTime) },
      'request',
    );
  });
}
