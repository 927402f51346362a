// Console: the opt-outs (unsubscribes, complaints, hard bounces, the operator's suppressions) with their
// reason and date, newest first, and lifting one with a reason that is kept in the address's history.
// POSTs carry the session's CSRF token like every console form (the guard in routes.ts checks it). The
// roster acts on the deployment's store (operator/roster.ts: PostgreSQL's with DATABASE_URL).
import type { FastifyInstance } from 'fastify';
import { isAppError } from '../../errors.ts';
import { httpStatus } from '../errors.ts';
import type { AdminContext } from './context.ts';

const PAGE = 100;

export function registerAdminConsentRoutes(app: FastifyInstance, ctx: AdminContext): void {
  const { roster, logger } = ctx.deps;
  const log = logger.child({ component: 'admin' });

  const list = async (before: number | undefined) => {
    const rows = await roster.optOuts({ limit: PAGE, before });
    const last = rows[rows.length - 1];
    return { rows, nextUrl: rows.length === PAGE && last ? `/admin/opt-outs?before=${last.id}` : undefined };
  };

  app.get<{ Querystring: { before?: string; done?: string } }>('/admin/opt-outs', async (req, reply) => {
    const before = /^\d{1,15}$/.test(req.query.before ?? '') ? Number(req.query.before) : undefined;
    const done = req.query.done === 'lifted' ? 'Lifted: the reason is kept in the address\'s history.' : undefined;
    return ctx.page(reply, 'opt-outs', { title: 'Opt-outs', section: 'opt-outs', ...(await list(before)), done });
  });

  app.post('/admin/opt-outs/lift', async (req, reply) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const email = String(body.email ?? '');
    try {
      const r = await roster.lift(email, String(body.reason ?? ''));
      log.info({ email: r.email, lifted: r.lifted.map((e) => e.kind), status: r.status }, 'console: opt-out lifted');
      const back = typeof body.back === 'string' && /^\/admin\/subscribers\/\d{1,15}$/.test(body.back) ? `${body.back}?done=lifted` : '/admin/opt-outs?done=lifted';
      return reply.redirect(back, 303);
    } catch (e) {
      if (!isAppError(e)) throw e;
      return ctx.page(reply, 'opt-outs', { title: 'Opt-outs', section: 'opt-outs', ...(await list(undefined)), error: e.message, email }, httpStatus(e) === 404 ? 404 : 400);
    }
  });
}
