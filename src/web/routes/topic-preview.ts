// GET /api/topics/preview?q=…: what a topic being typed would have matched in the last 14 days,
// with the matching words highlighted, or the syntax error and its position. Called by the topic
// builder on the subscribe and preferences pages.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { utcDate } from '../../clock.ts';
import { AppError, isAppError } from '../../errors.ts';
import { createHighlighter } from '../../topics/highlight.ts';
import { previewTopicDetails } from '../../topics/matcher.ts';
import { TOPIC_INVALID } from '../../topics/parse.ts';
import { LIKE_UNKNOWN } from '../../like/like.ts';
import { fieldError } from '../form-values.ts';
import { excerpt, segmentsToHtml } from '../highlight-html.ts';
import type { RouteDeps } from '../deps.ts';

export const PREVIEW_DAYS = 14;
export const PREVIEW_LIMIT = 5;
/** "Volume before subscribing": the papers-a-day figure covers this many days. */
export const VOLUME_DAYS = 30;
const ABSTRACT_EXCERPT_CHARS = 320;

export interface PreviewAnswer {
  ok: true;
  total: number;
  /** Papers a day the topic would have brought over the last VOLUME_DAYS days (one decimal). */
  perDay?: number;
  papers: Array<{ title: string; url: string; titleHtml: string; abstractHtml: string }>;
}

export interface PreviewError {
  ok: false;
  error: string;
  /** 1-based character position in the query, when the parser names one. */
  position: number | null;
}

/** Newest batch day: "recent" means the 14 days up to it, so a quiet source or the sample data still previews. */
const SQL_NEWEST_BATCH_DAY = `SELECT max(date) AS day FROM batches`;

function previewSince(db: RouteDeps['db'], now: Date, days = PREVIEW_DAYS): string {
  const today = utcDate(now);
  const newest = (db.prepare(SQL_NEWEST_BATCH_DAY).get() as { day: string | null }).day;
  const anchor = newest !== null && newest < today ? newest : today;
  return utcDate(new Date(Date.parse(`${anchor}T00:00:00Z`) - days * 86_400_000));
}

export function registerTopicPreviewRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const { db, clock } = deps;
  app.withTypeProvider<ZodTypeProvider>().get(
    '/api/topics/preview',
    {
      schema: { querystring: z.object({ q: z.string().max(1000).default('') }) },
      config: {
        rateLimit: {
          max: deps.previewRateLimit ?? 120,
          timeWindow: 60_000,
          errorResponseBuilder: (_req, ctx) =>
            new AppError('RATE_LIMITED', `Too many previews; try again in ${ctx.after}.`, { status: 429 }),
        },
      },
    },
    async (req): Promise<PreviewAnswer | PreviewError> => {
      const q = req.query.q;
      if (q.trim() === '') return { ok: true, total: 0, papers: [] };
      const since = previewSince(db, clock.now());
      let result;
      try {
        result = previewTopicDetails(db, q, { since, limit: PREVIEW_LIMIT, volumeSince: previewSince(db, clock.now(), VOLUME_DAYS) });
      } catch (e) {
        if (isAppError(e) && (e.code === TOPIC_INVALID || e.code === LIKE_UNKNOWN)) {
          return { ok: false, error: e.message, position: fieldError(e)?.position ?? null };
        }
        throw e;
      }
      const highlight = createHighlighter([result.highlight]);
      return {
        ok: true,
        total: result.total,
        perDay: Math.round(((result.volume ?? 0) / VOLUME_DAYS) * 10) / 10,
        papers: result.papers.map((p) => ({
          title: p.title,
          url: p.url,
          titleHtml: segmentsToHtml(highlight(p.title)),
          abstractHtml: segmentsToHtml(excerpt(highlight(p.abstract), ABSTRACT_EXCERPT_CHARS)),
        })),
      };
    },
  );
}
