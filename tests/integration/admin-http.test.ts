// The operator console over HTTP (the real server, createApp, SMTP capture), on SQLite and on
// PostgreSQL (the harness's days copied there, the console served as `digest serve` serves it): off
// without ADMIN_PASSWORD_HASH, the cookie's attributes, the login rate limit and form token, the CSV
// import with errors by line, resend / delete actions, keyset pages of a search on an index, deliveries,
// sources.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SQL_BY_ADDRESS, SQL_BY_TOPIC } from '../../src/operator/postgres/reads.ts';
import { servedWebDeps } from '../../src/serve.ts';
import { LOGIN_RATE_LIMIT } from '../../src/web/console/routes.ts';
import { ADMIN_PASSWORD, consoleLogin as login, cookieFrom, countOn, idOn, type ConsoleSession as Session, startAdminHarness } from '../helpers/admin-setup.ts';
import { forEachEngine } from '../helpers/on-engines.ts';
import { buildServer } from '../../src/web/server.ts';
import type { WebHarness } from '../helpers/web-harness.ts';

forEachEngine('operator console over HTTP', (engine) => {
  let h: WebHarness;
  let s: Session;
  const fetched: number[] = [];
  const roster = () => h.pg?.roster ?? h.core.roster;
  const get = (path: string) => fetch(`${h.base}${path}`, { headers: { cookie: s.cookie } });
  const post = (path: string, fields: Record<string, string>) =>
    fetch(`${h.base}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: s.cookie },
      body: new URLSearchParams({ _csrf: s.csrf, ...fields }).toString(),
    });

  beforeAll(async () => {
    h = await startAdminHarness(
      // The test's requests come from 127.0.0.1: that is the proxy whose X-Forwarded-For is taken.
      { SOURCES: 'hf', TRUST_PROXY: '127.0.0.1' },
      { engine, web: { fetchSourcesNow: async () => (fetched.push(1), [{ source: 'hf', day: '2025-11-25', status: 'ingested', detail: '3 papers' }]) } },
    );
    s = (await login(h)).session!;
  }, 60_000);

  afterAll(async () => {
    await h?.close();
  });

  it('is off (404) without ADMIN_PASSWORD_HASH', async () => {
    const off = buildServer({ ...h.core, ...servedWebDeps(h.core, h.pg), config: { ...h.config, ADMIN_PASSWORD_HASH: undefined } });
    try {
      expect((await off.inject({ url: '/admin' })).statusCode).toBe(404);
      expect((await off.inject({ url: '/admin/login' })).statusCode).toBe(404);
      expect((await off.inject({ method: 'POST', url: '/admin/login', payload: { password: ADMIN_PASSWORD } })).statusCode).toBe(404);
    } finally {
      await off.close();
    }
  });

  it('sends a logged-out visitor to the login page, and refuses a stale or forged session cookie', async () => {
    for (const cookie of [undefined, 'digest_admin=' + 'A'.repeat(43), 'digest_admin=not-even-the-shape']) {
      const res = await fetch(`${h.base}/admin/deliveries`, { redirect: 'manual', headers: cookie ? { cookie } : {} });
      expect(res.status).toBe(303);
      expect(res.headers.get('location')).toBe('/admin/login');
    }
  });

  it('sets the session cookie HttpOnly, SameSite=Strict, Secure (PUBLIC_URL is https), on /admin only', async () => {
    const { res } = await login(h);
    const set = cookieFrom(res, 'digest_admin')!;
    expect(set).toMatch(/^digest_admin=[A-Za-z0-9_-]{43}; Path=\/admin; HttpOnly; SameSite=Strict; Max-Age=43200; Secure$/);
    // Only a hash of the id is stored.
    const id = set.split(';')[0]!.split('=')[1]!;
    expect(await countOn(h, 'SELECT count(*) AS n FROM admin_sessions WHERE id_hash = ?', id)).toBe(0);
  });

  it('refuses a login without its form token, and limits attempts per address', async () => {
    const noToken = await fetch(`${h.base}/admin/login`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `password=${encodeURIComponent(ADMIN_PASSWORD)}` });
    expect(noToken.status).toBe(403);
    expect(cookieFrom(noToken, 'digest_admin')).toBeUndefined();
    const statuses: number[] = [];
    for (let i = 0; i <= LOGIN_RATE_LIMIT; i++) statuses.push((await login(h, 'wrong password guess', '203.0.113.7')).res.status);
    expect(statuses.slice(0, LOGIN_RATE_LIMIT)).toEqual(Array(LOGIN_RATE_LIMIT).fill(401));
    expect(statuses[LOGIN_RATE_LIMIT]).toBe(429);
    // Even the right password is refused from that address until the minute is over; others are not affected.
    expect((await login(h, ADMIN_PASSWORD, '203.0.113.7')).res.status).toBe(429);
    expect((await login(h, ADMIN_PASSWORD, '198.51.100.1')).res.status).toBe(303);
  });

  it('imports a CSV from the browser form: a bad row named by line and nothing written, then a good file', async () => {
    const upload = (csv: string) => {
      const form = new FormData();
      form.set('_csrf', s.csrf);
      form.set('file', new File([csv], 'list.csv', { type: 'text/csv' }));
      return fetch(`${h.base}/admin/import`, { method: 'POST', headers: { cookie: s.cookie }, body: form });
    };
    const subscribers = () => countOn(h, 'SELECT count(*) AS n FROM subscribers');
    const before = await subscribers();
    const bad = await upload('email,topics\nnew1@example.org,diffusion\nnot-an-address,transformers\n');
    expect(bad.status).toBe(400);
    const html = await bad.text();
    expect(/id="import-error">([^<]*)</.exec(html)?.[1]).toMatch(/line 3/);
    expect(html).not.toContain('upload.csv'); // the temp path is not shown
    expect(/id="import-error">([^<]*)</.exec(html)?.[1]).toMatch(/^list\.csv line 3: email: /); // the file as the operator chose it
    expect(await subscribers()).toBe(before);

    const good = await upload('email,topics,confirmed\nnew1@example.org,diffusion;"mixture of experts",yes\nnew2@example.org,transformers,no\n');
    expect(good.status).toBe(200);
    expect(/id="import-result">([^<]*)</.exec(await good.text())?.[1]).toBe('Imported 2 subscribers (2 new, 0 updated).');
    expect(await h.sql.get("SELECT status FROM subscribers WHERE email = 'new1@example.org'")).toEqual({ status: 'confirmed' });

    // Without the form's token: refused, nothing imported.
    const form = new FormData();
    form.set('file', new File(['email,topics\nnew3@example.org,x\n'], 'x.csv'));
    expect((await fetch(`${h.base}/admin/import`, { method: 'POST', headers: { cookie: s.cookie }, body: form })).status).toBe(403);
  });

  it('resends a confirmation to a pending subscriber (throttled the second time)', async () => {
    const id = await idOn(h, 'dora@example.com');
    const first = await post(`/admin/subscribers/${id}/resend`, {});
    expect(first.headers.get('location')).toBe(`/admin/subscribers/${id}?done=resent`);
    const mail = await h.smtp.waitFor('dora@example.com');
    expect(mail.text).toContain('/confirm/');
    expect((await post(`/admin/subscribers/${id}/resend`, {})).headers.get('location')).toBe(`/admin/subscribers/${id}?done=throttled`);
    expect(h.smtp.to('dora@example.com')).toHaveLength(1);
  });

  it('deletes a subscriber with all their data, only when confirmed by the checkbox', async () => {
    const id = await idOn(h, 'albert@example.com');
    const counts = () => Promise.all(['topics', 'digests', 'bounce_events'].map((table) => countOn(h, `SELECT count(*) AS n FROM ${table} WHERE subscriber_id = ?`, id)));
    expect(await counts()).toEqual([2, 1, 1]);
    expect((await post(`/admin/subscribers/${id}/delete`, {})).status).toBe(400);
    expect((await post(`/admin/subscribers/${id}/delete`, { confirm: 'yes' })).status).toBe(200);
    expect(await countOn(h, 'SELECT count(*) AS n FROM subscribers WHERE id = ?', id)).toBe(0);
    expect(await counts()).toEqual([0, 0, 0]);
    expect((await get(`/admin/subscribers/${id}`)).status).toBe(404);
  });

  it('pages through a search with an index range (no scan), 50 a page', async () => {
    // Written by the operator's import on the store the console serves (the roster's own path on each engine).
    const csv = join(h.tmp.dir, 'pages.csv');
    writeFileSync(csv, `email,topics\n${Array.from({ length: 120 }, (_, i) => `page${String(i).padStart(3, '0')}@example.net,Topic number ${i}\n`).join('')}`);
    expect((await roster().importCsv(csv)).created).toBe(120);
    const seen: string[] = [];
    let url = '/admin/subscribers?by=address&q=PAGE';
    for (let pages = 0; pages < 5 && url; pages++) {
      const html = await (await get(url)).text();
      seen.push(...[...html.matchAll(/>(page\d{3}@example\.net)</g)].map((m) => m[1]!));
      url = (/href="([^"]+)" rel="next"/.exec(html)?.[1] ?? '').replaceAll('&amp;', '&').replaceAll('&#x3D;', '=');
    }
    expect(seen).toHaveLength(120);
    expect(new Set(seen).size).toBe(120);
    expect(seen).toEqual([...seen].sort());
    // Topic search pages the same way.
    let after: string | undefined;
    let total = 0;
    do {
      const p = await roster().search({ by: 'topic', text: 'topic number', after });
      total += p.hits.length;
      after = p.next;
    } while (after);
    expect(total).toBe(120);
    const plans = await searchPlans(h);
    expect(plans.address).toMatch(engine === 'sqlite' ? /SEARCH subscribers USING INDEX sqlite_autoindex_subscribers_1 \(email>\? AND email<\?\)/ : /Index Cond: .*>= 'page'::text\) AND .*< 'pagf'::text\)/);
    expect(plans.topic).toMatch(engine === 'sqlite' ? /SEARCH t USING (COVERING )?INDEX topics_text/ : /Index Cond: .*>= 'topic number'::text\) AND .*< 'topic numbes'::text\)/);
  });

  it('shows deliveries (by state, waiting and why, relay errors) and sources with fetch now', async () => {
    const sub = await idOn(h, 'carol@example.com');
    await h.sql.run(`INSERT INTO digests (subscriber_id, edition, status, from_paper, to_paper, paper_count, attempts, next_attempt_at, smtp_code, smtp_response, planned_at, topic_ids, items)
               VALUES (?, '2025-11-25', 'retry', 0, 1, 1, 1, '2025-11-25T09:30:00.000Z', 451, '451 4.7.1 greylisted, try later', '2025-11-25T09:00:00.000Z', '', ?)`, sub, Buffer.alloc(0));
    const html = await (await get('/admin/deliveries')).text();
    expect(html).toContain('<th>2025-11-25</th>');
    expect(html).toMatch(/1 to retry/);
    expect(html).toContain('retry 1 due 2025-11-25T09:30:00.000Z after: 451 4.7.1 greylisted, try later');
    expect(html).toMatch(/carol@example\.com<\/a><\/td><td class="nw">2025-11-25<\/td><td>retry<\/td><td>451 4\.7\.1 greylisted/);

    expect(await (await get('/admin/sources')).text()).toContain('<h2>hf</h2>');
    const res = await post('/admin/sources/fetch', {});
    expect(res.status).toBe(303);
    await expect.poll(async () => (await (await get('/admin/sources')).text()).includes('hf 2025-11-25: ingested (3 papers)')).toBe(true);
    expect(fetched).toHaveLength(1);
  });
});

/**
 * Each engine's query plan for the console's two searches (by address "PAGE", by topic "topic number"):
 * SQLite's for its statements in admin/subscribers.ts, PostgreSQL's for operator/postgres/reads.ts's with
 * sequential scans priced out (a 125-row table would be scanned), to show an index range can serve them.
 */
async function searchPlans(h: WebHarness): Promise<{ address: string; topic: string }> {
  if (!h.pgPool) {
    const plan = (sql: string) => (h.tmp.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all({ lo: 'a', hi: 'b', after: '', afterText: '', afterId: 0, limit: 50 }) as { detail: string }[]).map((r) => r.detail).join(' | ');
    return {
      address: plan(`SELECT id, email, status FROM subscribers WHERE email >= :lo AND email < :hi AND email > :after ORDER BY email LIMIT :limit`),
      topic: plan(`SELECT s.id FROM topics t JOIN subscribers s ON s.id = t.subscriber_id WHERE t.text COLLATE NOCASE >= :lo AND t.text COLLATE NOCASE < :hi AND (t.text COLLATE NOCASE, t.subscriber_id) > (:afterText, :afterId) ORDER BY t.text COLLATE NOCASE, t.subscriber_id LIMIT :limit`),
    };
  }
  const c = await h.pgPool.connect();
  try {
    await c.query('BEGIN');
    await c.query('SET LOCAL enable_seqscan = off');
    const plan = async (sql: string, params: unknown[]) => (await c.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, params)).rows.map((r) => r['QUERY PLAN']).join(' | ');
    return { address: await plan(SQL_BY_ADDRESS, ['PAGE', '', 50]), topic: await plan(SQL_BY_TOPIC, ['topic number', '', 0, 50]) };
  } finally {
    await c.query('ROLLBACK');
    c.release();
  }
}
