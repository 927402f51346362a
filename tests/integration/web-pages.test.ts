// The subscriber pages over a real listening server, a real SQLite file and a real SMTP server:
// preferences, mute, the topic preview, the digest web view, request logs.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { encodeItems } from '../../src/ledger/items.ts';
import { pruneLedger } from '../../src/ledger/retention.ts';
import { buildServer } from '../../src/web/server.ts';
import { seedBatch } from '../helpers/seed.ts';
import { formPost as form, jsonPost as json, sharedWebHarness, startWebHarness } from '../helpers/web-harness.ts';

const { h, row, subscribeAndConfirm } = sharedWebHarness({ SUBSCRIBE_RATE_LIMIT: '1000' });

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

  it('names a bad field by the label the form shows, and marks that field; JSON keeps the field name', async () => {
    await subscribeAndConfirm('labels@example.org', ['diffusion']);
    const s = row('labels@example.org')!;
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
    expect(h.subscribers.findByEmail('labels@example.org')!.pausedUntil).toBeNull();
  });

  it('answers a JSON client with the declared fields: the preferences as saved, or the refusal with its place', async () => {
    await subscribeAndConfirm('api-prefs@example.org', ['diffusion']);
    const s = row('api-prefs@example.org')!;
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
    const s = row('mute@example.org')!;
    const topic = h.subscribers.findByEmail('mute@example.org')!.topics[1]!;
    const subject = { id: s.id, tokenSalt: s.token_salt };
    const link = h.links.mute(subject, topic.id);
    // The subscriber's manage token and the topic: no signature of its own (links.ts mute()).
    expect(link).toBe(`${h.links.preferences(subject).replace('/preferences/', '/mute/')}/${topic.id}`);
    const url = h.local(link);
    const page = await fetch(url);
    const html = await page.text();
    expect(html).toContain('agents');
    expect(h.subscribers.findByEmail('mute@example.org')!.topics[1]!.muted).toBe(false);
    // The page's button posts to the link itself.
    const action = /<form method="post" action="([^"]+)"/.exec(html)![1]!;
    expect(`${h.base}${action}`).toBe(url);
    const res = await fetch(url, { method: 'POST' });
    expect(res.status).toBe(200);
    expect(h.subscribers.findByEmail('mute@example.org')!.topics.map((t) => t.muted)).toEqual([false, true]);

    // Another subscriber's topic id with this subscriber's token mutes nothing, and says no more than
    // for a topic deleted since (no other subscriber's topics to find).
    const other = h.subscribers.findByEmail('prefs@example.org')!.topics[0]!;
    const foreign = await fetch(h.local(h.links.mute(subject, other.id)), { method: 'POST' });
    expect(foreign.status).toBe(410);
    expect(h.subscribers.findByEmail('prefs@example.org')!.topics[0]!.muted).toBe(false);
    // A token altered by one character, or a token of another purpose with a topic id, is refused.
    const token = url.split('/').at(-2)!;
    const altered = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
    expect((await fetch(url.replace(token, altered), { method: 'POST' })).status).toBe(403);
    const feedToken = h.links.feed(subject).split('/').pop()!;
    expect((await fetch(url.replace(token, feedToken), { method: 'POST' })).status).toBe(403);
    expect((await fetch(`${url}x`)).status).toBe(400);

    // An email sent before carries a token that names the topic itself: it still mutes, from its own page.
    h.subscribers.updatePreferences(h.links.preferences(subject).split('/').pop()!, { topics: [{ text: 'llm', muted: false }, { text: 'agents', muted: false }] });
    expect(h.subscribers.findByEmail('mute@example.org')!.topics.map((t) => t.muted)).toEqual([false, false]);
    const old = `${h.base}/mute/${h.tokens.sign(subject, `mute:${topic.id}`)}`;
    const oldPage = await (await fetch(old)).text();
    expect(oldPage).toContain('Mute this topic');
    expect(`${h.base}${/<form method="post" action="([^"]+)"/.exec(oldPage)![1]!}`).toBe(old);
    expect((await fetch(old, { method: 'POST' })).status).toBe(200);
    expect(h.subscribers.findByEmail('mute@example.org')!.topics.map((t) => t.muted)).toEqual([false, true]);

    // After unsubscribing, the old email's mute link says so instead of offering to mute.
    const unsubscribe = h.local(h.links.unsubscribe({ id: s.id, tokenSalt: s.token_salt }));
    expect((await fetch(unsubscribe, { method: 'POST' })).status).toBe(200);
    const gone = await fetch(url);
    expect(gone.status).toBe(409);
    const text = await gone.text();
    expect(text).toContain('You are unsubscribed');
    expect(text).not.toContain('Mute this topic');
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

  it('answers the preview in its declared shape, and past the rate limit with a JSON 429', async () => {
    const limited = await startWebHarness({}, undefined, { web: { previewRateLimit: 2 } });
    try {
      const ask = () => fetch(`${limited.base}/api/topics/preview?q=${encodeURIComponent('reinforcement learning')}`);
      const first = (await (await ask()).json()) as Record<string, unknown>;
      expect(first.ok).toBe(true);
      expect(Object.keys(first).every((k) => ['ok', 'total', 'perDay', 'papers'].includes(k))).toBe(true);
      expect((await ask()).status).toBe(200);
      const refused = await ask();
      expect(refused.status).toBe(429);
      expect(await refused.json()).toEqual({ ok: false, code: 'RATE_LIMITED', error: expect.stringMatching(/^Too many previews; try again in /) });
    } finally {
      await limited.close();
    }
  });

  it('shows the part of a long abstract where the topic matched', async () => {
    const filler = 'Background sentence about unrelated methods and datasets. '.repeat(20);
    seedBatch(h.tmp.db, '2025-11-25', [{ title: 'A long one', abstract: `${filler}Here we study hypernetworks in depth. ${filler}` }]);
    const body = (await (await fetch(`${h.base}/api/topics/preview?q=hypernetworks`)).json()) as {
      papers: Array<{ abstractHtml: string }>;
    };
    const html = body.papers[0]!.abstractHtml;
    expect(html.startsWith('… ')).toBe(true);
    expect(html.endsWith(' …')).toBe(true);
    expect(html).toContain('study <mark>hypernetworks</mark> in depth');
    expect(html.length).toBeLessThan(400);
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
          `INSERT INTO digests (subscriber_id, edition, status, from_paper, to_paper, topic_ids, items, paper_count, planned_at)
           VALUES (?, '2025-11-25', 'sent', 0, ?, ?, ?, 1, ?)`,
        )
        .run(s.id, paper.id, String(topic.id), encodeItems([{ paperId: paper.id, topicBits: [0] }], 0), h.clock.now().toISOString())
        .lastInsertRowid,
    );
    const res = await fetch(h.local(h.links.webView({ id: s.id, tokenSalt: s.token_salt }, digestId)));
    expect(res.status).toBe(200);
    const text = (await res.text()).replace(/<[^>]+>/g, '');
    expect(text).toContain('Mixture of experts at scale');
    expect(res.headers.get('content-security-policy')).not.toContain('script-src');

    // Another subscriber's valid token naming this digest id is refused.
    const other = row('prefs@example.org')!;
    const foreign = await fetch(h.local(h.links.webView({ id: other.id, tokenSalt: other.token_salt }, digestId)));
    expect(foreign.status).toBe(404);
    expect((await fetch(`${h.base}/digests/1.view-1.0.abc`)).status).toBe(403);

    // After DIGEST_RETENTION_DAYS the paper list is pruned: the page says the digest expired.
    const later = { now: () => new Date(h.clock.now().getTime() + 91 * 86_400_000) };
    expect(await pruneLedger(h.tmp.db, later, 90)).toBeGreaterThanOrEqual(1);
    const expired = await fetch(h.local(h.links.webView({ id: s.id, tokenSalt: s.token_salt }, digestId)));
    expect(expired.status).toBe(200);
    const expiredText = (await expired.text()).replace(/<[^>]+>/g, '');
    expect(expiredText).toContain('This digest has expired');
    expect(expiredText).not.toContain('Mixture of experts at scale');
    expect(h.tmp.db.prepare(`SELECT status FROM digests WHERE id = ?`).get(digestId)).toEqual({ status: 'sent' }); // history kept
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
    const app = buildServer({ ...h.core, logger });
    const s = row('prefs@example.org')!;
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
