// Small helpers shared by the route modules: JSON or HTML, pages with the right headers.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { PageData, Pages } from './pages.ts';

/** JSON for API paths, JSON bodies and clients that ask for it; HTML pages for browsers. */
export function wantsJson(req: FastifyRequest): boolean {
  if (req.url.startsWith('/api/')) return true;
  const type = String(req.headers['content-type'] ?? '');
  if (/^application\/json\b/i.test(type)) return true;
  const accept = String(req.headers.accept ?? '');
  return /application\/json/i.test(accept) && !/text\/html/i.test(accept);
}

export function sendPage(reply: FastifyReply, pages: Pages, name: string, data: PageData, status = 200): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(pages.render(name, data));
}

/** A page with one message (results, link errors). */
export function sendMessage(
  reply: FastifyReply,
  pages: Pages,
  status: number,
  m: { title: string; message: string; hint?: string; actionUrl?: string; actionLabel?: string },
): FastifyReply {
  return sendPage(reply, pages, 'message', { ...m, isError: status >= 400 }, status);
}
