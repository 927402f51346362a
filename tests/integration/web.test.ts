// The subscriber web flow over a real listening server and a real SMTP server, on both engines (the
// SQLite file; PostgreSQL's door as `digest serve` serves it with DATABASE_URL): subscribe, confirm, link
// tokens, unsubscribe. (Preferences, mute, preview, web view: web-pages.test.ts.)
import { describe, expect, it } from 'vitest';
import { forEachEngine } from '../helpers/on-engines.ts';
import { formPost as form, jsonPost as json, linkIn, sharedWebHarness, startWebHarness } from '../helpers/web-harness.ts';

forEachEngine('the subscriber web flow', (engine) => {
  const { h, rowOn, topicsOn, subscribeAndConfirm } = sharedWebHarness({ SUBSCRIBE_RATE_LIMIT: '1000' }, { engine });
  const row = rowOn;

  it('keeps its readers in the store under test (PostgreSQL: not in the SQLite file beside it)', async () => {
    await subscribeAndConfirm('where@example.org', ['llm']);
    expect((await row('where@example.org'))!.status).toBe('confirmed');
    expect(Boolean(h.tmp.db.prepare('SELECT 1 FROM subscribers WHERE email = ?').get('where@example.org'))).toBe(engine === 'sqlite');
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
      h.clock.advance(61 * 60 * 1000); // past the hour in which known@'s live confirmation holds back another
      await ask('New.Person@Example.ORG'); // new
      await ask('new.person@example.org'); // pending again, within the hour: no second email
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
      expect(await topicsOn('known@example.org')).toEqual(['mixture of experts']);
      expect((await row('new.person@example.org'))!.status).toBe('pending');
    });

    it('sends a new confirmation to a pending address after an hour, counting the replaced topics (never quoting them)', async () => {
      h.clock.advance(61 * 60 * 1000);
      const res = await fetch(`${h.base}/subscribe`, json({ email: 'new.person@example.org', topics: ['self-play', 'graph'] }));
      expect(res.status).toBe(202);
      const second = await h.smtp.waitFor('new.person@example.org', 2);
      expect(second.text).toContain('2 topics chosen');
      expect(second.text + second.html).not.toContain('self-play');
      expect(await topicsOn('new.person@example.org')).toEqual(['self-play', 'graph']);
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
      const s = (await row('formuser@example.org'))!;
      expect([s.timezone, s.delivery_hour, s.frequency]).toEqual(['Asia/Tokyo', 6, 'weekly']);
      await h.smtp.waitFor('formuser@example.org');
    });

    it('refuses a bad topic with 400 naming the topic and position, and saves nothing', async () => {
      const queriesBefore = await h.sql.get('SELECT count(*) AS n FROM queries');
      const res = await fetch(`${h.base}/subscribe`, json({ email: 'bad@example.org', topics: ['fine topic', 'llm "agents'] }));
      expect(res.status).toBe(400);
      const body = (await res.json()) as { ok: boolean; error: string; topic: number; position: number };
      expect(body.ok).toBe(false);
      expect(body.error).toMatch(/topic 2/);
      expect(body.topic).toBe(2);
      expect(body.position).toBe(5);
      expect(await row('bad@example.org')).toBeUndefined();
      expect(await h.sql.get('SELECT count(*) AS n FROM queries')).toEqual(queriesBefore);

      // The form shows the error next to the field, keeps what was typed, and still saves nothing.
      const page = await fetch(`${h.base}/subscribe`, form([['email', 'bad@example.org'], ['topics', 'ok'], ['topics', 'x)']]));
      expect(page.status).toBe(400);
      const html = await page.text();
      expect(html).toMatch(/id="topic-1"[^>]*value="x\)"[^>]*aria-invalid="true"/);
      expect(html).toContain('value="bad@example.org"');
      expect(await row('bad@example.org')).toBeUndefined();
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
      expect(await row('tz@example.org')).toBeUndefined();
    });

    it('is rate limited per address (429)', async () => {
      const limited = await startWebHarness({ SUBSCRIBE_RATE_LIMIT: '3' }, undefined, { engine });
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
    it('the confirmation email and page say when digests come, in the reader’s zone; the page lists what already matches', async () => {
      const when = async (email: string, topics: string[]) => {
        const res = await fetch(`${h.base}/subscribe`, json({ email, topics, timezone: 'Europe/Berlin', deliveryHour: 7 }));
        expect(res.status).toBe(202);
        const mail = await h.smtp.waitFor(email, 1);
        const page = await (await fetch(h.local(linkIn(mail.text, '/confirm/')))).text();
        return { mail, page };
      };
      // Papers of the last days match: listed, each once, with the topic's name; the first digest may be on
      // its way, else it comes at the next 07:00 in Berlin (the harness clock: Tue 25 Nov 09:00 UTC).
      const some = await when('when@example.org', ['reinforcement learning', '"graph networks" OR diffusion']);
      expect(some.mail.text).toContain('When: Your digest comes every day at 07:00, Europe/Berlin.');
      expect(some.mail.html).toContain('every day at 07:00, Europe/Berlin');
      expect(some.page).toContain('your digest comes every day at 07:00, Europe/Berlin');
      expect(some.page).toContain('otherwise it comes tomorrow at 07:00, Europe/Berlin');
      expect(some.page).toContain('Already matching, from the last 3 days');
      expect(some.page).toContain('Self-play for reinforcement learning agents');
      expect(some.page).toContain('Graph networks revisited');
      expect(some.page).toContain('graph networks or diffusion');
      expect(some.page).not.toContain('Ancient reinforcement learning survey'); // its batch is of 1 Oct
      // Nothing matches yet: the first digest is the next slot.
      const none = await when('none@example.org', ['quantum chromodynamics']);
      expect(none.page).toContain('your first digest comes tomorrow at 07:00, Europe/Berlin, with the papers that match your topics by then');
      expect(none.page).not.toContain('Already matching');
    });

    it('confirms, and the watermark makes the first digest hold the last day of ingest', async () => {
      await subscribeAndConfirm('confirm@example.org', ['reinforcement learning']);
      const s = (await row('confirm@example.org'))!;
      expect(s.status).toBe('confirmed');
      // Papers 1-2 were ingested the day before; 3-4 (dated 2025-11-25) and 5 (a backfill dated 2025-10-01)
      // were ingested on the last day of ingest, so they come in the first digest: batch dates do not matter.
      const { w } = (await h.sql.get<{ w: number }>(`SELECT max(id) AS w FROM papers WHERE created_at < '2025-11-25'`))!;
      expect(w).toBe(2);
      expect(s.watermark).toBe(w);
    });

    it('refuses tampered, foreign, wrong-purpose and expired tokens with 4xx', async () => {
      await fetch(`${h.base}/subscribe`, json({ email: 'a@example.org', topics: ['llm'] }));
      await fetch(`${h.base}/subscribe`, json({ email: 'b@example.org', topics: ['llm'] }));
      const a = (await row('a@example.org'))!;
      const b = (await row('b@example.org'))!;
      const aConfirm = h.links.confirm({ id: a.id, tokenSalt: a.token_salt });
      const token = aConfirm.split('/').pop()!;

      const tampered = `${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`;
      const r1 = await fetch(`${h.base}/confirm/${tampered}`);
      expect(r1.status).toBe(403);
      expect(await r1.text()).toContain('This confirmation link is not valid');

      // A's signature with B's id: never acts on B.
      const foreign = token.replace(/^\d+\./, `${b.id}.`);
      expect((await fetch(`${h.base}/confirm/${foreign}`)).status).toBe(403);
      expect((await row('b@example.org'))!.status).toBe('pending');

      // A manage token is not a confirmation token.
      const manage = h.links.preferences({ id: a.id, tokenSalt: a.token_salt }).split('/').pop()!;
      expect((await fetch(`${h.base}/confirm/${manage}`)).status).toBe(403);
      expect((await fetch(`${h.base}/confirm/garbage`)).status).toBe(403);

      // Confirmation links expire after 7 days.
      h.clock.advance(8 * 24 * 3600 * 1000);
      const expired = await fetch(`${h.base}/confirm/${token}`);
      expect(expired.status).toBe(410);
      expect(await expired.text()).toContain('has expired');
      expect((await row('a@example.org'))!.status).toBe('pending');
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
        const s = (await row(email))!;
        const url = h.local(h.links.unsubscribe({ id: s.id, tokenSalt: s.token_salt }));

        const page = await fetch(url);
        expect(page.status).toBe(200);
        expect(await page.text()).toContain(`<form method="post" action="/unsubscribe/`);
        expect((await row(email))!.status).toBe('confirmed');

        const res = await fetch(url, init);
        expect(res.status, name).toBe(200);
        expect(await res.text()).toContain('is unsubscribed');
        expect((await row(email))!.status, name).toBe('unsubscribed');
      }
    });

    it('refuses a tampered one-click POST and changes nothing', async () => {
      await subscribeAndConfirm('stay@example.org', ['llm']);
      const s = (await row('stay@example.org'))!;
      const url = h.local(h.links.unsubscribe({ id: s.id, tokenSalt: 'not-the-salt' }));
      const res = await fetch(url, { method: 'POST', body: 'List-Unsubscribe=One-Click' });
      expect(res.status).toBe(403);
      expect((await row('stay@example.org'))!.status).toBe('confirmed');
    });

    it('asks to confirm again when an unsubscribed address subscribes again, and stays unsubscribed until then', async () => {
      const before = h.smtp.to('leave-text@example.org').length;
      h.clock.advance(61 * 60 * 1000);
      await fetch(`${h.base}/subscribe`, json({ email: 'leave-text@example.org', topics: ['agents'] }));
      expect((await row('leave-text@example.org'))!.status).toBe('unsubscribed');
      await h.smtp.waitFor('leave-text@example.org', before + 1);
    });
  });
});
