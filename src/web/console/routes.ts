// The operator console at /admin (off, 404, unless ADMIN_PASSWORD_HASH is set): login with a rate limit,
// a session cookie, CSRF tokens on every form, logout; the overview, deliveries and sources pages here, the
// subscriber pages and the CSV import in routes-subscribers.ts. Pages are server-rendered from
// templates/admin/ (own layout), style from /assets/admin.css, no scripts, nothing from elsewhere.
import { join } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { PollReport } from '../../ingest/sources.ts';
import type { RouteDeps } from '../deps.ts';
import { createPages, PAGES_DIR, type PageData, type Pages } from '../pages.ts';
import { cookie, createSessionGuard, csrfField, csrfGuard, parseMultipart, LOGIN_COOKIE, LOGIN_TOKEN_TTL_MS, newLoginToken, readCookie, SESSION_COOKIE, SESSION_TTL_MS } from './auth.ts';
import { STATES } from '../../admin/deliveries.ts';
import { overviewCharts, overviewTotals } from '../../admin/overview.ts';
import { verifyPassword } from '../../admin/password.ts';
import { whenHelper } from './times.ts';
import type { AdminContext } from './context.ts';
import { registerAdminSubscriberRoutes } from './routes-subscribers.ts';
import { registerAdminConsentRoutes } from './routes-consent.ts';
import { constantTimeEqual } from '../../admin/sessions.ts';

export const ADMIN_PAGES_DIR = join(PAGES_DIR, '..', 'admin');

/**
 * The complaint rate against the mailbox providers' lines: under 0.1% fine, up to 0.3% a warning (Gmail's
 * and Yahoo's bulk-sender limit is 0.3%), at or over it, action needed. Shown in words and colour.
 */
export function complaintLevel(percent: number): { level: 'ok' | 'warn' | 'bad'; words: string } {
  if (percent < 0.1) return { level: 'ok', words: 'fine: under 0.1%' };
  if (percent < 0.3) return { level: 'warn', words: 'watch: over 0.1%, keep under 0.3%' };
  return { level: 'bad', words: 'too high: at or over 0.3%, the limit of Gmail and Yahoo' };
}
/** Login attempts per client address per minute. */
export const LOGIN_RATE_LIMIT = 5;
/** Bytes of a login form (its token and password). */
const LOGIN_BODY_LIMIT = 8 * 1024;

export function registerAdminRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const hash = deps.config.ADMIN_PASSWORD_HASH;
  if (!hash) return; // off: every /admin URL answers 404 like any unknown page
  const { clock, config } = deps;
  const pages = createPages(ADMIN_PAGES_DIR, { when: whenHelper(config.DIGEST_TZ, () => clock.now()) });
  const secure = config.PUBLIC_URL.startsWith('https://');

  void app.register(async (scope) => {
    registerLoginRoutes(scope, deps, pages, hash, secure);
    // Everything below needs a session, and a CSRF token on POST.
    void scope.register(async (auth) => registerSessionRoutes(auth, deps, pages, secure));
  });
}

/** The login form and its check, the only console pages answered before anyone is known. */
function registerLoginRoutes(scope: FastifyInstance, deps: RouteDeps, pages: Pages, hash: string, secure: boolean): void {
  const { sessions } = deps.console;
  const log = deps.logger.child({ component: 'admin' });

  scope.get('/admin/login', async (_req, reply) => {
    const token = newLoginToken();
    reply.header('set-cookie', cookie(LOGIN_COOKIE, token, { secure, maxAgeMs: LOGIN_TOKEN_TTL_MS }));
    return sendAdmin(reply, pages, 'login', { title: 'Log in', csrf: token, bare: true });
  });

  // Read before anyone is known: a login form is a few hundred bytes.
  scope.post('/admin/login', { bodyLimit: LOGIN_BODY_LIMIT, config: { rateLimit: { max: LOGIN_RATE_LIMIT, timeWindow: 60_000 } } }, async (req, reply) => {
    const token = readCookie(req, LOGIN_COOKIE) ?? '';
    const field = csrfField(req.body);
    if (!token || !constantTimeEqual(field, token)) {
      return sendAdmin(reply, pages, 'login', { title: 'Log in', csrf: token, bare: true, error: 'The form was out of date: try again.' }, 403);
    }
    const password = String((req.body as Record<string, unknown> | undefined)?.password ?? '');
    if (!(await verifyPassword(password, hash))) {
      log.warn({ ip: req.ip }, 'console login failed');
      return sendAdmin(reply, pages, 'login', { title: 'Log in', csrf: token, bare: true, error: 'Wrong password.' }, 401);
    }
    const s = await sessions.create();
    log.info({ ip: req.ip }, 'console login');
    reply.header('set-cookie', [
      cookie(SESSION_COOKIE, s.id, { secure, maxAgeMs: SESSION_TTL_MS }),
      cookie(LOGIN_COOKIE, '', { secure, maxAgeMs: 0 }),
    ]);
    return reply.redirect('/admin', 303);
  });
}

/** The session and CSRF guards, logout, then every page of the console behind them. */
function registerSessionRoutes(auth: FastifyInstance, deps: RouteDeps, pages: Pages, secure: boolean): void {
  const { sessions } = deps.console;
  auth.addHook('onRequest', createSessionGuard(sessions));
  auth.addHook('preHandler', csrfGuard);
  // Multipart bodies (the CSV upload) only here: read once the session is known.
  auth.addContentTypeParser('multipart/form-data', { parseAs: 'buffer', bodyLimit: 20 * 1024 * 1024 }, parseMultipart);
  const ctx: AdminContext = {
    deps,
    pages,
    page: (reply, name, data, status = 200) => sendAdmin(reply, pages, name, { ...data, csrf: reply.request.adminSession?.csrf }, status),
  };

  auth.post('/admin/logout', async (req, reply) => {
    await sessions.delete(readCookie(req, SESSION_COOKIE));
    reply.header('set-cookie', cookie(SESSION_COOKIE, '', { secure, maxAgeMs: 0 }));
    return reply.redirect('/admin/login', 303);
  });

  registerOverviewRoutes(auth, ctx);
  registerSourcesRoutes(auth, ctx);
  registerAdminSubscriberRoutes(auth, ctx);
  registerAdminConsentRoutes(auth, ctx);
}

/** The overview (totals and charts of the last days) and the deliveries page. */
function registerOverviewRoutes(auth: FastifyInstance, ctx: AdminContext): void {
  const { console: service } = ctx.deps;

  auth.get('/admin', async (_req, reply) => {
    const started = performance.now();
    const o = await service.overview();
    const charts = overviewCharts(o);
    const totals = overviewTotals(o);
    const percent = totals.complaintPercent ?? 0;
    return ctx.page(reply, 'overview', {
      title: 'Overview',
      section: 'overview',
      charts,
      totals: { ...totals, complaintRate: percent.toFixed(2), complaintLevel: complaintLevel(percent) },
      ms: Math.round(performance.now() - started),
      from: o.days[0],
      to: o.days[o.days.length - 1],
    });
  });

  auth.get('/admin/deliveries', async (_req, reply) => {
    const view = await service.deliveries();
    return ctx.page(reply, 'deliveries', {
      title: 'Deliveries',
      section: 'deliveries',
      states: STATES,
      editions: view.editions.map((e) => ({ ...e, cells: STATES.map((s) => e.counts[s] ?? 0) })),
      waiting: view.waiting,
      waitingCounts: view.waitingCounts,
      lastErrors: view.lastErrors,
      overdue: view.overdue,
      notices: await service.notices(),
    });
  });
}

/** Sources: each one's days and last error; "fetch now" runs one poll in the background (one at a time). */
function registerSourcesRoutes(auth: FastifyInstance, ctx: AdminContext): void {
  const { console: service, clock } = ctx.deps;
  let fetching: Promise<void> | undefined;
  let lastFetch: { startedAt: string; finishedAt?: string; reports?: PollReport[]; error?: string } | undefined;
  const fetchNow = ctx.deps.fetchSourcesNow ?? (() => service.fetchSources());
  auth.get('/admin/sources', async (_req, reply) => {
    return ctx.page(reply, 'sources', { title: 'Sources', section: 'sources', sources: await service.sources(), none: !service.hasSources(), fetching: Boolean(fetching), lastFetch });
  });
  auth.post('/admin/sources/fetch', async (_req, reply) => {
    if (!fetching && service.hasSources()) {
      lastFetch = { startedAt: clock.now().toISOString() };
      const run = lastFetch;
      fetching = fetchNow()
        .then((reports) => void (run.reports = reports))
        .catch((e: unknown) => void (run.error = e instanceof Error ? e.message : String(e)))
        .finally(() => {
          run.finishedAt = clock.now().toISOString();
          fetching = undefined;
        });
    }
    return reply.redirect('/admin/sources', 303);
  });
}

function sendAdmin(reply: FastifyReply, pages: Pages, name: string, data: PageData, status = 200): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(pages.render(name, data));
}
