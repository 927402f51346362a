// Machine routes: POST /api/batches (Bearer API_TOKEN), GET /health, GET /metrics (Bearer METRICS_TOKEN, or local). Each calls one
// method of the MachineApi the composition root wires (report/health.ts, report/status.ts, ingest/post-batch.ts).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Config } from '../../config.ts';
import type { MachineApi } from '../deps.ts';
import { errorBody, okBody } from '../response-schemas.ts';
import { peerIsLoopback, proxyHidesPeer } from '../local-only.ts';

export interface ApiDeps {
  machine: MachineApi;
  config: Pick<Config, 'API_TOKEN' | 'METRICS_TOKEN' | 'TRUST_PROXY'>;
}

const TEXT_TYPES = ['application/json', 'application/xml', 'text/xml', 'application/atom+xml', 'application/rss+xml', 'text/plain'];

const batchQuery = z.object({
  format: z.string().optional(),
  source: z.string().optional(),
  date: z.string().optional(),
});

const batchStored = z.object({
  ok: z.literal(true),
  source: z.string(),
  date: z.string(),
  batchId: z.number(),
  papers: z.number(),
  newPapers: z.number(),
  updatedPapers: z.number(),
  duplicate: z.boolean(),
});

/** Constant-time comparison of the presented bearer token with API_TOKEN (hashed to equal lengths first). */
export function tokenMatches(header: string | undefined, expected: string): boolean {
  const m = /^Bearer\s+(\S+)$/i.exec(header ?? '');
  const given = createHash('sha256').update(m?.[1] ?? '').digest();
  return timingSafeEqual(given, createHash('sha256').update(expected).digest()) && m !== null;
}

function metricsGuard(config: ApiDeps['config']) {
  return async (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | void> => {
    if (config.METRICS_TOKEN) {
      if (tokenMatches(req.headers.authorization, config.METRICS_TOKEN)) return;
      return reply.code(401).header('www-authenticate', 'Bearer').send({ ok: false, code: 'METRICS_TOKEN', error: 'missing or wrong bearer token (METRICS_TOKEN)' });
    }
    const proxy = proxyHidesPeer(config);
    if (!proxy && peerIsLoopback(req)) return;
    const why = proxy ?? 'it is served only to this machine';
    return reply.code(403).send({ ok: false, code: 'METRICS_LOCAL_ONLY', error: `/metrics: ${why}; set METRICS_TOKEN to read it with a bearer token` });
  };
}

export function registerApiRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const { machine, config } = deps;
  const r = app.withTypeProvider<ZodTypeProvider>();

  // 503 + Retry-After naming the storage fault when the database does not take a write (report/health.ts).
  r.get('/health', { schema: { response: { 200: okBody, 503: errorBody } } }, async (_req, reply) => {
    const fault = await machine.health();
    if (!fault) return { ok: true as const };
    return reply
      .code(503)
      .header('retry-after', String(fault.retryAfterSeconds))
      .send({ ok: false, code: fault.fault, error: fault.message });
  });

  // Its counts are the operator's (a pending gauge would tell a stranger whether an address was just
  // subscribed): a bearer token, or this machine when no proxy stands in between. Checked before anything else.
  void app.register(async (scope) => {
    scope.addHook('onRequest', metricsGuard(config));
    scope.get('/metrics', async (_req, reply) => {
      reply.type('text/plain; version=0.0.4; charset=utf-8');
      return machine.metrics();
    });
  });

  // The batch API reads its body as text, whatever the type, and hands it to the same reader as `digest ingest`.
  // Who is asking is checked in onRequest, before a byte of the body (up to 20 MB) is read.
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(TEXT_TYPES, { parseAs: 'string', bodyLimit: 20 * 1024 * 1024 }, (_req, body, done) =>
      done(null, body),
    );
    scope.addHook('onRequest', async (req, reply) => {
      if (!config.API_TOKEN) {
        return reply.code(503).send({ ok: false, error: 'the batch API is disabled: set API_TOKEN to enable it' });
      }
      if (!tokenMatches(req.headers.authorization, config.API_TOKEN)) {
        return reply
          .code(401)
          .header('www-authenticate', 'Bearer')
          .send({ ok: false, error: 'missing or wrong bearer token' });
      }
    });
    scope.withTypeProvider<ZodTypeProvider>().post(
      '/api/batches',
      { schema: { querystring: batchQuery, response: { 200: batchStored, 201: batchStored, 401: errorBody, 503: errorBody } } },
      async (req, reply) => {
        const { source, date, ...stored } = await machine.postBatch({ body: req.body, ...req.query });
        return reply.code(stored.duplicate ? 200 : 201).send({ ok: true, source, date, ...stored });
      },
    );
  });
}
