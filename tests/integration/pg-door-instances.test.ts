// Two `digest serve`-like instances on one PostgreSQL schema (each its own SQLite file, its own HTTP
// server, no SECRET_KEY: they share the secret kept in PostgreSQL), as behind a load balancer: subscribe
// on one, confirm on the other, manage and unsubscribe on either; a double submit spread over both writes
// one row and sends one email. Skipped, said once, when PostgreSQL is unreachable.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migratePostgres } from '../../src/db/postgres/migrate.ts';
import { createPool } from '../../src/db/postgres/pool.ts';
import { silentLogger } from '../../src/log.ts';
import { createPostgresDoor } from '../../src/subscribers/postgres/door.ts';
import { freePort } from '../helpers/ports.ts';
import { openPostgresDoor, type PostgresDoorHandle } from '../../src/main.ts';
import { buildServer } from '../../src/web/server.ts';
import { postgresForTests, type TestSchema } from '../helpers/postgres.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { jsonPost, linkIn } from '../helpers/web-harness.ts';

const pg = await postgresForTests();

interface Instance {
  t: TestApp;
  handle: PostgresDoorHandle;
  web: FastifyInstance;
  base: string;
}

describe.skipIf(!pg.reachable)('two instances, one PostgreSQL', () => {
  let s: TestSchema;
  const instances: Instance[] = [];
  const [a, b] = [() => instances[0]!, () => instances[1]!];
  const on = (i: Instance, url: string) => `${i.base}${new URL(url).pathname}`;
  const status = async (email: string) => (await s.pool.query<{ status: string }>('SELECT status FROM subscribers WHERE lower(email) = lower($1)', [email])).rows[0]?.status;
  const mailsTo = (email: string) => instances.reduce((n, i) => n + i.t.smtp.to(email).length, 0);

  beforeAll(async () => {
    s = await pg.schema();
    await migratePostgres(s.pool);
    for (let k = 0; k < 2; k++) {
      const t = await startTestApp({ SUBSCRIBE_RATE_LIMIT: '1000', DATABASE_URL: s.url, DATABASE_SCHEMA: s.name, SECRET_KEY: '', LIKE_LOOKUP: 'false' });
      const handle = (await openPostgresDoor(t.app))!;
      const web = buildServer({ ...t.app, door: handle.served });
      await web.listen({ port: 0, host: '127.0.0.1' });
      const addr = web.server.address();
      instances.push({ t, handle, web, base: `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}` });
    }
  }, 60_000);

  afterAll(async () => {
    for (const i of instances) {
      await i.web.close();
      await i.handle.close();
      await i.t.close();
    }
    await s?.drop();
  });

  it('subscribe on one, confirm on the other, unsubscribe back on the first', async () => {
    expect((await fetch(`${a().base}/subscribe`, jsonPost({ email: 'lin@example.com', topics: ['sparse attention'] }))).status).toBe(202);
    const mail = await a().t.smtp.waitFor('lin@example.com');
    const confirmed = await fetch(on(b(), linkIn(mail.text, '/confirm/')));
    expect(confirmed.status).toBe(200);
    const page = await confirmed.text();
    expect(page).toContain('<li>sparse attention</li>');
    expect(await status('lin@example.com')).toBe('confirmed');

    // The manage link the page shows (signed on b) works on a; its unsubscribe link too.
    const manage = /href="(https:\/\/[^"]*\/preferences\/[^"]+)"/.exec(page)![1]!;
    const prefs = await fetch(on(a(), manage), { headers: { accept: 'application/json' } });
    expect(prefs.status).toBe(200);
    const view = await fetch(on(a(), manage), jsonPost({ topics: ['sparse attention', 'mixture of experts'] }));
    const saved = (await view.json()) as { preferences: { unsubscribeUrl: string; topics: Array<{ text: string }> } };
    expect(saved.preferences.topics.map((t) => t.text)).toEqual(['sparse attention', 'mixture of experts']);
    const gone = await fetch(on(a(), saved.preferences.unsubscribeUrl), { method: 'POST', body: 'List-Unsubscribe=One-Click' });
    expect(gone.status).toBe(200);
    expect(await status('lin@example.com')).toBe('unsubscribed');
    const history = await s.pool.query<{ kind: string }>(`SELECT kind FROM consent_events WHERE email = 'lin@example.com' ORDER BY id`);
    expect(history.rows.map((r) => r.kind)).toEqual(['unsubscribe']);
  });

  it('refuses a like: topic whose example PostgreSQL lacks when no arXiv lookup is configured, naming it, saving nothing', async () => {
    const res = await fetch(`${a().base}/subscribe`, jsonPost({ email: 'like@example.com', topics: ['graphs', 'like:2501.00010'] }));
    expect(res.status).toBe(400);
    const body = (await res.json()) as { code: string; error: string };
    expect(body.code).toBe('LIKE_UNKNOWN');
    expect(body.error).toMatch(/^like:2501\.00010: paper 2501\.00010 is not in this digest's database and no arXiv source is configured to look it up/);
    expect(await status('like@example.com')).toBeUndefined();
  });

  it('a double submit spread over both instances writes one row and sends one email', async () => {
    const email = 'twice@example.com';
    const answers = await Promise.all(
      [a(), b(), a(), b()].map(async (i) => {
        const res = await fetch(`${i.base}/subscribe`, jsonPost({ email, topics: ['retrieval augmented generation'] }));
        return `${res.status} ${await res.text()}`;
      }),
    );
    expect(new Set(answers).size).toBe(1);
    await new Promise((r) => setTimeout(r, 800));
    expect(mailsTo(email)).toBe(1);
    const rows = await s.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM notices WHERE email = $1`, [email]);
    expect(rows.rows[0]!.n).toBe(1);
    expect(await status(email)).toBe('pending');
  });

  it('links of emails sent from SQLite (digests still are) keep working: a reader there can always leave', async () => {
    const local = a().t.app;
    const r = await local.subscribers.subscribe({ email: 'sqlite.reader@example.com', topics: ['graphs'] }, { confirmed: true });
    const reader = local.db.prepare('SELECT id, token_salt AS tokenSalt FROM subscribers WHERE id = ?').get(r.subscriberId) as { id: number; tokenSalt: string };
    const sqliteStatus = () => (local.db.prepare('SELECT status FROM subscribers WHERE id = ?').get(reader.id) as { status: string }).status;
    const prefs = await fetch(on(a(), local.links.preferences(reader)));
    expect(prefs.status).toBe(200);
    expect(await prefs.text()).toContain('sqlite.reader@example.com');
    const gone = await fetch(on(a(), local.links.unsubscribe(reader)), { method: 'POST', body: 'List-Unsubscribe=One-Click' });
    expect(gone.status).toBe(200);
    expect(sqliteStatus()).toBe('unsubscribed');
    expect(await status('sqlite.reader@example.com')).toBeUndefined();
    // A link neither store signed is refused as before.
    const forged = local.links.unsubscribe({ id: reader.id, tokenSalt: 'not-the-salt' });
    expect((await fetch(on(a(), forged), { method: 'POST', body: 'x' })).status).toBe(403);
  });
});

describe('PostgreSQL unreachable behind the door', () => {
  it('answers 503 with Retry-After and DB_FAULT, never a 500, and writes nothing anywhere', async () => {
    const t = await startTestApp({ SUBSCRIBE_RATE_LIMIT: '1000' });
    const port = await freePort(); // nothing listens there
    const pool = createPool(`postgres://root@127.0.0.1:${port}/test`, { connectTimeoutMs: 1000 });
    const door = createPostgresDoor({ pool, clock: t.app.clock, tokens: t.app.tokens, links: t.app.links, logger: silentLogger, mailer: t.app.mailer, renderer: t.app.renderer, config: t.app.config });
    const web = buildServer({ ...t.app, door });
    try {
      const res = await web.inject({ method: 'POST', url: '/subscribe', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ email: 'down@example.com', topics: ['graphs'] }) });
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('5');
      expect(res.json()).toMatchObject({ ok: false, code: 'DB_FAULT' });
      const unsub = await web.inject({ method: 'POST', url: new URL(t.app.links.unsubscribe({ id: 1, tokenSalt: 's' })).pathname, payload: 'x' });
      expect(unsub.statusCode).toBe(503);
      expect((t.app.db.prepare('SELECT count(*) AS n FROM subscribers').get() as { n: number }).n).toBe(0);
    } finally {
      door.notices.close();
      await web.close();
      await pool.end();
      await t.close();
    }
  });
});
