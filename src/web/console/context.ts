// What the console's route modules share (kept apart from routes.ts so route modules do not import it).
import type { FastifyReply } from 'fastify';
import type { RouteDeps } from '../deps.ts';
import type { PageData, Pages } from '../pages.ts';

export interface AdminContext {
  deps: RouteDeps;
  pages: Pages;
  /** Renders a console page with what every page needs (CSRF token for the forms, the current section). */
  page(reply: FastifyReply, name: string, data: PageData, status?: number): FastifyReply;
}
