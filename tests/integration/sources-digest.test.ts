// A scheduler tick with real sources: Hugging Face and arXiv served by a local HTTP server, the app built
// by the composition root, a controlled clock, a real SMTP server. The same paper from both sources
// arrives once in the digest, with upvotes from Hugging Face and categories from arXiv; a second tick
// fetches nothing already final and sends nothing.
// On both engines (tests/engines.ts): on PostgreSQL the reader is copied into one schema for the file, and
// `digest run`'s tick fetches the sources into it (pipeline-postgres.ts) and sends from there.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEngineTestApp, type EngineTestApp } from '../helpers/engine-test-app.ts';
import { json, startFeedServer, xml, type FeedServer } from '../helpers/feed-server.ts';
import { forEachEngine } from '../helpers/on-engines.ts';
import type { TestApp } from '../helpers/test-app.ts';

const FEEDS = join(import.meta.dirname, '..', 'fixtures', 'feeds');
const feed = (name: string) => readFileSync(join(FEEDS, name), 'utf8');
const hf = (day: string) => `/api/daily_papers?date=${day}`;
const READER = 'reader@example.org';

forEachEngine('a tick with real sources', (engine) => {
  let server: FeedServer;
  let e: EngineTestApp;
  let t: TestApp;

  beforeAll(async () => {
    server = await startFeedServer();
    server.route(hf('2025-11-23'), json([]));
    server.route(hf('2025-11-24'), json(feed('hf-2025-11-24.json')));
    server.route(hf('2025-11-25'), json(feed('hf-2025-11-25.json')));
    server.route(hf('2025-11-26'), json({ error: 'Date is in the future' }, 400));
    server.route('/rss/cs.LG+cs.CL', xml(feed('arxiv-rss-cs.LG+cs.CL.xml')));
    e = await startEngineTestApp(
      engine,
      {
        SOURCES: 'hf,arxiv:cs.LG+cs.CL',
        HF_API_URL: `${server.url}/api/daily_papers`,
        ARXIV_RSS_URL: `${server.url}/rss`,
        SOURCE_LOOKBACK_DAYS: '3',
        FETCH_TIMEOUT_MS: '2000',
        ARXIV_MIN_INTERVAL_MS: '20',
      },
      '2025-11-26T06:00:00Z',
      async (app) => {
        await app.app.subscribers.subscribe(
          { email: READER, topics: ['"flow matching"', 'category:cs.RO', '"mixture of experts" OR MoE'] },
          { confirmed: true },
        );
      },
    );
    t = e.t;
  }, 60_000);

  afterAll(async () => {
    await e?.close();
    await server?.close();
  });

    it('fetches each missing day, merges the paper seen by both sources, and mails it once with why it matched', async () => {
      const report = await e.tick();
      expect(report.sources.filter((s) => s.status === 'ingested').map((s) => `${s.source} ${s.day}`)).toEqual([
        'hf 2025-11-24',
        'hf 2025-11-25',
        'arxiv:cs.LG+cs.CL 2025-11-24',
      ]);
      expect(report.send?.sent).toBe(1);

      const mail = await t.smtp.waitFor(READER);
      const text = mail.text;
      // 2511.17003 came from Hugging Face (17 upvotes) and arXiv (cs.LG, cs.RO): one entry, merged.
      expect(text.match(/Diffusion Policies with Flow Matching for Dexterous Manipulation/g)).toHaveLength(1);
      const entry = text.slice(text.indexOf('Diffusion Policies'), text.indexOf('Diffusion Policies') + 600);
      expect(entry).toMatch(/17 upvotes/);
      expect(entry).toContain('cs.RO');
      // The topics by name, not as query syntax.
      expect(entry).toMatch(/Matched: flow matching; cs\.RO/);
      // The mixture-of-experts paper matched the third topic; nothing else did.
      expect(text).toContain('Sparse Mixture of Experts Routers Are Secretly Clustering Algorithms');
      expect(text).not.toContain('Self-Play Fine-Tuning');
      // Two topics matched the merged paper, one the other: it comes first.
      expect(text.indexOf('Diffusion Policies')).toBeLessThan(text.indexOf('Sparse Mixture of Experts'));
    });

    it('a second tick an hour later fetches no settled day again and sends nothing', async () => {
      const hits = server.hits(hf('2025-11-24'));
      const before = t.smtp.messages.length;
      t.clock.advance(3_600_000);
      const report = await e.tick();
      expect(server.hits(hf('2025-11-24'))).toBe(hits);
      expect(report.sources.filter((s) => s.status === 'ingested')).toEqual([]);
      expect(report.send?.sent).toBe(0);
      expect(t.smtp.messages.length).toBe(before);
    });
});
