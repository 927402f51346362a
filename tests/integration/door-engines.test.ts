// The subscriber door on both engines, through the real listening HTTP server and a real SMTP server:
// the same consent scenarios run on SQLite and on PostgreSQL (`digest serve`'s door when DATABASE_URL is
// postgres://; skipped, said once, when PostgreSQL is unreachable). subscribe -> email -> click ->
// confirmed; one-click unsubscribe; a re-subscribe waits for its new link; complained and bounced
// addresses are never mailed; the per-address limits; the same bytes for every address.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresEngineApp, sqliteEngineApp, type EngineApp } from '../helpers/engine-apps.ts';
import { postgresForTests } from '../helpers/postgres.ts';
import { formPost, jsonPost, linkIn } from '../helpers/web-harness.ts';

const pg = await postgresForTests();

type EngineDoor = EngineApp;
const ENV = { SUBSCRIBE_RATE_LIMIT: '1000' };

const sqliteDoor = () => sqliteEngineApp(ENV, (t) => ({ door: t.app.door }));

async function postgresDoor(): Promise<EngineDoor> {
  const d = await postgresEngineApp(pg, ENV, (_t, handle) => ({ door: handle!.served }));
  expect(d.pg!.door.engine).toBe('postgres');
  return d;
}

const engines = [
  { engine: 'sqlite', open: sqliteDoor, skip: false },
  { engine: 'postgres', open: postgresDoor, skip: !pg.reachable },
] as const;

describe.each(engines)('the subscriber door on $engine', ({ open, skip }) => {
  let d: EngineDoor;
  beforeAll(async () => {
    if (!skip) d = await open();
  }, 60_000);
  afterAll(async () => {
    await d?.close();
  });

  const local = (url: string) => `${d.base}${new URL(url).pathname}`;
  const status = async (email: string) => (await d.get<{ status: string }>('SELECT status FROM subscribers WHERE lower(email) = lower(?)', email))?.status;
  const row = async (email: string) => (await d.get<{ id: number; tokenSalt: string }>('SELECT id, token_salt AS "tokenSalt" FROM subscribers WHERE lower(email) = lower(?)', email))!;
  const kinds = async (email: string) => (await d.all<{ kind: string }>('SELECT kind FROM consent_events WHERE lower(email) = lower(?) ORDER BY id', email)).map((r) => r.kind);
  const topics = async (email: string) =>
    (await d.all<{ text: string }>('SELECT t.text FROM topics t JOIN subscribers s ON s.id = t.subscriber_id WHERE lower(s.email) = lower(?) ORDER BY t.position', email)).map((r) => r.text);
  const mails = (email: string) => d.t.smtp.to(email).length;
  /** Until every stored confirmation email has been handed to the relay (no fixed sleep: the machine may be loaded). */
  const settle = async () => {
    for (let i = 0; i < 400; i++) {
      const open = await d.get<{ n: number | string }>(`SELECT count(*) AS n FROM notices WHERE status IN ('planned', 'sending')`);
      if (Number(open?.n) === 0) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error('confirmation emails still unsent after 10 s');
  };
  const oneClick = async (email: string) => fetch(local(d.t.app.links.unsubscribe(await row(email))), { method: 'POST', body: 'List-Unsubscribe=One-Click' });

  it.skipIf(skip)('subscribe -> confirmation email -> click -> confirmed, with the topics on the page', async () => {
    const res = await fetch(`${d.base}/subscribe`, jsonPost({ email: 'Ada@Example.COM', topics: ['graph neural networks', 'diffusion models'] }));
    expect(res.status).toBe(202);
    expect(await status('ada@example.com')).toBe('pending');
    const mail = await d.t.smtp.waitFor('Ada@example.com');
    expect(mail.text).toContain('2 topics chosen');
    const page = await fetch(local(linkIn(mail.text, '/confirm/')));
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('<li>graph neural networks</li>');
    expect(html).toContain('<li>diffusion models</li>');
    expect(await status('ada@example.com')).toBe('confirmed');
    // A second click is harmless and says so.
    expect(await (await fetch(local(linkIn(mail.text, '/confirm/')))).text()).toContain('Already confirmed');
  });

  it.skipIf(skip)('a bad topic is refused naming it, and saves nothing', async () => {
    const res = await fetch(`${d.base}/subscribe`, jsonPost({ email: 'bad.topic@example.com', topics: ['graphs', 'vision AND ('] }));
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ ok: false, code: 'TOPIC_INVALID' });
    expect(await status('bad.topic@example.com')).toBeUndefined();
    await settle();
    expect(mails('bad.topic@example.com')).toBe(0);
  });

  it.skipIf(skip)('the manage page reads and edits topics; a bad topic there changes nothing', async () => {
    const manage = local(d.t.app.links.preferences(await d.get<{ id: number; tokenSalt: string }>('SELECT id, token_salt AS "tokenSalt" FROM subscribers WHERE lower(email) = ?', 'ada@example.com').then((r) => r!)));
    const page = await fetch(manage);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('diffusion models');
    const saved = await fetch(manage, jsonPost({ topics: ['diffusion models', 'protein folding'], deliveryHour: 6 }));
    expect(saved.status).toBe(200);
    expect(((await saved.json()) as { preferences: { deliveryHour: number } }).preferences.deliveryHour).toBe(6);
    expect(await topics('ada@example.com')).toEqual(['diffusion models', 'protein folding']);
    const refused = await fetch(manage, jsonPost({ topics: ['robots', 'x AND ('], deliveryHour: 9 }));
    expect(refused.status).toBe(400);
    expect(await topics('ada@example.com')).toEqual(['diffusion models', 'protein folding']);
    expect((await d.get<{ h: number }>('SELECT delivery_hour AS h FROM subscribers WHERE lower(email) = ?', 'ada@example.com'))!.h).toBe(6);
  });

  it.skipIf(skip)('one-click unsubscribe; a re-subscribe stays a request until its own new link is clicked', async () => {
    const oldConfirm = d.t.app.links.confirm(await row('ada@example.com'));
    d.t.clock.advance(60_000);
    const page = await fetch(local(d.t.app.links.unsubscribe(await row('ada@example.com'))));
    expect(page.status).toBe(200); // a GET changes nothing
    expect(await status('ada@example.com')).toBe('confirmed');
    expect((await oneClick('ada@example.com')).status).toBe(200);
    expect(await status('ada@example.com')).toBe('unsubscribed');
    expect(await kinds('ada@example.com')).toEqual(['unsubscribe']);
    // A confirmation link signed before the unsubscribe cannot bring the address back.
    expect((await fetch(local(oldConfirm))).status).toBe(403);

    d.t.clock.advance(2 * 3600_000);
    const before = mails('ada@example.com');
    expect((await fetch(`${d.base}/subscribe`, jsonPost({ email: 'ada@example.com', topics: ['quantum error correction'] }))).status).toBe(202);
    const mail = await d.t.smtp.waitFor('ada@example.com', before + 1);
    expect(await status('ada@example.com')).toBe('unsubscribed');
    expect(await topics('ada@example.com')).toEqual(['diffusion models', 'protein folding']);
    const confirmed = await fetch(local(linkIn(mail.text, '/confirm/')));
    expect(confirmed.status).toBe(200);
    expect(await confirmed.text()).toContain('<li>quantum error correction</li>');
    expect(await status('ada@example.com')).toBe('confirmed');
    expect(await topics('ada@example.com')).toEqual(['quantum error correction']);
    expect(await kinds('ada@example.com')).toEqual(['unsubscribe', 'reconfirmed']);
  });

  it.skipIf(skip)('complained and bounced addresses are never mailed; every address gets the same bytes', async () => {
    for (const email of ['bounced@example.com', 'complained@example.com', 'left@example.com', 'pending@example.com']) {
      await fetch(`${d.base}/subscribe`, jsonPost({ email, topics: ['graphs'] }));
      await d.t.smtp.waitFor(email);
    }
    await fetch(local(linkIn(d.t.smtp.to('bounced@example.com')[0]!.text, '/confirm/')));
    const at = d.t.clock.now().toISOString();
    await d.run(`UPDATE subscribers SET status = 'suppressed', suppressed_at = ?, opt_out_reason = 'hard-bounce' WHERE email = ?`, at, 'bounced@example.com');
    await d.run(`UPDATE subscribers SET status = 'unsubscribed', unsubscribed_at = ?, opt_out_reason = 'complaint' WHERE email = ?`, at, 'complained@example.com');
    expect((await oneClick('left@example.com')).status).toBe(200);
    expect(await kinds('bounced@example.com')).toEqual(['hard-bounce']);
    expect(await kinds('complained@example.com')).toEqual(['complaint']);
    d.t.clock.advance(2 * 3600_000); // past the quiet hour of the first emails
    const before = Object.fromEntries(['bounced@example.com', 'complained@example.com', 'left@example.com'].map((e) => [e, mails(e)]));

    const answers = new Set<string>();
    const forms = new Set<string>();
    const everyone = ['bounced@example.com', 'complained@example.com', 'left@example.com', 'pending@example.com', 'ada@example.com', 'brand.new@example.com'];
    for (const email of everyone) {
      const res = await fetch(`${d.base}/subscribe`, jsonPost({ email, topics: ['graph neural networks'] }));
      answers.add(`${res.status} ${await res.text()}`);
      const form = await fetch(`${d.base}/subscribe`, formPost([['email', email], ['topics', 'graph neural networks']]));
      forms.add(`${form.status} ${form.headers.get('location')} ${await form.text()}`);
    }
    expect(answers.size).toBe(1);
    expect([...answers][0]).toMatch(/^202 /);
    expect(forms.size).toBe(1);
    expect([...forms][0]).toMatch(/^303 \/subscribed /);
    await d.t.smtp.waitFor('brand.new@example.com');
    await d.t.smtp.waitFor('left@example.com', before['left@example.com']! + 1);
    await settle();
    expect(mails('bounced@example.com')).toBe(before['bounced@example.com']);
    expect(mails('complained@example.com')).toBe(before['complained@example.com']);
    expect(mails('left@example.com')).toBe(before['left@example.com']! + 1); // one, though asked twice
    expect([await status('bounced@example.com'), await status('complained@example.com'), await status('left@example.com')]).toEqual(['suppressed', 'unsubscribed', 'unsubscribed']);
    // Even a link of their own cannot confirm a complained address.
    expect((await fetch(local(d.t.app.links.confirm(await row('complained@example.com'))))).status).toBe(403);
    expect(await status('complained@example.com')).toBe('unsubscribed');
  });

  it.skipIf(skip)('at most 3 confirmation emails a day per address, none while one of the last hour is live; the answer never changes', async () => {
    const target = 'target@example.org';
    const answers = new Set<string>();
    const counts: number[] = [];
    const start = Date.parse('2025-11-27T08:00:00Z');
    for (const minutes of [0, 11, 30, 61, 90, 122, 183, 240]) {
      d.t.clock.set(new Date(start + minutes * 60_000));
      const res = await fetch(`${d.base}/subscribe`, jsonPost({ email: target, topics: ['graphs'] }));
      answers.add(`${res.status} ${await res.text()}`);
      await settle();
      counts.push(mails(target));
    }
    expect(counts).toEqual([1, 1, 1, 2, 2, 3, 3, 3]);
    d.t.clock.set(new Date(start + 24.5 * 3600_000)); // the first one is more than 24 hours old
    await fetch(`${d.base}/subscribe`, jsonPost({ email: target, topics: ['graphs'] }));
    await d.t.smtp.waitFor(target, 4);
    expect(answers.size).toBe(1);
  });
});
