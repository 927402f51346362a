// GET /confirm/:token: the double opt-in link from the confirmation email.
// Confirming is idempotent and harmless if a link scanner opens it first (it only confirms the address
// that received the email), so a GET is enough here, unlike unsubscribe and mute.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { sendPage } from '../respond.ts';
import type { RouteDeps } from '../deps.ts';
import { tokenParams } from '../token-param.ts';
import { topicLabel } from '../../match/label.ts';

/** The confirmation page lists papers that already match: from these last days, at most this many. */
const RECENT_DAYS = 3;
const RECENT_PAPERS = 8;

/** Papers of the last few days that match any of the reader's topics, each once, with the topic's name. */
async function recentMatches(deps: RouteDeps, topics: readonly string[]): Promise<Array<{ title: string; url: string; topic: string }>> {
  const out: Array<{ title: string; url: string; topic: string }> = [];
  const seen = new Set<string>();
  for (const topic of topics) {
    const preview = await deps.topicPreview.preview(topic, { days: RECENT_DAYS });
    if (!preview.ok) continue;
    for (const p of preview.papers) {
      if (seen.has(p.url) || out.length >= RECENT_PAPERS) continue;
      seen.add(p.url);
      out.push({ title: p.title, url: p.url, topic: topicLabel(topic) });
    }
  }
  return out;
}

export function registerConfirmRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const { door: subscribers, pages } = deps;
  app.withTypeProvider<ZodTypeProvider>().get('/confirm/:token', { schema: { params: tokenParams } }, async (req, reply) => {
    const r = await subscribers.confirm(req.params.token);
    if (!r.alreadyConfirmed) deps.onConfirmed?.(r.subscriberId);
    return sendPage(reply, pages, 'confirmed', {
      title: r.alreadyConfirmed ? 'Already confirmed' : 'Subscription confirmed',
      ...r,
      recent: r.alreadyConfirmed ? [] : await recentMatches(deps, r.topics),
      recentDays: RECENT_DAYS,
    });
  });
}
