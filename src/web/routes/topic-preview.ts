// GET /api/topics/preview?q=…: what a topic being typed would have matched in the last 14 days,
// with the matching words highlighted, or the syntax error and its position. Called by the topic
// builder on the subscribe and preferences pages. The work is the topic preview service's
// (src/match/preview-service.ts); this route renders its highlights as HTML.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError } from '../../errors.ts';
import { excerpt, segmentsToHtml } from '../highlight-html.ts';
import { errorBody } from '../response-schemas.ts';
import type { RouteDeps } from '../deps.ts';

const ABSTRACT_EXCERPT_CHARS = 320;

const previewAnswer = z.object({
  ok: z.literal(true),
  total: z.number(),
  /** Papers a day the topic would have brought over the last VOLUME_DAYS days (one decimal). */
  perDay: z.number().optional(),
  papers: z.array(z.object({ title: z.string(), url: z.string(), titleHtml: z.string(), abstractHtml: z.string() })),
  /** The first batch day counted, when the server holds fewer days than asked (PREVIEW_MIRROR_MB on PostgreSQL). */
  from: z.string().optional(),
});

const previewError = z.object({
  ok: z.literal(false),
  error: z.string(),
  /** 1-based character position in the query, when the parser names one. */
  position: z.number().nullable(),
});

export type PreviewAnswer = z.infer<typeof previewAnswer>;
export type PreviewError = z.infer<typeof previewError>;

export function registerTopicPreviewRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/api/topics/preview',
    {
      schema: {
        querystring: z.object({ q: z.string().max(1000).default('') }),
        response: { 200: z.union([previewAnswer, previewError]), 429: errorBody },
      },
      config: {
        rateLimit: {
          max: deps.previewRateLimit ?? 120,
          timeWindow: 60_000,
          // A store that cannot count this one (locked for over WEB_LOCK_WAIT_MS) lets the preview through:
          // it reads only, and a refusal would break typing for everyone.
          skipOnError: true,
          errorResponseBuilder: (_req, ctx) =>
            new AppError('RATE_LIMITED', `Too many previews; try again in ${ctx.after}.`),
        },
      },
    },
    async (req): Promise<PreviewAnswer | PreviewError> => {
      const result = await deps.topicPreview.preview(req.query.q);
      if (!result.ok) return result;
      return {
        ok: true,
        total: result.total,
        ...(result.perDay === undefined ? {} : { perDay: result.perDay }),
        ...(result.from === undefined ? {} : { from: result.from }),
        papers: result.papers.map((p) => ({
          title: p.title,
          url: p.url,
          titleHtml: segmentsToHtml(p.titleSegments),
          abstractHtml: segmentsToHtml(excerpt(p.abstractSegments, ABSTRACT_EXCERPT_CHARS)),
        })),
      };
    },
  );
}
