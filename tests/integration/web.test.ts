// The subscriber web flow over a real listening server, a real SQLite file and a real SMTP server.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRenderer } from '../../src/digest/render.ts';
import { buildServer } from '../../src/web/server.ts';
import { seedBatch } from '../helpers/seed.ts';
import { linkIn, startWebHarness, type WebHarness } from '../helpers/web-harness.ts';

let h: WebHarness;

const json = (body: unknown) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});
const form = (fields: Array<[string, string]>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
  redirect: 'manual' as const,
});

function row(email: string) {
  return h.tmp.db.prepare('SELECT * FROM subscribers WHERE email = ?').get(email) as
    | { id: number; status: string; watermark: number; timezone: string; delivery_hour: number; frequency: string; token_salt: string }
    | undefined;
}

/** Subscribes through the API and confirms through the emailed link; returns the confirmation email. */
async function subscribeAndConfirm(email: string, topics: string[]) {
  const before = h.smtp.to(email).length;
  expect((await fetch(`${h.base}/subscribe`, json({ email, topics }))).status).toBe(202);
  const mail = await h.smtp.waitFor(email, before + 1);
  const res = await fetch(h.local(linkIn(mail.text, '/confirm/')));
  expect(res.status).toBe(200);
  return mail;
}

beforeAll(async () => {
  h = await startWebHarness({ SUBSCRIBE_RATE_LIMIT: '1000' });
  // An older edition and the newest one (the clock says 2025-11-25).
  seedBatch(h.tmp.db, '2025-11-24', [
    { title: 'Old diffusion models for images', abstract: 'Diffusion models generate images step by step.' },
    { title: 'Graph networks revisited', abstract: 'Message passing on graphs.' },
  ]);
  seedBatch(h.tmp.db, '2025-11-25', [
    { title: 'Mixture of experts at scale', abstract: 'Sparse mixture of experts layers for language models.', upvotes: 30 },
    { title: 'Self-play for reinforcement learning agents', abstract: 'Agents learn by self-play in many games.', upvotes: 12 },
  ]);
  seedBatch(h.tmp.db, '2025-10-01', [
    { title: 'Ancient reinforcement learning survey', abstract: 'A survey of reinforcement learning from long ago.' },
  ]);
});

afterAll(async () => {
  await h?.close();
});

describe('subscribe page', () => {
  it('labels every field, loads only its own assets and sends strict security headers', async () => {
    const res = await fetch(`${h.base}/`);
    expect(res.status).toBe(200);
    const html = await res.text();
    const ids = [...html.matchAll(/<(?:input|select)[^>]*\bid="([^"]+)"/g)].map((m) => m[1]);
    expect(ids).toEqual(expect.arrayContaining(['email', 'topic-0', 'deliveryHour', 'timezone']));
    for (const id of ids) expect(html).toContain(`for="${id}"`);
    expect(html).not.toMatch(/(src|href)="https?:\/\//);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toMatch(/https?:/);
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(html).toContain('<option value="Europe/Paris" selected>');
    const css = await fetch(`${h.base}/assets/app.css`);
    expect(css.headers.get('content-type')).toContain('text/css');
  });
});

describe('POST /subscribe', () => {
  it('answers the same for new, pending and confirmed addresses, and emails accordingly', async () => {
    const answers: Array<{ status: number; body: string }> = [];
    const ask = async (email: string) => {
      const res = await fetch(`${h.base}/subscribe`, json({ email, topics: ['reinforcement learning'] }));
      answers.push({ status: res.status, body: await res.text() });
    };
    await subscribeAndConfirm('known@example.org', ['mixture of experts']);
    h.clock.advance(11 * 60 * 1000); // past the 10-minute throttle of emails to known@
    await ask('New.Person@Example.ORG'); // new
    await ask('new.person@example.org'); // pending again, within 10 minutes: no second email
    await ask('known@example.org'); // confirmed: nothing changes, "already subscribed" email
    expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
    expect(answers[0]!.status).toBe(202);

    const first = await h.smtp.waitFor('new.person@example.org');
    expect(first.text).toContain('/confirm/');
    const already = await h.smtp.waitFor('known@example.org', 2);
    expect(already.text).toMatch(/already subscribed/i);
    expect(already.text).toContain('/preferences/');
    await new Promise((r) => setTimeout(r, 200));
    expect(h.smtp.to('new.person@example.org')).toHaveLength(1);
    // The confirmed subscriber's topics are untouched.
    expect(h.subscribers.findByEmail('known@example.org')!.topics.map((t) => t.text)).toEqual(['mixture of experts']);
    expect(row('new.person@example.org')!.status).toBe('pending');
  });

  it('sends a new confirmation to a pending address after 10 minutes, with the replaced topics', async () => {
    h.clock.advance(11 * 60 * 1000);
    const res = await fetch(`${h.base}/subscribe`, json({ email: 'new.person@example.org', topics: ['self-play', 'graph'] }));
    expect(res.status).toBe(202);
    const second = await h.smtp.waitFor('new.person@example.org', 2);
    expect(second.text).toContain('self-play');
    expect(h.subscribers.findByEmail('new.person@example.org')!.topics.map((t) => t.text)).toEqual(['self-play', 'graph']);
  });

  it('accepts the plain form post (no JavaScript) and redirects to "check your inbox"', async () => {
    const res = await fetch(
      `${h.base}/subscribe`,
      form([
        ['email', 'formuser@example.org'],
        ['topics', 'diffusion OR flow'],
        ['topics', ''],
        ['topics', ''],
        ['deliveryHour', '6'],
        ['timezone', 'Asia/Tokyo'],
        ['frequency', 'weekly'],
      ]),
    );
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/subscribed');
    const page = await fetch(`${h.base}/subscribed`);
    expect(await page.text()).toContain('Check your inbox');
    const s = row('formuser@example.org')!;
    expect([s.timezone, s.delivery_hour, s.frequency]).toEqual(['Asia/Tokyo', 6, 'weekly']);
    await h.smtp.waitFor('formuser@example.org');
  });

  it('refuses a bad topic with 400 naming the topic and position, and saves nothing', async () => {
    const queriesBefore = h.tmp.db.prepare('SELECT count(*) AS n FROM queries').get();
    const res = await fetch(`${h.base}/subscribe`, json({ email: 'bad@example.org', topics: ['fine topic', 'llm "agents'] }));
    expect(res.status).toBe(400);
    const body = (await res.json()) as { ok: boolean; error: string; topic: number; position: number };
    expect(body.ok).toBe(false);
    expect(body.error).toMatch(/topic 2/);
    expect(body.topic).toBe(2);
    expect(body.position).toBe(5);
    expect(row('bad@example.org')).toBeUndefined();
    expect(h.tmp.db.prepare('SELECT count(*) AS n FROM queries').get()).toEqual(queriesBefore);

    // The form shows the error next to the field, keeps what was typed, and still saves nothing.
    const page = await fetch(`${h.base}/subscribe`, form([['email', 'bad@example.org'], ['topics', 'ok'], ['topics', 'x)']]));
    expect(page.status).toBe(400);
    const html = await page.text();
    expect(html).toMatch(/id="topic-1"[^>]*value="x\)"[^>]*aria-invalid="true"/);
    expect(html).toContain('value="bad@example.org"');
    expect(row('bad@example.org')).toBeUndefined();
  });

  it('refuses a bad address or time zone with 400 naming the field', async () => {
    const r1 = await fetch(`${h.base}/subscribe`, json({ email: 'not-an-address', topics: ['llm'] }));
    expect(r1.status).toBe(400);
    expect(((await r1.json()) as { field: string }).field).toBe('email');
    const r2 = await fetch(`${h.base}/subscribe`, json({ email: 'tz@example.org', topics: ['llm'], timezone: 'Mars/Olympus' }));
    expect(r2.status).toBe(400);
    expect(((await r2.json()) as { error: string }).error).toMatch(/^timezone: /);
    const r3 = await fetch(`${h.base}/subscribe`, json({ email: 'tz@example.org', topics: ['llm'], deliveryHour: 24 }));
    expect(r3.status).toBe(400);
    expect(row('tz@example.org')).toBeUndefined();
  });

  it('is rate limited per address (429)', async () => {
    const limited = await startWebHarness({ SUBSCRIBE_RATE_LIMIT: '3' });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        const res = await fetch(`${limited.base}/subscribe`, json({ email: `r${i}@example.org`, topics: ['llm'] }));
        statuses.push(res.status);
      }
      expect(statuses).toEqual([202, 202, 202, 429]);
      const page = await fetch(`${limited.base}/subscribe`, form([['email', 'x@example.org'], ['topics', 'llm']]));
      expect(page.status).toBe(429);
      expect(await page.text()).toContain('Too many subscription requests');
    } finally {
      await limited.close();
    }
  });
});

describe('confirm and links', () => {
  it('confirms, and the watermark makes the first digest hold the newest edition', async () => {
    await subscribeAndConfirm('confirm@example.org', ['reinforcement learning']);
    const s = row('confirm@example.org')!;
    expect(s.status).toBe('confirmed');
    // Papers 1-2 (2025-11-24) are before the newest batch date; 3-4 (2025-11-25) come in the first digest.
    // The 2025-10-01 batch (paper 5) is older too, so the watermark is the highest id among older batches.
    const { w } = h.tmp.db
      .prepare(`SELECT max(p.id) AS w FROM papers p JOIN batches b ON b.id = p.first_batch_id WHERE b.date < '2025-11-25'`)
      .get() as { w: number };
    expect(s.watermark).toBe(w);
  });

  it('refuses tampered, foreign, wrong-purpose and expired tokens with 4xx', async () => {
    await fetch(`${h.base}/subscribe`, json({ email: 'a@example.org', topics: ['llm'] }));
    await fetch(`${h.base}/subscribe`, json({ email: 'b@example.org', topics: ['llm'] }));
    const a = row('a@example.org')!;
    const b = row('b@example.org')!;
    const aConfirm = h.links.confirm({ id: a.id, tokenSalt: a.token_salt });
    const token = aConfirm.split('/').pop()!;

    const tampered = `${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`;
    const r1 = await fetch(`${h.base}/confirm/${tampered}`);
    expect(r1.status).toBe(403);
    expect(await r1.text()).toContain('This confirmation link is not valid');

    // A's signature with B's id: never acts on B.
    const foreign = token.replace(/^\d+\./, `${b.id}.`);
    expect((await fetch(`${h.base}/confirm/${foreign}`)).status).toBe(403);
    expect(row('b@example.org')!.status).toBe('pending');

    // A manage token is not a confirmation token.
    const manage = h.links.preferences({ id: a.id, tokenSalt: a.token_salt }).split('/').pop()!;
    expect((await fetch(`${h.base}/confirm/${manage}`)).status).toBe(403);
    expect((await fetch(`${h.base}/confirm/garbage`)).status).toBe(403);

    // Confirmation links expire after 7 days.
    h.clock.advance(8 * 24 * 3600 * 1000);
    const expired = await fetch(`${h.base}/confirm/${token}`);
    expect(expired.status).toBe(410);
    expect(await expired.text()).toContain('has expired');
    expect(row('a@example.org')!.status).toBe('pending');
    h.clock.advance(-8 * 24 * 3600 * 1000);
  });
});

describe('unsubscribe', () => {
  it('does not unsubscribe on GET, and unsubscribes on a one-click POST of any content type', async () => {
    const bodies: Array<{ name: string; init: RequestInit }> = [
      {
        name: 'urlencoded',
        init: { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' },
      },
      { name: 'multipart', init: { method: 'POST', body: (() => { const f = new FormData(); f.set('List-Unsubscribe', 'One-Click'); return f; })() } },
      { name: 'text', init: { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'List-Unsubscribe=One-Click' } },
      { name: 'none', init: { method: 'POST' } },
    ];
    for (const { name, init } of bodies) {
      const email = `leave-${name}@example.org`;
      await subscribeAndConfirm(email, ['llm']);
      const s = row(email)!;
      const url = h.local(h.links.unsubscribe({ id: s.id, tokenSalt: s.token_salt }));

      const page = await fetch(url);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain(`<form method="post" action="/unsubscribe/`);
      expect(row(email)!.status).toBe('confirmed');

      const res = await fetch(url, init);
      expect(res.status, name).toBe(200);
      expect(await res.text()).toContain('is unsubscribed');
      expect(row(email)!.status, name).toBe('unsubscribed');
    }
  });

  it('refuses a tampered one-click POST and changes nothing', async () => {
    await subscribeAndConfirm('stay@example.org', ['llm']);
    const s = row('stay@example.org')!;
    const url = h.local(h.links.unsubscribe({ id: s.id, tokenSalt: 'not-the-salt' }));
    const res = await fetch(url, { method: 'POST', body: 'List-Unsubscribe=One-Click' });
    expect(res.status).toBe(403);
    expect(row('stay@example.org')!.status).toBe('confirmed');
  });

  it('asks to confirm again when an unsubscribed address subscribes again', async () => {
    const before = h.smtp.to('leave-text@example.org').length;
    h.clock.advance(11 * 60 * 1000);
    await fetch(`${h.base}/subscribe`, json({ email: 'leave-text@example.org', topics: ['agents'] }));
    expect(row('leave-text@example.org')!.status).toBe('pending');
    await h.smtp.waitFor('leave-text@example.org', before + 1);
  });
});

describe('preferences, mute and preview', () => {
  it('edits topics, hour, time zone, frequency and pause from the form', async () => {
    await subscribeAndConfirm('prefs@example.org', ['diffusion', 'graph networks']);
    const s = row('prefs@example.org')!;
    const url = h.local(h.links.preferences({ id: s.id, tokenSalt: s.token_salt }));
    const page = await (await fetch(url)).text();
    expect(page).toContain('value="diffusion"');
    expect(page).toContain('value="graph networks"');

    const path = new URL(url).pathname;
    const res = await fetch(
      url,
      form([
        ['topics', 'diffusion models'], // edited
        ['topics', 'graph networks'], // removed below
        ['topics', 'self-play'], // added
        ['remove', '1'],
        ['mute', '2'],
        ['deliveryHour', '18'],
        ['timezone', 'America/New_York'],
        ['frequency', 'weekly'],
        ['weeklyDay', '5'],
        ['pauseDays', '7'],
      ]),
    );
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`${path}?saved=1`);
    const after = h.subscribers.findByEmail('prefs@example.org')!;
    expect(after.topics.map((t) => [t.text, t.muted])).toEqual([
      ['diffusion models', false],
      ['self-play', true],
    ]);
    expect([after.deliveryHour, after.timezone, after.frequency, after.weeklyDay]).toEqual([18, 'America/New_York', 'weekly', 5]);
    expect(after.pausedUntil).toBe(new Date(h.clock.now().getTime() + 7 * 86_400_000).toISOString());
    const saved = await (await fetch(`${url}?saved=1`)).text();
    expect(saved).toContain('Saved.');
    expect(saved).toContain('Paused until');

    // A bad value changes nothing and is shown next to the field.
    const bad = await fetch(url, form([['topics', '(unclosed'], ['deliveryHour', '3'], ['timezone', 'UTC'], ['frequency', 'daily']]));
    expect(bad.status).toBe(400);
    expect(await bad.text()).toMatch(/topic 1: .*position 1/);
    expect(h.subscribers.findByEmail('prefs@example.org')!.deliveryHour).toBe(18);
    const badTz = await fetch(url, json({ timezone: 'Nowhere/Land' }));
    expect(badTz.status).toBe(400);
    expect(((await badTz.json()) as { field: string }).field).toBe('timezone');
  });

  it('mutes a topic only on POST (the GET page just asks)', async () => {
    await subscribeAndConfirm('mute@example.org', ['llm', 'agents']);
    const s = row('mute@example.org')!;
    const topic = h.subscribers.findByEmail('mute@example.org')!.topics[1]!;
    const url = h.local(h.links.mute({ id: s.id, tokenSalt: s.token_salt }, topic.id));
    const page = await fetch(url);
    expect(await page.text()).toContain('agents');
    expect(h.subscribers.findByEmail('mute@example.org')!.topics[1]!.muted).toBe(false);
    const res = await fetch(url, { method: 'POST' });
    expect(res.status).toBe(200);
    expect(h.subscribers.findByEmail('mute@example.org')!.topics.map((t) => t.muted)).toEqual([false, true]);

    // A mute link for another subscriber's topic id, signed with this subscriber's salt, is refused.
    const other = h.subscribers.findByEmail('prefs@example.org')!.topics[0]!;
    const foreign = await fetch(h.local(h.links.mute({ id: s.id, tokenSalt: s.token_salt }, other.id)), { method: 'POST' });
    expect(foreign.status).toBe(410);
  });

  it('previews recent matches with highlights, and syntax errors with their position', async () => {
    const res = await fetch(`${h.base}/api/topics/preview?q=${encodeURIComponent('reinforcement learning')}`);
    const body = (await res.json()) as { ok: boolean; total: number; papers: Array<{ title: string; titleHtml: string; abstractHtml: string }> };
    expect(body.ok).toBe(true);
    // The October paper is older than 14 days.
    expect(body.papers.map((p) => p.title)).toEqual(['Self-play for reinforcement learning agents']);
    expect(body.papers[0]!.titleHtml).toBe('Self-play for <mark>reinforcement</mark> <mark>learning</mark> agents');

    const err = (await (await fetch(`${h.base}/api/topics/preview?q=${encodeURIComponent('llm (agents')}`)).json()) as {
      ok: boolean;
      error: string;
      position: number;
    };
    expect(err.ok).toBe(false);
    expect(err.position).toBe(5);
    expect(err.error).toMatch(/position 5/);
  });

  it('escapes feed text in preview highlights', async () => {
    seedBatch(h.tmp.db, '2025-11-25', [{ title: 'Robust <script>alert(1)</script> tokenizers', abstract: 'Tokenizers & "quotes".' }]);
    const body = (await (await fetch(`${h.base}/api/topics/preview?q=tokenizers`)).json()) as {
      papers: Array<{ titleHtml: string; abstractHtml: string }>;
    };
    expect(body.papers[0]!.titleHtml).toBe('Robust &lt;script&gt;alert(1)&lt;/script&gt; <mark>tokenizers</mark>');
    expect(body.papers[0]!.abstractHtml).toBe('<mark>Tokenizers</mark> &amp; &quot;quotes&quot;.');
  });
});

describe('digest web view', () => {
  it('shows a sent digest to its subscriber only', async () => {
    await subscribeAndConfirm('view@example.org', ['mixture of experts']);
    const s = row('view@example.org')!;
    const paper = h.tmp.db.prepare(`SELECT id FROM papers WHERE title = 'Mixture of experts at scale'`).get() as { id: number };
    const topic = h.subscribers.findByEmail('view@example.org')!.topics[0]!;
    const digestId = Number(
      h.tmp.db
        .prepare(
          `INSERT INTO digests (subscriber_id, edition, status, from_paper, to_paper, papers, paper_count, planned_at)
           VALUES (?, '2025-11-25', 'sent', 0, ?, ?, 1, ?)`,
        )
        .run(s.id, paper.id, JSON.stringify([{ p: paper.id, t: [topic.id], s: -1 }]), h.clock.now().toISOString()).lastInsertRowid,
    );
    const res = await fetch(h.local(h.links.webView({ id: s.id, tokenSalt: s.token_salt }, digestId)));
    expect(res.status).toBe(200);
    const text = (await res.text()).replace(/<[^>]+>/g, '');
    expect(text).toContain('Mixture of experts at scale');
    expect(res.headers.get('content-security-policy')).not.toContain('script-src');

    // Another subscriber's valid token naming this digest id is refused.
    const other = row('known@example.org')!;
    const foreign = await fetch(h.local(h.links.webView({ id: other.id, tokenSalt: other.token_salt }, digestId)));
    expect(foreign.status).toBe(404);
    expect((await fetch(`${h.base}/digests/1.view-1.0.abc`)).status).toBe(403);
  });

  it('answers /health and unknown pages', async () => {
    expect((await fetch(`${h.base}/health`)).status).toBe(200);
    const missing = await fetch(`${h.base}/nope`);
    expect(missing.status).toBe(404);
    expect(await missing.text()).toContain('Page not found');
  });
});

describe('request logs', () => {
  it('log one line per request with link tokens redacted', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(l) });
    const renderer = await createRenderer();
    const app = buildServer({ db: h.tmp.db, clock: h.clock, config: h.config, logger, links: h.links, subscribers: h.subscribers, renderer });
    const s = row('known@example.org')!;
    const url = new URL(h.links.unsubscribe({ id: s.id, tokenSalt: s.token_salt })).pathname;
    const token = url.split('/').pop()!;
    const res = await app.inject({ method: 'GET', url });
    expect(res.statusCode).toBe(200);
    await app.close();
    const all = lines.join('');
    expect(all).toContain('"url":"/unsubscribe/[token]"');
    expect(all).not.toContain(token);
  });
});
