// GET/POST /feedback/:token/:paperId/more|less and GET/POST /follow/:token/:authorIndex/:paperId
// (a reader's votes on a paper, and the authors they follow). A GET shows a page with one button and
// changes nothing; the POST acts. The signed link is the authority (as for unsubscribe and mute): no
// cookie, no CSRF token.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ReaderFeedback } from '../../feedback/port.ts';
import type { RouteDeps } from '../deps.ts';
import { sendPage } from '../respond.ts';

const id = z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const feedbackParams = z.object({ token: z.string().min(1).max(300), paperId: id, direction: z.enum(['more', 'less']) });
const followParams = z.object({ token: z.string().min(1).max(300), authorIndex: z.coerce.number().int().min(0).max(5000), paperId: id });

export function registerFeedbackRoutes(app: FastifyInstance, deps: RouteDeps & { feedback: ReaderFeedback }): void {
  const { feedback, pages } = deps;
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get('/feedback/:token/:paperId/:direction', { schema: { params: feedbackParams } }, async (req, reply) => {
    const { token, paperId, direction } = req.params;
    const view = await feedback.describe(token, paperId, direction);
    const label = direction === 'more' ? 'More like this' : 'Less like this';
    return sendPage(reply, pages, 'feedback', { title: label, label, action: req.url, ...view });
  });

  r.post('/feedback/:token/:paperId/:direction', { schema: { params: feedbackParams } }, async (req, reply) => {
    const { token, paperId, direction } = req.params;
    const view = await feedback.record(token, paperId, direction);
    return sendPage(reply, pages, 'feedback-done', { title: 'Thank you', ...view });
  });

  r.get('/follow/:token/:authorIndex/:paperId', { schema: { params: followParams } }, async (req, reply) => {
    const { token, authorIndex, paperId } = req.params;
    const view = await feedback.describeFollow(token, authorIndex, paperId);
    return sendPage(reply, pages, 'follow', { title: `Follow ${view.name}`, action: req.url, ...view });
  });

  r.post('/follow/:token/:authorIndex/:paperId', { schema: { params: followParams } }, async (req, reply) => {
    const { token, authorIndex, paperId } = req.params;
    const view = await feedback.follow(token, authorIndex, paperId);
    return sendPage(reply, pages, 'follow-done', { title: view.added ? `Following ${view.name}` : `Already following ${view.name}`, ...view });
  });
}
