// fetchText and loadInput against a real local HTTP server with scripted faults.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { fetchText, HostSpacer, type FetchOptions } from '../../src/ingest/fetch.ts';
import { loadInput } from '../../src/ingest/load.ts';
import { silentLogger } from '../../src/log.ts';
import { json, startFeedServer, xml, type FeedServer } from '../helpers/feed-server.ts';

const FEEDS = join(import.meta.dirname, '..', 'fixtures', 'feeds');
const feed = (name: string) => readFileSync(join(FEEDS, name), 'utf8');

let server: FeedServer;
beforeAll(async () => {
  server = await startFeedServer();
});
afterAll(async () => {
  await server.close();
});

const opts = (over: Partial<FetchOptions> = {}): FetchOptions => ({ timeoutMs: 300, retries: 2, logger: silentLogger, backoffMs: 10, ...over });

describe('fetchText', () => {
  it('retries a 500 and answers the 200 that follows', async () => {
    server.route('/flaky', { status: 500, body: 'oops' }, { status: 503, body: 'busy' }, { body: 'fine' });
    const r = await fetchText(`${server.url}/flaky`, opts());
    expect(r).toMatchObject({ status: 200, text: 'fine' });
    expect(server.hits('/flaky')).toBe(3);
  });

  it('gives up after the last retry with a temporary error naming the status', async () => {
    server.route('/down', { status: 502, body: 'bad gateway' });
    await expect(fetchText(`${server.url}/down`, opts({ retries: 1 }))).rejects.toMatchObject({
      code: 'FETCH_HTTP_ERROR',
      temporary: true,
      message: `GET ${server.url}/down answered HTTP 502 (after 2 attempts)`,
    });
    expect(server.hits('/down')).toBe(2);
  });

  it('does not retry a 4xx: the caller gets the status', async () => {
    server.route('/future', json({ error: 'Date is in the future' }, 400));
    const r = await fetchText(`${server.url}/future`, opts());
    expect(r.status).toBe(400);
    expect(r.text).toContain('future');
    expect(server.hits('/future')).toBe(1);
  });

  it('retries a 429, honouring Retry-After', async () => {
    server.route('/limited', { status: 429, headers: { 'retry-after': '0' } }, { body: 'ok' });
    expect((await fetchText(`${server.url}/limited`, opts())).text).toBe('ok');
    expect(server.hits('/limited')).toBe(2);
  });

  it('times out a slow answer and a stalled body, per attempt', async () => {
    server.route('/slow', { delayMs: 2_000, body: 'too late' });
    await expect(fetchText(`${server.url}/slow`, opts({ timeoutMs: 150, retries: 1 }))).rejects.toMatchObject({
      code: 'FETCH_TIMEOUT',
      temporary: true,
    });
    expect(server.hits('/slow')).toBe(2);
    expect(server.answered('/slow')).toBe(0); // each attempt gave up before its answer came, not after it

    server.route('/stall', { stallBodyMs: 2_000, body: 'x'.repeat(1000) }, { body: 'whole' });
    expect((await fetchText(`${server.url}/stall`, opts({ timeoutMs: 150 }))).text).toBe('whole');
  });

  it('retries a dropped connection and a body cut short', async () => {
    server.route('/drop', { drop: true }, { dropAfterBytes: 10, body: 'a long body that is cut' }, { body: 'recovered' });
    expect((await fetchText(`${server.url}/drop`, opts())).text).toBe('recovered');
    expect(server.hits('/drop')).toBe(3);
    server.route('/always-drop', { drop: true });
    await expect(fetchText(`${server.url}/always-drop`, opts({ retries: 1 }))).rejects.toMatchObject({ code: 'FETCH_FAILED' });
  });

  it('stops at once when aborted', async () => {
    server.route('/hang', { delayMs: 5_000 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    await expect(fetchText(`${server.url}/hang`, opts({ timeoutMs: 10_000, signal: controller.signal }))).rejects.toMatchObject({
      code: 'FETCH_ABORTED',
    });
    expect(server.answered('/hang')).toBe(0); // stopped at the abort, not once the answer came
  });

  it('refuses a body over the size limit', async () => {
    server.route('/huge', { body: 'y'.repeat(5_000) });
    await expect(fetchText(`${server.url}/huge`, opts({ maxBytes: 1_000 }))).rejects.toMatchObject({ code: 'FETCH_TOO_LARGE' });
  });

  it('spaces requests to the same host, retries included', async () => {
    server.route('/spaced', { status: 500 }, { body: 'a' });
    const spacer = HostSpacer.fromTable({ [new URL(server.url).host]: 120 });
    await fetchText(`${server.url}/spaced`, opts({ spacer, backoffMs: 1 }));
    await fetchText(`${server.url}/spaced`, opts({ spacer }));
    const times = server.requests.filter((r) => r.target === '/spaced').map((r) => r.at);
    expect(times).toHaveLength(3);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(119);
    expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(119);
  });
});

describe('HostSpacer', () => {
  it('spaces one host and leaves others alone', async () => {
    const spacer = HostSpacer.fromTable({ 'export.arxiv.org': 100 });
    // Without a timer: settled before a setImmediate queued at the same time (any timer runs after it).
    const timerless = (p: Promise<unknown>) => Promise.race([p.then(() => 'at once'), new Promise((r) => setImmediate(() => r('waited')))]);
    const t0 = Date.now();
    expect(await timerless(spacer.wait('export.arxiv.org'))).toBe('at once');
    expect(await timerless(spacer.wait('huggingface.co'))).toBe('at once');
    expect(await timerless(spacer.wait('huggingface.co'))).toBe('at once');
    expect(await timerless(spacer.wait('export.arxiv.org'))).toBe('waited');
    await spacer.wait('huggingface.co');
    await spacer.wait('export.arxiv.org');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(195);
  });
});

describe('loadInput', () => {
  const config = loadConfig({ FETCH_TIMEOUT_MS: '500', FETCH_RETRIES: '1', ARXIV_MIN_INTERVAL_MS: '0' });
  const deps = { config, logger: silentLogger, backoffMs: 10 };

  it('fetches a Hugging Face URL, taking the day from its date parameter', async () => {
    server.route('/api/daily_papers?date=2025-11-24', json(feed('hf-2025-11-24.json')));
    const b = await loadInput(`${server.url}/api/daily_papers?date=2025-11-24`, 'auto', deps);
    expect(b).toMatchObject({ source: 'hf', date: '2025-11-24' });
    expect(b.papers).toHaveLength(3);
  });

  it('fetches an arXiv feed and detects its format', async () => {
    server.route('/rss/cs.LG+cs.CL', xml(feed('arxiv-rss-cs.LG+cs.CL.xml')));
    const b = await loadInput(`${server.url}/rss/cs.LG+cs.CL`, 'auto', { ...deps, source: 'my-arxiv' });
    expect(b).toMatchObject({ source: 'my-arxiv', date: '2025-11-24' });
    expect(b.papers.map((p) => p.key)).toEqual(['2511.17003', '2511.17010']);
  });

  it('reads a file', async () => {
    const b = await loadInput(join(FEEDS, 'arxiv-atom-cs.LG.xml'), 'arxiv', deps);
    expect(b.papers.map((p) => p.key)).toEqual(['2511.18020']);
  });

  it('answers one clear line for a missing file, an HTTP error, and a bad document', async () => {
    await expect(loadInput(join(FEEDS, 'nope.json'), 'auto', deps)).rejects.toThrow(`Cannot read ${join(FEEDS, 'nope.json')}: no such file`);
    await expect(loadInput(`${server.url}/missing`, 'auto', deps)).rejects.toMatchObject({
      code: 'INPUT_FETCH_FAILED',
      message: `GET ${server.url}/missing answered HTTP 404: no route for /missing`,
    });
    server.route('/truncated', xml(feed('arxiv-rss-cs.LG+cs.CL.xml').slice(0, 1200)));
    await expect(loadInput(`${server.url}/truncated`, 'auto', deps)).rejects.toMatchObject({ code: 'FEED_MALFORMED' });
  });
});
