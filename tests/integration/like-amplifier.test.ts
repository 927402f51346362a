// like: lookups cannot make one anonymous request into many arXiv requests (the arXiv query API is a
// real local HTTP server that records every request): a request may ask for at most a few papers the
// database lacks, an id arXiv does not know is not asked again, a slow lookup finishes in the background
// while the request answers 503 + Retry-After, and the lookups and the paper sources share one spacer.
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ingestBatch } from '../../src/ingest/ingest.ts';
import { readBatchFile } from '../../src/ingest/readers/batch.ts';
import { LIKE_LOOKUPS_PER_REQUEST } from '../../src/match/like/lookups.ts';
import { fetchSources } from '../../src/pipeline.ts';
import { startFeedServer, xml, type FeedServer } from '../helpers/feed-server.ts';
import { jsonPost, startWebHarness, type WebHarness } from '../helpers/web-harness.ts';

const API_QUERY = readFileSync(new URL('../fixtures/feeds/arxiv-api-query.xml', import.meta.url), 'utf8');
const API_EMPTY = API_QUERY.replace(/<entry>[\s\S]*<\/entry>/, '');
const SAMPLE = JSON.parse(readFileSync(new URL('../../samples/daily-papers-sample.json', import.meta.url), 'utf8'));

let feeds: FeedServer;
const open: WebHarness[] = [];
beforeAll(async () => {
  feeds = await startFeedServer();
});
afterEach(async () => {
  for (const h of open.splice(0)) await h.close();
});
afterAll(async () => {
  await feeds.close();
});

async function harness(env: Record<string, string> = {}): Promise<WebHarness> {
  const h = await startWebHarness({ ARXIV_API_URL: `${feeds.url}/api/query`, ARXIV_MIN_INTERVAL_MS: '0', FETCH_RETRIES: '0', ...env });
  open.push(h);
  return h;
}
const arxivRequests = () => feeds.requests.filter((r) => r.target.startsWith('/api/query'));

describe('like: lookups are bounded', () => {
  it('100 unknown examples in one request: refused at once, arXiv never asked, nothing stored', async () => {
    const h = await harness();
    feeds.route('/api/query', xml(API_EMPTY));
    const before = arxivRequests().length;
    const topics = Array.from({ length: 20 }, (_, t) => `like:${Array.from({ length: 5 }, (_, i) => `2501.${String(10_000 + t * 5 + i)}`).join(',')}`);
    const r = await fetch(`${h.base}/subscribe`, jsonPost({ email: 'amp@example.org', topics }));
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: string }).error).toMatch(
      new RegExp(`^like: 100 example papers are not in this digest's database; at most ${LIKE_LOOKUPS_PER_REQUEST} can be looked up`),
    );
    expect(arxivRequests().length).toBe(before);
    expect(h.core.db.prepare('SELECT count(*) AS n FROM like_examples').get()).toEqual({ n: 0 });
    expect(h.core.db.prepare("SELECT count(*) AS n FROM subscribers WHERE email = 'amp@example.org'").get()).toEqual({ n: 0 });
  });

  it('an id arXiv does not know is asked once, however often it is posted', async () => {
    const h = await harness();
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
    const h = await harness({ LIKE_LOOKUP_WAIT_MS: '100' });
    ingestBatch(h.core.db, readBatchFile(SAMPLE), h.clock);
    feeds.route('/api/query', { ...xml(API_QUERY), delayMs: 600 });
    const before = arxivRequests().length;
    const first = await fetch(`${h.base}/subscribe`, jsonPost({ email: 'slow@example.org', topics: ['like:2501.00010'] }));
    expect(first.status).toBe(503);
    expect(first.headers.get('retry-after')).toBe('60');
    expect(((await first.json()) as { error: string }).error).toMatch(/still looking like:2501\.00010 up on arXiv; try again in a minute/);
    expect(h.core.db.prepare("SELECT count(*) AS n FROM subscribers WHERE email = 'slow@example.org'").get()).toEqual({ n: 0 });
    await expect.poll(() => h.core.db.prepare('SELECT paper_key FROM like_examples').all(), { timeout: 3000 }).toEqual([{ paper_key: '2501.00010' }]);
    const again = await fetch(`${h.base}/subscribe`, jsonPost({ email: 'slow@example.org', topics: ['like:2501.00010'] }));
    expect(again.status).toBe(202);
    expect(arxivRequests().length - before).toBe(1);
  });
});

describe('one spacer for the process', () => {
  it('like: lookups and the arXiv source keep ARXIV_MIN_INTERVAL_MS between all their requests', async () => {
    const interval = 300;
    const h = await harness({ ARXIV_MIN_INTERVAL_MS: String(interval), SOURCES: 'arxiv-api:cs.LG', SOURCE_LOOKBACK_DAYS: '2' });
    ingestBatch(h.core.db, readBatchFile(SAMPLE), h.clock);
    feeds.route('/api/query', xml(API_QUERY));
    const before = arxivRequests().length;
    const poll = fetchSources(h.core);
    const likes = Promise.all(
      ['2501.00010', '2501.00011'].map((id, i) => fetch(`${h.base}/subscribe`, jsonPost({ email: `spaced${i}@example.org`, topics: [`like:${id}`] }))),
    );
    await Promise.all([poll, likes]);
    const times = arxivRequests().slice(before).map((r) => r.at);
    expect(times.length).toBeGreaterThanOrEqual(3); // the source's day or days, and two lookups
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(interval - 15);
  });
});
