// The reader's preferences and mute links over a real listening server and a real SMTP server, on both
// engines (the SQLite file; PostgreSQL's door as `digest serve` serves it with DATABASE_URL): topics,
// hour, time zone, frequency and pause from the form and from JSON, a bad field named as the form labels
// it, and a mute only on POST, whatever the token's age. What is saved is read back from the store.
import { describe, expect, it } from 'vitest';
import { forEachEngine } from '../helpers/on-engines.ts';
import { formPost as form, jsonPost as json, sharedWebHarness } from '../helpers/web-harness.ts';

interface Stored {
  topics: Array<{ id: number; text: string; muted: boolean }>;
  deliveryHour: number;
  timezone: string;
  frequency: string;
  weeklyDay: number;
  pausedUntil: string | null;
}

forEachEngine('preferences and mute', (engine) => {
  const { h, rowOn: row, subscribeAndConfirm } = sharedWebHarness({ SUBSCRIBE_RATE_LIMIT: '1000' }, { engine });

  /** The subscriber's settings and topics as the store holds them. */
  const stored = async (email: string): Promise<Stored> => {
    const s = (await h.sql.get<Omit<Stored, 'topics'>>(
      'SELECT delivery_hour AS "deliveryHour", timezone, frequency, weekly_day AS "weeklyDay", paused_until AS "pausedUntil" FROM subscribers WHERE lower(email) = lower(?)',
      email,
    ))!;
    const topics = await h.sql.all<{ id: number; text: string; muted: number }>(
      'SELECT t.id, t.text, t.muted FROM topics t JOIN subscribers s ON s.id = t.subscriber_id WHERE lower(s.email) = lower(?) ORDER BY t.position',
      email,
    );
    return { ...s, topics: topics.map((t) => ({ id: Number(t.id), text: t.text, muted: Number(t.muted) === 1 })) };
  };

  describe('preferences and mute', () => {
    it('edits topics, hour, time zone, frequency and pause from the form', async () => {
      await subscribeAndConfirm('prefs@example.org', ['diffusion', 'graph networks']);
      const s = (await row('prefs@example.org'))!;
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
      const after = (await stored('prefs@example.org'));
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
      expect((await stored('prefs@example.org')).deliveryHour).toBe(18);
      const badTz = await fetch(url, json({ timezone: 'Nowhere/Land' }));
      expect(badTz.status).toBe(400);
      expect(((await badTz.json()) as { field: string }).field).toBe('timezone');
    });

    it('names a bad field by the label the form shows, and marks that field; JSON keeps the field name', async () => {
      await subscribeAndConfirm('labels@example.org', ['diffusion']);
      const s = (await row('labels@example.org'))!;
      const url = h.local(h.links.preferences({ id: s.id, tokenSalt: s.token_salt }));
      const text = (html: string) => html.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');

      const pause = await fetch(url, form([['topics', 'diffusion'], ['pauseDays', '400']]));
      expect(pause.status).toBe(400);
      const pausePage = await pause.text();
      expect(text(pausePage)).toContain('Pause deliveries for (days): must be a whole number of days from 0 to 365');
      expect(pausePage).not.toContain('pauseDays:');
      expect(pausePage).toMatch(/<div class="field has-error">\s*<label for="pauseDays">/);

      const cap = await fetch(url, form([['topics', 'diffusion'], ['maxPapers', '9999'], ['learning', '1']]));
      expect(cap.status).toBe(400);
      const capPage = await cap.text();
      expect(text(capPage)).toContain('Most papers per email: must be a whole number from 1 to');
      expect(capPage).toMatch(/<div class="field has-error">\s*<label for="maxPapers">/);

      const api = await fetch(url, json({ pauseDays: 400 }));
      expect(api.status).toBe(400);
      expect(await api.json()).toMatchObject({ field: 'pauseDays', error: expect.stringMatching(/^pauseDays: must be a whole number/) });
      expect((await stored('labels@example.org')).pausedUntil).toBeNull();
    });

    it('answers a JSON client with the declared fields: the preferences as saved, or the refusal with its place', async () => {
      await subscribeAndConfirm('api-prefs@example.org', ['diffusion']);
      const s = (await row('api-prefs@example.org'))!;
      const url = h.local(h.links.preferences({ id: s.id, tokenSalt: s.token_salt }));
      const saved = await fetch(url, json({ deliveryHour: 9, topics: ['diffusion', 'graph networks'] }));
      expect(saved.status).toBe(200);
      const body = (await saved.json()) as { ok: boolean; preferences: Record<string, unknown> };
      expect(Object.keys(body).sort()).toEqual(['ok', 'preferences']);
      expect(Object.keys(body.preferences).sort()).toEqual(
        ['deliveryHour', 'email', 'feedUrl', 'frequency', 'lastSlot', 'maxPapers', 'modelOnly', 'pausedUntil', 'preferencesUrl', 'status', 'suggestions', 'timezone', 'topics', 'unsubscribeUrl', 'weeklyDay'],
      );
      expect(body.preferences).toMatchObject({ email: 'api-prefs@example.org', deliveryHour: 9, topics: [{ text: 'diffusion', muted: false }, { text: 'graph networks', muted: false }] });

      const refused = await fetch(url, json({ topics: ['ok', 'llm "agents'] }));
      expect(refused.status).toBe(400);
      expect(await refused.json()).toEqual({ ok: false, code: 'TOPIC_INVALID', error: expect.stringMatching(/^topic 2: /), field: 'topics', topic: 2, position: expect.any(Number) });
    });

    it('mutes a topic only on POST (the GET page just asks)', async () => {
      await subscribeAndConfirm('mute@example.org', ['llm', 'agents']);
      const s = (await row('mute@example.org'))!;
      const topic = (await stored('mute@example.org')).topics[1]!;
      const subject = { id: s.id, tokenSalt: s.token_salt };
      const link = h.links.mute(subject, topic.id);
      // The subscriber's manage token and the topic: no signature of its own (links.ts mute()).
      expect(link).toBe(`${h.links.preferences(subject).replace('/preferences/', '/mute/')}/${topic.id}`);
      const url = h.local(link);
      const page = await fetch(url);
      const html = await page.text();
      expect(html).toContain('agents');
      expect((await stored('mute@example.org')).topics[1]!.muted).toBe(false);
      // The page's button posts to the link itself.
      const action = /<form method="post" action="([^"]+)"/.exec(html)![1]!;
      expect(`${h.base}${action}`).toBe(url);
      const res = await fetch(url, { method: 'POST' });
      expect(res.status).toBe(200);
      expect((await stored('mute@example.org')).topics.map((t) => t.muted)).toEqual([false, true]);

      // Another subscriber's topic id with this subscriber's token mutes nothing, and says no more than
      // for a topic deleted since (no other subscriber's topics to find).
      const other = (await stored('prefs@example.org')).topics[0]!;
      const foreign = await fetch(h.local(h.links.mute(subject, other.id)), { method: 'POST' });
      expect(foreign.status).toBe(410);
      expect((await stored('prefs@example.org')).topics[0]!.muted).toBe(false);
      // A token altered by one character, or a token of another purpose with a topic id, is refused.
      const token = url.split('/').at(-2)!;
      const altered = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
      expect((await fetch(url.replace(token, altered), { method: 'POST' })).status).toBe(403);
      const feedToken = h.links.feed(subject).split('/').pop()!;
      expect((await fetch(url.replace(token, feedToken), { method: 'POST' })).status).toBe(403);
      expect((await fetch(`${url}x`)).status).toBe(400);

      // An email sent before carries a token that names the topic itself: it still mutes, from its own page.
      await h.door.updatePreferences(h.links.preferences(subject).split('/').pop()!, { topics: [{ text: 'llm', muted: false }, { text: 'agents', muted: false }] });
      expect((await stored('mute@example.org')).topics.map((t) => t.muted)).toEqual([false, false]);
      const old = `${h.base}/mute/${h.tokens.sign(subject, `mute:${topic.id}`)}`;
      const oldPage = await (await fetch(old)).text();
      expect(oldPage).toContain('Mute this topic');
      expect(`${h.base}${/<form method="post" action="([^"]+)"/.exec(oldPage)![1]!}`).toBe(old);
      expect((await fetch(old, { method: 'POST' })).status).toBe(200);
      expect((await stored('mute@example.org')).topics.map((t) => t.muted)).toEqual([false, true]);

      // After unsubscribing, the old email's mute link says so instead of offering to mute.
      const unsubscribe = h.local(h.links.unsubscribe({ id: s.id, tokenSalt: s.token_salt }));
      expect((await fetch(unsubscribe, { method: 'POST' })).status).toBe(200);
      const gone = await fetch(url);
      expect(gone.status).toBe(409);
      const text = await gone.text();
      expect(text).toContain('You are unsubscribed');
      expect(text).not.toContain('Mute this topic');
    });
  });
});
