// like: topics through the web, as a reader types them: the subscribe form refuses an id
// that neither the database nor arXiv knows with a clear message (the arXiv query API is a real local
// HTTP server), the topic builder says the same, and a known paper is looked up and accepted.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestBatch } from '../../src/ingest/ingest.ts';
import { readBatchFile } from '../../src/ingest/readers/batch.ts';
import { startFeedServer, xml, type FeedServer } from '../helpers/feed-server.ts';
import { jsonPost, startWebHarness, type WebHarness } from '../helpers/web-harness.ts';

const API_QUERY = readFileSync(new URL('../fixtures/feeds/arxiv-api-query.xml', import.meta.url), 'utf8');
const API_EMPTY = API_QUERY.replace(/<entry>[\s\S]*<\/entry>/, '');

let h: WebHarness;
let feeds: FeedServer;

beforeAll(async () => {
  feeds = await startFeedServer();
  h = await startWebHarness({ ARXIV_API_URL: `${feeds.url}/api/query`, ARXIV_MIN_INTERVAL_MS: '0', FETCH_RETRIES: '0' });
});
afterAll(async () => {
  await h.close();
  await feeds.close();
});

describe('like: from the web', () => {
  it('refuses an unknown paper with a message naming it, and subscribes nobody', async () => {
    feeds.route('/api/query', xml(API_EMPTY));
    const r = await fetch(`${h.base}/subscribe`, jsonPost({ email: 'new@example.org', topics: ['like:2501.99999'] }));
    expect(r.status).toBe(400);
    const body = (await r.json()) as { error: string; field: string };
    expect(body.field).toBe('topics');
    expect(body.error).toBe(
      "like:2501.99999: paper 2501.99999 is not in this digest's database and arXiv does not know it either; check the id or use another example",
    );
    expect(h.core.db.prepare("SELECT count(*) AS n FROM subscribers WHERE email = 'new@example.org'").get()).toEqual({ n: 0 });
  });

  it('the topic builder answers the same for an example it does not have', async () => {
    const r = (await (await fetch(`${h.base}/api/topics/preview?q=${encodeURIComponent('like:2501.99999')}`)).json()) as {
      ok: boolean;
      error: string;
    };
    expect(r).toEqual({ ok: false, error: expect.stringMatching(/^like:2501\.99999: paper 2501\.99999 is not in this digest's database/), position: null });
  });

  it('on an empty database, says the example has nothing in common with any paper yet', async () => {
    feeds.route('/api/query', xml(API_QUERY));
    const r = await fetch(`${h.base}/subscribe`, jsonPost({ email: 'new@example.org', topics: ['like:2501.00010'] }));
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: string }).error).toBe(
      'like:2501.00010: the example has no word that any other paper uses yet; try another example',
    );
  });

  it('looks a known paper up on arXiv and saves the topic', async () => {
    feeds.route('/api/query', xml(API_QUERY));
    ingestBatch(h.core.db, readBatchFile(JSON.parse(readFileSync(new URL('../../samples/daily-papers-sample.json', import.meta.url), 'utf8'))), h.clock);
    const r = await fetch(`${h.base}/subscribe`, jsonPost({ email: 'new@example.org', topics: ['like:2501.00010'] }));
    expect(r.status).toBeLessThan(300);
    expect(h.core.db.prepare("SELECT text FROM topics t JOIN subscribers s ON s.id = t.subscriber_id WHERE s.email = 'new@example.org'").all()).toEqual([
      { text: 'like:2501.00010' },
    ]);
    expect(h.core.db.prepare('SELECT paper_key FROM like_examples').all()).toEqual([{ paper_key: '2501.00010' }]);
  });
});
