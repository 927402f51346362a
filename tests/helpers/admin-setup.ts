// A console to test: the web harness (createApp + Fastify on a free port, real SMTP capture) with
// ADMIN_PASSWORD_HASH and BOUNCE_ADDRESS set, and 90 days' worth of history the charts should show:
// subscribers confirmed on known days, some who left, digests sent through the real send path, papers
// from two sources, and bounce reports recorded through the bounce service; on either engine.
import { hashPassword } from '../../src/admin/password.ts';
import { recordBounce } from '../../src/bounces/service.ts';
import { matchNew, plan, send } from '../../src/pipeline.ts';
import { seedBatch, seedSubscribers } from './seed.ts';
import type { AppWithDb } from './test-app.ts';
import { startWebHarness, type WebHarness, type WebHarnessOptions } from './web-harness.ts';

export const ADMIN_PASSWORD = 'console password 2025!';
let hashOnce: Promise<string> | undefined;
export const adminHash = () => (hashOnce ??= hashPassword(ADMIN_PASSWORD));

/**
 * On PostgreSQL (`options.engine`) the same days are seeded into the SQLite file through the same paths,
 * then moved into a fresh schema by `digest copy`'s code before the web starts (web-harness.ts): the
 * console then reads and acts on PostgreSQL, as `digest serve` with DATABASE_URL serves it.
 */
export async function startAdminHarness(env: Record<string, string> = {}, options: WebHarnessOptions = {}): Promise<WebHarness> {
  return startWebHarness({ ADMIN_PASSWORD_HASH: await adminHash(), BOUNCE_ADDRESS: 'bounces@bounces.example.org', DIGEST_TZ: 'UTC', ...env }, '2025-11-25T09:00:00Z', {
    ...options,
    seed: async (tmp, core) => {
      await seedConsoleDays(core);
      await options.seed?.(tmp, core);
    },
  });
}

async function seedConsoleDays(core: AppWithDb): Promise<void> {
  const db = core.db;
  seedBatch(db, '2025-11-24', [{ title: 'Mixture of experts at scale', abstract: 'Sparse mixture of experts layers.' }], 'hf', '2025-11-24T06:00:00.000Z');
  seedBatch(db, '2025-11-25', [{ title: 'Experts routing for language models', abstract: 'Mixture of experts routing.' }, { title: 'Graph networks' }], 'arxiv:cs.LG', '2025-11-25T06:00:00.000Z');
  const subs = seedSubscribers(db, [
    { email: 'alice@example.com', topics: ['mixture of experts'] },
    { email: 'albert@example.com', topics: ['mixture of experts', 'graph networks'] },
    { email: 'bob@example.com', topics: ['graph networks'] },
    { email: 'carol@example.com', topics: ['diffusion models'] },
    { email: 'dora@example.com', topics: ['mixture of experts'], status: 'pending' },
  ]);
  // Confirmed on known days (UTC): two before the 90-day window, the others inside it.
  const confirmedOn = ['2025-07-01', '2025-08-01', '2025-10-02', '2025-11-20'];
  subs.slice(0, 4).forEach((s, i) => db.prepare('UPDATE subscribers SET confirmed_at = ?, created_at = ? WHERE id = ?').run(`${confirmedOn[i]}T10:00:00.000Z`, `${confirmedOn[i]}T09:00:00.000Z`, s.id));
  // Match, plan, send (not runPipeline: with SOURCES set it would try the real feeds): digests to alice,
  // albert, bob (carol matches nothing).
  matchNew(db);
  await plan(core, 'now');
  await send(core);
  const digest = (email: string) => (db.prepare('SELECT d.id FROM digests d JOIN subscribers s ON s.id = d.subscriber_id WHERE s.email = ?').get(email) as { id: number }).id;
  const deps = { db, clock: core.clock, logger: core.logger, config: core.config };
  recordBounce(deps, { digestId: digest('bob@example.com'), kind: 'soft', channel: 'smtp', status: '4.2.2', detail: 'smtp; 452 4.2.2 over quota' });
  recordBounce(deps, { digestId: digest('albert@example.com'), kind: 'complaint', channel: 'mailgun', status: null, detail: 'mailgun complained' });
}

/** A subscriber's id in the store the console serves from (either engine). */
export async function idOn(h: WebHarness, email: string): Promise<number> {
  const row = await h.sql.get<{ id: number }>('SELECT id FROM subscribers WHERE lower(email) = lower(?)', email);
  if (!row) throw new Error(`no subscriber ${email} on ${h.engine}`);
  return Number(row.id);
}

/** A count of `SELECT count(*) AS n …` on the store the console serves from, as a number on both engines. */
export async function countOn(h: WebHarness, sql: string, ...params: unknown[]): Promise<number> {
  return Number((await h.sql.get<{ n: number | string }>(sql, ...params))!.n);
}

/** A console session on `base` (the login form's double-submit token, then the password). */
export async function consoleCookie(base: string): Promise<string> {
  return (await consoleLogin({ base })).session!.cookie;
}

export interface ConsoleSession {
  cookie: string;
  csrf: string;
}

const csrfIn = (html: string) => /name="_csrf" value="([^"]*)"/.exec(html)?.[1] ?? '';
export const cookieFrom = (res: Response, name: string) => res.headers.getSetCookie().find((c) => c.startsWith(`${name}=`));

/** Logs in through the real form (its double-submit token); the session's cookie and CSRF token, when it worked. */
export async function consoleLogin(h: { base: string }, password = ADMIN_PASSWORD, forwardedFor?: string): Promise<{ res: Response; session?: ConsoleSession }> {
  const form = await fetch(`${h.base}/admin/login`);
  const loginCookie = cookieFrom(form, 'digest_admin_login')!.split(';')[0]!;
  const res = await fetch(`${h.base}/admin/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: loginCookie, ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) },
    body: new URLSearchParams({ _csrf: csrfIn(await form.text()), password }).toString(),
  });
  const set = cookieFrom(res, 'digest_admin');
  if (res.status !== 303 || !set) return { res };
  const cookie = set.split(';')[0]!;
  const page = await fetch(`${h.base}/admin/subscribers`, { headers: { cookie } });
  return { res, session: { cookie, csrf: csrfIn(await page.text()) } };
}

/** A console form POST carrying the session's cookie and CSRF token (redirects not followed). */
export function consolePost(h: { base: string }, s: ConsoleSession, path: string, fields: Record<string, string>): Promise<Response> {
  return fetch(`${h.base}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: s.cookie },
    body: new URLSearchParams({ _csrf: s.csrf, ...fields }).toString(),
  });
}
