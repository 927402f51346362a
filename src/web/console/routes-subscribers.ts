// Console: subscriber search, one subscriber's page and the operator's actions on it, and the CSV import
// from the browser (the same importer and checks as `digest import`, errors by line). Routes call the
// roster (operator/roster.ts: SQLite's, or PostgreSQL's with DATABASE_URL); no SQL here.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { AppError, isAppError } from '../../errors.ts';
import { httpStatus } from '../errors.ts';
import type { AdminContext } from './context.ts';
import { ImportRefused } from '../../subscribers/import.ts';

const DONE_MESSAGES: Record<string, string> = {
  resent: 'Confirmation email sent.',
  throttled: 'No confirmation email now: this address got one in the last hour that is still valid, or 3 in the last 24 hours.',
  lifted: 'Opt-out lifted: the reason is kept in the address\'s history.',
  suppressed: 'Suppressed: no more digests go to this address.',
  unsubscribed: 'Unsubscribed.',
  unchanged: 'Nothing changed: the subscriber was already in that state.',
};

function idParam(raw: string): number {
  if (!/^\d{1,15}$/.test(raw)) throw new AppError('NOT_FOUND', 'No such subscriber.');
  return Number(raw);
}

export function registerAdminSubscriberRoutes(app: FastifyInstance, ctx: AdminContext): void {
  registerSubscriberPages(app, ctx);
  registerSubscriberActions(app, ctx);
  registerImportRoutes(app, ctx);
}

/** The search and one subscriber's page. */
function registerSubscriberPages(app: FastifyInstance, ctx: AdminContext): void {
  const { roster } = ctx.deps;

  app.get<{ Querystring: { q?: string; by?: string; after?: string } }>('/admin/subscribers', async (req, reply) => {
    const q = (req.query.q ?? '').slice(0, 200);
    const by = req.query.by === 'topic' ? 'topic' : 'address';
    const page = q.trim() === '' ? undefined : await roster.search({ by, text: q, after: req.query.after });
    const nextUrl = page?.next ? `/admin/subscribers?${new URLSearchParams({ by, q, after: page.next }).toString()}` : undefined;
    return ctx.page(reply, 'subscribers', { title: 'Subscribers', section: 'subscribers', q, byTopic: by === 'topic', hits: page?.hits, searched: Boolean(page), nextUrl });
  });

  app.get<{ Params: { id: string }; Querystring: { done?: string } }>('/admin/subscribers/:id', async (req, reply) => {
    const detail = await roster.detail(idParam(req.params.id));
    if (!detail) throw new AppError('NOT_FOUND', 'No such subscriber (deleted?).');
    const s = detail.subscriber;
    return ctx.page(reply, 'subscriber', {
      title: s.email,
      section: 'subscribers',
      s,
      topics: detail.topics,
      digests: detail.digests,
      bounces: detail.bounces,
      consent: detail.consent,
      notices: detail.notices,
      optedOut: s.status === 'unsubscribed' || s.status === 'suppressed' || detail.consent.some((e) => e.kind !== 'lifted' && e.kind !== 'reconfirmed'),
      done: req.query.done ? DONE_MESSAGES[req.query.done] : undefined,
      pending: s.status === 'pending',
      active: s.status === 'confirmed' || s.status === 'pending',
      notUnsubscribed: s.status !== 'unsubscribed',
    });
  });
}

/** The operator's actions on one subscriber: resend the confirmation, suppress, unsubscribe, delete. */
function registerSubscriberActions(app: FastifyInstance, ctx: AdminContext): void {
  const { roster, logger } = ctx.deps;
  const log = logger.child({ component: 'admin' });

  app.post<{ Params: { id: string; action: string } }>('/admin/subscribers/:id/:action', async (req, reply) => {
    const id = idParam(req.params.id);
    const back = (done: string) => reply.redirect(`/admin/subscribers/${id}?done=${done}`, 303);
    switch (req.params.action) {
      case 'resend': {
        const state = await roster.resendConfirmation(id);
        log.info({ subscriberId: id }, 'console: confirmation resent');
        return back(state === 'throttled' ? 'throttled' : 'resent');
      }
      case 'suppress':
        log.info({ subscriberId: id }, 'console: suppress');
        return back((await roster.suppress(id)) ? 'suppressed' : 'unchanged');
      case 'unsubscribe':
        log.info({ subscriberId: id }, 'console: unsubscribe');
        return back((await roster.unsubscribe(id)) ? 'unsubscribed' : 'unchanged');
      case 'delete': {
        const body = req.body as Record<string, unknown> | undefined;
        if (body?.confirm !== 'yes') throw new AppError('ADMIN_CONFIRM', 'Tick "delete every record of this subscriber" to delete.');
        if (!(await roster.remove(id))) throw new AppError('NOT_FOUND', 'No such subscriber (deleted already?).');
        log.info({ subscriberId: id }, 'console: subscriber deleted with all their data');
        return ctx.page(reply, 'message', { title: 'Deleted', section: 'subscribers', message: 'The subscriber, their topics, their digests and their bounce history are deleted.' });
      }
      default:
        throw new AppError('NOT_FOUND', 'No such action.');
    }
  });
}

/** The CSV import from the browser. */
function registerImportRoutes(app: FastifyInstance, ctx: AdminContext): void {
  const { roster, logger } = ctx.deps;
  const log = logger.child({ component: 'admin' });

  app.get('/admin/import', async (_req, reply) => ctx.page(reply, 'import', { title: 'Import subscribers', section: 'import' }));

  // The upload is written to a private temp file and read by the same streaming importer as `digest import`
  // (the whole file is checked first; a bad row is named by line and nothing is written). The importer gives
  // the event loop back every few milliseconds and writes in short transactions: other pages stay served.
  app.post('/admin/import', async (req, reply) => {
    const form = req.body;
    const file = form instanceof FormData ? form.get('file') : null;
    if (!(file instanceof Blob) || file.size === 0) {
      return ctx.page(reply, 'import', { title: 'Import subscribers', section: 'import', error: 'file: choose a CSV file to import.' }, 400);
    }
    const dir = await mkdtemp(join(tmpdir(), 'digest-import-'));
    const path = join(dir, 'upload.csv');
    try {
      await writeFile(path, Buffer.from(await file.arrayBuffer()));
      const r = await roster.importCsv(path, { name: file instanceof File ? file.name : 'the file', offThread: true });
      log.info({ ...r }, 'console: import');
      return ctx.page(reply, 'import', { title: 'Import subscribers', section: 'import', result: r, lines: r.notes, unlisted: r.noted - r.notes.length });
    } catch (e) {
      if (!isAppError(e)) throw e;
      // The importer names the file as the operator chose it, never the upload's temp path; every bad line
      // it found is listed (the first MAX_LINES_LISTED), so the operator fixes the file in one go.
      const bad = e instanceof ImportRefused ? { lines: e.lines, unlisted: e.badLines - e.lines.length } : {};
      return ctx.page(reply, 'import', { title: 'Import subscribers', section: 'import', error: e.message, ...bad }, httpStatus(e) >= 500 ? httpStatus(e) : e.temporary ? 503 : 400);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
}
