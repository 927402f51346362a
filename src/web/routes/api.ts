// Machine routes: POST /api/batches (Bearer API_TOKEN), GET /health, GET /metrics.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import { retryWhileBusy } from '../../db/busy.ts';
import { storageFault, type StorageFault } from '../../db/faults.ts';
import { probeWrite, type Db } from '../../db/open.ts';
import { metricsText } from '../../report/status.ts';
import { AppError } from '../../errors.ts';
import { parseFeed, type FeedFormat } from '../../ingest/detect.ts';
import { ingestBatch } from '../../ingest/ingest.ts';

export interface ApiDeps {
  db: Db;
  clock: Clock;
  config: Config;
}

/** /health writes at most once per this many milliseconds. */
export const HEALTH_CACHE_MS = 1_000;

const FORMATS = new Set(['auto', 'batch', 'hf', 'arxiv']);
const TEXT_TYPES = ['application/json', 'application/xml', 'text/xml', 'application/atom+xml', 'application/rss+xml', 'text/plain'];

/** Constant-time comparison of the presented bearer token with API_TOKEN (hashed to equal lengths first). */
function tokenMatches(header: string | undefined, expected: string): boolean {
  const m = /^Bearer\s+(\S+)$/i.exec(header ?? '');
  const given = createHash('sha256').update(m?.[1] ?? '').digest();
  return timingSafeEqual(given, createHash('sha256').update(expected).digest()) && m !== null;
}

export function registerApiRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const { db, clock, config } = deps;

  // Readiness, not liveness: ok only when the database takes a write (a tiny settings upsert in an
  // IMMEDIATE transaction, see db/open.ts probeWrite). A read-only file, a full disk or a lock held past
  // WEB_LOCK_WAIT_MS answer 503 naming the cause. The answer is kept HEALTH_CACHE_MS so a tight
  // probe loop costs at most one write per second.
  let last: { at: number; fault: StorageFault | undefined } | undefined;
  app.get('/health', async (_req, reply) => {
    const now = performance.now();
    if (!last || now - last.at >= HEALTH_CACHE_MS) {
      let fault: StorageFault | undefined;
      try {
        // A lock held by a planner chunk passes in moments: retried like any web write (lock-retry.ts).
        await retryWhileBusy(() => probeWrite(db, clock.now()), config.WEB_LOCK_WAIT_MS, 4);
      } catch (e) {
        fault = storageFault(e);
        if (!fault) throw e;
      }
      last = { at: now, fault };
    }
    if (!last.fault) return { ok: true };
    return reply
      .code(503)
      .header('retry-after', String(last.fault.retryAfterSeconds))
      .send({ ok: false, code: last.fault.fault, error: last.fault.message });
  });

  app.get('/metrics', async (_req, reply) => {
    reply.type('text/plain; version=0.0.4; charset=utf-8');
    return metricsText(db);
  });

  // The batch API reads its body as text, whatever the type, and hands it to the same reader as `digest ingest`.
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(TEXT_TYPES, { parseAs: 'string', bodyLimit: 20 * 1024 * 1024 }, (_req, body, done) =>
      done(null, body),
    );
    scope.post<{ Querystring: { format?: string; source?: string; date?: string } }>('/api/batches', async (req, reply) => {
      if (!config.API_TOKEN) {
        return reply.code(503).send({ ok: false, error: 'the batch API is disabled: set API_TOKEN to enable it' });
      }
      if (!tokenMatches(req.headers.authorization, config.API_TOKEN)) {
        return reply
          .code(401)
          .header('www-authenticate', 'Bearer')
          .send({ ok: false, error: 'missing or wrong bearer token' });
      }
      const format = req.query.format ?? 'auto';
      if (!FORMATS.has(format)) throw new AppError('BAD_FORMAT', `format: must be one of auto, batch, hf, arxiv`);
      if (typeof req.body !== 'string' || req.body.trim() === '') {
        throw new AppError('BATCH_EMPTY', 'the request body is empty: send the batch as JSON or XML');
      }
      const batch = parseFeed(req.body, format as FeedFormat, { source: req.query.source, date: req.query.date });
      const r = ingestBatch(db, batch, clock);
      return reply.code(r.duplicate ? 200 : 201).send({ ok: true, source: batch.source, date: batch.date, ...r });
    });
  });
}
