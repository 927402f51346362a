// like: lookups cannot make one anonymous request into many arXiv requests (the arXiv query API is a
// real local HTTP server that records every request): a request may ask for at most a few papers the
// database lacks, an id arXiv does not know is not asked again, a slow lookup finishes in the background
// while the request answers 503 + Retry-After, and the lookups and the paper sources share one spacer.
// On both engines: the web serves the engine's store (on PostgreSQL the door's lookups store their
// examples there), and the source is polled through the console's "fetch now", which on PostgreSQL
// ingests into PostgreSQL with the process's one spacer, as a serve tick does.
// One harness per engine (one migrated schema for the file): each story uses its own ids and addresses.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestBatch } from '../../src/ingest/ingest.ts';
import { readBatchFile } from '../../src/ingest/readers/batch.ts';
import { LIKE_LOOKUPS_PER_REQUEST } from '../../src/match/like/lookups.ts';
import { servedWebDeps } from '../../src/serve.ts';
import { startFeedServer, xml, type FeedServer } from '../helpers/feed-server.ts';
import { forEachEngine } from '../helpers/on-engines.ts';
import { TEST_NOW } from '../helpers/test-app.ts';
import { jsonPost, startWebHarness, type WebHarness } from '../helpers/web-harness.ts';

const API_QUERY = readFileSync(new URL('../fixtures/feeds/arxiv-api-query.xml', import.meta.url), 'utf8');
const API_EMPTY = API_QUERY.replace(/<entry>[\s\S]*<\/entry>/, '');
const SAMPLE = JSON.parse(readFileSync(new URL('../../samples/daily-papers-sample.json', import.meta.url), 'utf8'));
/** A request waits this long for its lookups; the slow story's arXiv answers after SLOW_MS. */
const WAIT_MS = 1500;
const SLOW_MS = 3000;
const INTERVAL_MS = 300;

let feeds: FeedServer;
beforeAll(async () => {
  feeds = await startFeedServer();
});
afterAll(async () => {
  await feeds.close();
});
const arxivRequests = () => feeds.requests.filter((r) => r.target.startsWith('/api/query'));

forEachEngine('like: lookups', (engine) => {
  let h: WebHarness;
  beforeAll(async () => {
    h = await startWebHarness(
      {
        ARXIV_API_URL: `${feeds.url}/api/query`,
        ARXIV_MIN_INTERVAL_MS: String(INTERVAL_MS),
        FETCH_RETRIES: '0',
        LIKE_LOOKUP_WAIT_MS: String(WAIT_MS),
        SOURCES: 'arxiv-api:cs.LG',
        SOURCE_LOOKBACK_DAYS: '2',
        SUBSCRIBE_RATE_LIMIT: '1000',
      },
      TEST_NOW,
      // The sample's papers give the examples' words something to match (on PostgreSQL: copied there).
      { engine, seed: (_tmp, core) => void ingestBatch(core.db, readBatchFile(SAMPLE), core.clock) },
    );
  });
  afterAll(async () => {
    await h?.close();
  });

  const count = async (sql: string, ...params: unknown[]) => Number((await h.sql.get<{ n: number | string }>(sql, ...params))!.n);
  const subscriberCount = (email: string) => count('SELECT count(*) AS n FROM subscribers WHERE lower(email) = lower(?)', email);

  describe('lookups are bounded', () => {
    it('100 unknown examples in one request: refused at once, arXiv never asked, nothing stored', async () => {
      feeds.route('/api/query', xml(API_EMPTY));
      const before = arxivRequests().length;
      const examples = await count('SELECT count(*) AS n FROM like_examples');
      const topics = Array.from({ length: 20 }, (_, t) => `like:${Array.from({ length: 5 }, (_, i) => `2501.${String(10_000 + t * 5 + i)}`).join(',')}`);
      const r = await fetch(`${h.base}/subscribe`, jsonPost({ email: 'amp@example.org', topics }));
      expect(r.status).toBe(400);
      expect(((await r.json()) as { error: string }).error).toMatch(
        new RegExp(`^like: 100 example papers are not in this digest's database; at most ${LIKE_LOOKUPS_PER_REQUEST} can be looked up`),
      );
      expect(arxivRequests().length).toBe(before);
      expect(await count('SELECT count(*) AS n FROM like_examples')).toBe(examples);
      expect(await subscriberCount('amp@example.org')).toBe(0);
    });

    it('an id arXiv does not know is asked once, however often it is posted', async () => {
      feeds.route('/api/query', xml(API_EMPTY));
      const before = arxivRequests().length;
      for (let i = 0; i < 5; i++) {
        const r = await fetch(`${h.base}/subscribe`, jsonPost({ email: `again${i}@example.org`, topics: ['like:2501.99999'] }));
        expect(r.status).toBe(400);
        expect(((await r.json()) as { error: string }).error).toContain('arXiv does not know it either');
      }
      expect(arxivRequests().length - before).toBe(1);
    });

    it('a slow lookup: the request answers 503 + Retry-After, the lookup finishes in the background, the retry saves', async () => {
      feeds.route('/api/query', { ...xml(API_QUERY), delayMs: SLOW_MS });
      const before = arxivRequests().length;
      const first = await fetch(`${h.base}/subscribe`, jsonPost({ email: 'slow@example.org', topics: ['like:2501.00010'] }));
      expect(first.status).toBe(503);
      expect(first.headers.get('retry-after')).toBe('60');
      expect(((await first.json()) as { error: string }).error).toMatch(/still looking like:2501\.00010 up on arXiv; try again in a minute/);
      expect(await subscriberCount('slow@example.org')).toBe(0);
      await expect
        .poll(() => h.sql.all("SELECT paper_key FROM like_examples WHERE paper_key = '2501.00010'"), { timeout: 10_000 })
        .toEqual([{ paper_key: '2501.00010' }]);
      const again = await fetch(`${h.base}/subscribe`, jsonPost({ email: 'slow@example.org', topics: ['like:2501.00010'] }));
      expect(again.status).toBe(202);
      expect(await subscriberCount('slow@example.org')).toBe(1);
      expect(arxivRequests().length - before).toBe(1);
    });
  });

  describe('one spacer for the process', () => {
    it('like: lookups and the arXiv source keep ARXIV_MIN_INTERVAL_MS between all their requests', async () => {
      feeds.route('/api/query', xml(API_QUERY));
      const before = arxivRequests().length;
      const papers = await count('SELECT count(*) AS n FROM papers');
      // "Fetch now" as `digest serve` serves it: on PostgreSQL its poll ingests there.
      const poll = servedWebDeps(h.core, h.pg).console!.fetchSources();
      // Ids no story here has looked up: each is one request to arXiv (which knows neither). A reader
      // whose lookup outlasts LIKE_LOOKUP_WAIT_MS behind the source's requests asks again, as told (503):
      // the lookup in flight is joined, not repeated.
      const likes = Promise.all(['2501.00012', '2501.00013'].map((id, i) => subscribeAnswered(`spaced${i}@example.org`, id)));
      const [polled, answers] = await Promise.all([poll, likes]);
      for (const a of answers) expect(a).toMatchObject({ status: 400, error: expect.stringContaining('arXiv does not know it either') });
      expect(polled.length).toBeGreaterThanOrEqual(1);
      // The source's papers are in the engine's store (the fixture's two entries).
      expect(await count('SELECT count(*) AS n FROM papers')).toBeGreaterThan(papers);
      const times = arxivRequests().slice(before).map((r) => r.at);
      expect(times.length).toBeGreaterThanOrEqual(3); // the source's day or days, and two lookups
      const gaps = times.slice(1).map((t, i) => t - times[i]!);
      for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(INTERVAL_MS - 15);
    });
  });

  async function subscribeAnswered(email: string, id: string): Promise<{ status: number; error: string }> {
    for (let attempt = 0; attempt < 50; attempt++) {
      const r = await fetch(`${h.base}/subscribe`, jsonPost({ email, topics: [`like:${id}`] }));
      const error = r.status === 202 ? '' : ((await r.json()) as { error: string }).error;
      if (r.status !== 503) return { status: r.status, error };
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`like:${id} still 503 after 50 tries`);
  }
});
