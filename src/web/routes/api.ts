// Machine routes: POST /api/batches (Bearer API_TOKEN), GET /health, GET /metrics. Each calls one
// method of the MachineApi the composition root wires (report/health.ts, report/status.ts, ingest/post-batch.ts).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Config } from '../../config.ts';
import type { MachineApi } from '../deps.ts';
import { errorBody, okBody } from '../response-schemas.ts';

export interface ApiDeps {
  machine: MachineApi;
  config: Pick<Config, 'API_TOKEN'>;
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
function tokenMatches(header: string | undefined, expected: string): boolean {
  const m = /^Bearer\s+(\S+)$/i.exec(header ?? '');
  const given = createHash('sha256').update(m?.[1] ?? '').digest();
  return timingSafeEqual(given, createHash('sha256').update(expected).digest()) && m !== null;
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

  r.get('/metrics', async (_req, reply) => {
    reply.type('text/plain; version=0.0.4; charset=utf-8');
    return machine.metrics();
  });

  // The batch API reads its body as text, whatever the type, and hands it to the same reader as `digest ingest`.
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(TEXT_TYPES, { parseAs: 'string', bodyLimit: 20 * 1024 * 1024 }, (_req, body, done) =>
      done(null, body),
    );
    scope.withTypeProvider<ZodTypeProvider>().post(
      '/api/batches',
      { schema: { querystring: batchQuery, response: { 200: batchStored, 201: batchStored, 401: errorBody, 503: errorBody } } },
      async (req, reply) => {
        if (!config.API_TOKEN) {
          return reply.code(503).send({ ok: false, error: 'the batch API is disabled: set API_TOKEN to enable it' });
        }
        if (!tokenMatches(req.headers.authorization, config.API_TOKEN)) {
          return reply
            .code(401)
            .header('www-authenticate', 'Bearer')
            .send({ ok: false, error: 'missing or wrong bearer token' });
        }
        const { source, date, ...stored } = machine.postBatch({ body: req.body, ...req.query });
        return reply.code(stored.duplicate ? 200 : 201).send({ ok: true, source, date, ...stored });
      },
    );
  });
}
