// The subscriber pages over a real listening server, a real SQLite file and a real SMTP server: the topic
// preview, the digest web view, request logs. (Preferences and mute, on both engines: web-preferences.test.ts.)
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { encodeItems } from '../../src/ledger/items.ts';
import { pruneLedger } from '../../src/ledger/retention.ts';
import { buildServer } from '../../src/web/server.ts';
import { seedBatch } from '../helpers/seed.ts';
import { sharedWebHarness, startWebHarness } from '../helpers/web-harness.ts';

const { h, row, subscribeAndConfirm } = sharedWebHarness({ SUBSCRIBE_RATE_LIMIT: '1000' });

describe('topic preview', () => {
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
    await subscribeAndConfirm('other-view@example.org', ['llm']);
    const other = row('other-view@example.org')!;
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
    await subscribeAndConfirm('logged@example.org', ['llm']);
    const app = buildServer({ ...h.core, logger });
    const s = row('logged@example.org')!;
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
