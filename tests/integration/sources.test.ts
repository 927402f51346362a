// The source poller: real fetch code against a real local HTTP server playing Hugging Face and arXiv,
// a real SQLite file, a controlled clock. Assertions are on what lands in the database.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import { openDatabase, type Db } from '../../src/db/open.ts';
import { createSourcePoller, listSources, parseSources } from '../../src/ingest/sources.ts';
import { silentLogger } from '../../src/log.ts';
import { json, startFeedServer, xml, type FeedServer } from '../helpers/feed-server.ts';

const FEEDS = join(import.meta.dirname, '..', 'fixtures', 'feeds');
const feed = (name: string) => readFileSync(join(FEEDS, name), 'utf8');
const hf = (day: string) => `/api/daily_papers?date=${day}`;
const FUTURE = json({ error: 'Date is in the future' }, 400);

let dir: string;
let db: Db;
let server: FeedServer;
let clock: ManualClock;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sources-'));
  db = openDatabase(join(dir, 'digest.sqlite'));
  server = await startFeedServer();
  clock = new ManualClock('2025-11-26T06:00:00Z'); // a Wednesday; look-back 3 days: 23 (Sunday) to 26
});
afterEach(async () => {
  await server.close();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

function poller(sources: string, env: Record<string, string> = {}) {
  const config = loadConfig({
    SOURCES: sources,
    HF_API_URL: `${server.url}/api/daily_papers`,
    ARXIV_RSS_URL: `${server.url}/rss`,
    ARXIV_API_URL: `${server.url}/api/query`,
    SOURCE_LOOKBACK_DAYS: '3',
    FETCH_TIMEOUT_MS: '300',
    FETCH_RETRIES: '2',
    ARXIV_MIN_INTERVAL_MS: '50',
    ...env,
  });
  return createSourcePoller({ db, config, clock, logger: silentLogger, backoffMs: 5 });
}

/** Papers and batches: what a fault must leave as it was. */
function content() {
  return {
    papers: db.prepare('SELECT * FROM papers ORDER BY id').all(),
    batches: db.prepare('SELECT * FROM batches ORDER BY id').all(),
    batchPapers: db.prepare('SELECT * FROM batch_papers ORDER BY batch_id, paper_id').all(),
  };
}
const days = (source: string) =>
  db.prepare('SELECT day, status, last_error AS lastError FROM source_days WHERE source = ? ORDER BY day').all(source);
const paper = (key: string) => {
  const r = db.prepare('SELECT id, upvotes, categories, authors FROM papers WHERE paper_key = ?').get(key) as
    | { id: number; upvotes: number; categories: string; authors: string }
    | undefined;
  return r && { ...r, categories: JSON.parse(r.categories) as string[], authors: JSON.parse(r.authors) as string[] };
};

function serveGoodDays() {
  server.route(hf('2025-11-23'), json([])); // Sunday: nothing
  server.route(hf('2025-11-24'), json(feed('hf-2025-11-24.json')));
  server.route(hf('2025-11-25'), json(feed('hf-2025-11-25.json')));
  server.route(hf('2025-11-26'), FUTURE);
  server.route('/rss/cs.LG+cs.CL', xml(feed('arxiv-rss-cs.LG+cs.CL.xml')));
}

describe('source poller', () => {
  it('ingests each missing day once, and the same paper from both sources is one row with merged metadata', async () => {
    serveGoodDays();
    const p = poller('hf,arxiv:cs.LG+cs.CL');
    const first = await p.poll();
    expect(first.map((r) => [r.source, r.day, r.status])).toEqual([
      ['hf', '2025-11-23', 'empty'],
      ['hf', '2025-11-24', 'ingested'],
      ['hf', '2025-11-25', 'ingested'],
      ['hf', '2025-11-26', 'not-yet'],
      ['arxiv:cs.LG+cs.CL', '2025-11-24', 'ingested'],
    ]);
    const keys = (db.prepare('SELECT paper_key FROM papers ORDER BY id').all() as { paper_key: string }[]).map((r) => r.paper_key);
    expect(keys).toEqual(['2511.17001', '2501.00010', '2511.17003', '2511.18004', '2511.17010']);
    expect(paper('2511.17003')).toMatchObject({ upvotes: 17, categories: ['cs.LG', 'cs.RO'], authors: ['Lena Fischer', 'Kenji Watanabe', 'Rosa Delgado'] });
    expect(paper('2511.17001')).toMatchObject({ upvotes: 57 }); // seen on two days: one row
    expect(db.prepare('SELECT source, date, paper_count AS n FROM batches ORDER BY id').all()).toEqual([
      { source: 'hf', date: '2025-11-24', n: 3 },
      { source: 'hf', date: '2025-11-25', n: 2 },
      { source: 'arxiv:cs.LG+cs.CL', date: '2025-11-24', n: 2 },
    ]);
    expect(days('hf')).toEqual([
      { day: '2025-11-23', status: 'empty', lastError: null },
      { day: '2025-11-24', status: 'ingested', lastError: null },
      { day: '2025-11-25', status: 'ingested', lastError: null },
      { day: '2025-11-26', status: 'empty', lastError: null },
    ]);

    // The next tick: a settled day is not fetched again; nothing changes.
    const before = content();
    clock.advance(3_600_000);
    const second = await p.poll();
    expect(server.hits(hf('2025-11-24'))).toBe(1);
    expect(second.find((r) => r.source === 'arxiv:cs.LG+cs.CL')).toMatchObject({ day: '2025-11-24', status: 'unchanged' });
    expect(second.filter((r) => r.status === 'ingested')).toEqual([]);
    expect(content()).toEqual(before);
  });

  it('asks again for a day with nothing yet, and for a day still growing until it settles', async () => {
    serveGoodDays();
    const extra = JSON.parse(feed('hf-2025-11-24.json')) as unknown[];
    // Today (the 26th) is future for Hugging Face at first, then lists one paper, then two.
    server.route(hf('2025-11-26'), FUTURE, json([extra[0]]), json([extra[0], extra[1]]));
    const p = poller('hf');
    await p.poll();
    expect(days('hf').at(-1)).toMatchObject({ day: '2025-11-26', status: 'empty' });

    clock.set('2025-11-26T10:00:00Z');
    const r2 = await p.poll();
    // A batch for the day, though its one paper is already known from the 24th.
    expect(r2.find((r) => r.day === '2025-11-26')).toMatchObject({ status: 'ingested', papers: 1, newPapers: 0 });
    expect(days('hf').at(-1)).toMatchObject({ day: '2025-11-26', status: 'ingested' });

    clock.set('2025-11-27T13:00:00Z'); // the 26th has ended and settled: one last fetch
    const r3 = await p.poll();
    expect(r3.find((r) => r.day === '2025-11-26')).toMatchObject({ status: 'ingested', papers: 2, newPapers: 0 });
    clock.set('2025-11-27T14:00:00Z');
    const hitsBefore = server.hits(hf('2025-11-26'));
    await p.poll();
    expect(server.hits(hf('2025-11-26'))).toBe(hitsBefore); // final now
    expect(server.hits(hf('2025-11-23'))).toBe(2); // the empty Sunday: asked on each tick until it left the window
  });

  it('leaves the database as it was on every fault, and reports source, day and reason', async () => {
    const hfDay = JSON.parse(feed('hf-2025-11-24.json')) as unknown[];
    server.route(hf('2025-11-23'), { body: feed('hf-2025-11-25.json').slice(0, 400), headers: { 'content-type': 'application/json' } });
    server.route(hf('2025-11-24'), json([...hfDay, { paper: { id: '2511.99999', summary: 'no title anywhere' } }]));
    server.route(hf('2025-11-25'), { delayMs: 2_000, body: '[]' });
    server.route(hf('2025-11-26'), { drop: true });
    server.route('/rss/cs.LG+cs.CL', xml(feed('arxiv-rss-cs.LG+cs.CL.xml').slice(0, 3000)));
    const before = content();
    const reports = await poller('hf,arxiv:cs.LG+cs.CL').poll();

    expect(content()).toEqual(before);
    expect(reports.map((r) => [r.source, r.day, r.status])).toEqual([
      ['hf', '2025-11-23', 'error'],
      ['hf', '2025-11-24', 'error'],
      ['hf', '2025-11-25', 'error'],
      ['hf', '2025-11-26', 'error'],
      ['arxiv:cs.LG+cs.CL', '2025-11-26', 'error'],
    ]);
    const reasons = Object.fromEntries(reports.map((r) => [`${r.source} ${r.day}`, r.detail]));
    expect(reasons['hf 2025-11-23']).toMatch(/^Invalid Hugging Face daily papers JSON: not valid JSON at line \d+ column \d+/);
    expect(reasons['hf 2025-11-24']).toBe('Invalid Hugging Face daily papers JSON: [3].paper.title: required');
    expect(reasons['hf 2025-11-25']).toMatch(/no complete answer within 300 ms \(after 3 attempts\)$/);
    expect(reasons['hf 2025-11-26']).toMatch(/connection failed: .* \(after 3 attempts\)$/);
    expect(reasons['arxiv:cs.LG+cs.CL 2025-11-26']).toMatch(/^Invalid arXiv feed: not well-formed XML: the document ends inside .* \(truncated\?\)$/);
    expect(server.hits(hf('2025-11-25'))).toBe(3); // timeouts are retried
    expect(server.hits(hf('2025-11-24'))).toBe(1); // malformed data is not

    expect(days('hf').map((d) => (d as { status: string }).status)).toEqual(['error', 'error', 'error', 'error']);
    const [hfListing, arxivListing] = listSources(db, parseSources('hf,arxiv:cs.LG+cs.CL'));
    expect(hfListing).toMatchObject({ source: 'hf', lastDay: null, lastErrorDay: expect.stringMatching(/^2025-11-2\d$/) });
    expect(hfListing!.errors).toHaveLength(4);
    expect(arxivListing).toMatchObject({ lastDay: null, lastErrorDay: '2025-11-26', lastError: reasons['arxiv:cs.LG+cs.CL 2025-11-26'] });

    // Once the sources answer well, the same days are ingested and the errors are resolved.
    serveGoodDays();
    clock.advance(3_600_000);
    const healed = await poller('hf,arxiv:cs.LG+cs.CL').poll();
    expect(healed.map((r) => r.status)).toEqual(['empty', 'ingested', 'ingested', 'not-yet', 'ingested']);
    const [hfAfter, arxivAfter] = listSources(db, parseSources('hf,arxiv:cs.LG+cs.CL'));
    expect(hfAfter).toMatchObject({ lastDay: '2025-11-25', lastError: null, errors: [] });
    expect(arxivAfter).toMatchObject({ lastDay: '2025-11-24', lastError: null, errors: [] });
  });

  it('retries a 500 and goes on; one source failing does not stop the others', async () => {
    serveGoodDays();
    server.route(hf('2025-11-24'), { status: 500, body: 'Internal Server Error' }, json(feed('hf-2025-11-24.json')));
    server.route(hf('2025-11-25'), { status: 503, body: 'unavailable' });
    server.route('/rss/cs.LG+cs.CL', { status: 500 }, { status: 500 }, xml(feed('arxiv-rss-cs.LG+cs.CL.xml')));
    const reports = await poller('hf,arxiv:cs.LG+cs.CL').poll();
    expect(reports.map((r) => [r.day, r.status])).toEqual([
      ['2025-11-23', 'empty'],
      ['2025-11-24', 'ingested'],
      ['2025-11-25', 'error'],
      ['2025-11-26', 'not-yet'],
      ['2025-11-24', 'ingested'],
    ]);
    expect(reports[2]!.detail).toBe(`GET ${server.url}${hf('2025-11-25')} answered HTTP 503 (after 3 attempts)`);
    expect(server.hits(hf('2025-11-24'))).toBe(2);
    expect(paper('2511.17003')).toMatchObject({ upvotes: 17, categories: ['cs.LG', 'cs.RO'] });
  });

  it('records an empty arXiv announcement (weekend) for the day the feed names, and skips a day already ingested', async () => {
    server.route('/rss/cs.LG+cs.CL', xml(feed('arxiv-rss-empty.xml')), xml(feed('arxiv-rss-cs.LG+cs.CL.xml')));
    const p = poller('arxiv:cs.LG+cs.CL', { ARXIV_INCLUDE_CROSSLISTS: 'true' });
    expect(await p.poll()).toEqual([{ source: 'arxiv:cs.LG+cs.CL', day: '2025-11-22', status: 'empty', detail: 'no announcements' }]);
    const [r] = await p.poll();
    expect(r).toMatchObject({ day: '2025-11-24', status: 'ingested', papers: 3 }); // cross-list included on request
    expect(paper('2511.17011')).toBeDefined();
    expect(paper('2410.01234')).toBeUndefined(); // replacements never
    expect(await p.poll()).toMatchObject([{ day: '2025-11-24', status: 'unchanged' }]);
  });

  it('asks the arXiv query API for each past day by submission date, spacing the requests', async () => {
    server.route('/api/query', xml(feed('arxiv-api-query.xml')));
    const reports = await poller('arxiv-api:cs.LG+cs.CL').poll();
    // The fixture answers the same two papers for every day: they are new once.
    expect(reports.map((r) => [r.day, r.status, r.newPapers])).toEqual([
      ['2025-11-23', 'ingested', 2],
      ['2025-11-24', 'ingested', 0],
      ['2025-11-25', 'ingested', 0],
    ]);
    expect(db.prepare('SELECT COUNT(*) AS n FROM papers').get()).toEqual({ n: 2 });
    const asked = server.requests.filter((r) => r.target.startsWith('/api/query'));
    expect(decodeURIComponent(asked[0]!.target)).toContain('search_query=(cat:cs.LG OR cat:cs.CL) AND submittedDate:[202511230000 TO 202511232359]');
    for (let i = 1; i < asked.length; i++) expect(asked[i]!.at - asked[i - 1]!.at).toBeGreaterThanOrEqual(49);
    expect(paper('2501.00010')).toMatchObject({ categories: ['cs.DL', 'cs.LG'] });
    expect(paper('hep-th/9901001')).toBeDefined();
  });
});

describe('parseSources', () => {
  it('reads the setting', () => {
    expect(parseSources('')).toEqual([]);
    expect(parseSources(' hf , arxiv:cs.LG+cs.CL,arxiv-api:hep-th ')).toEqual([
      { name: 'hf', kind: 'hf', categories: [] },
      { name: 'arxiv:cs.LG+cs.CL', kind: 'arxiv', categories: ['cs.LG', 'cs.CL'] },
      { name: 'arxiv-api:hep-th', kind: 'arxiv-api', categories: ['hep-th'] },
    ]);
  });

  it.each([
    ['hf,,arxiv:cs.LG', 'SOURCES entry 2 (""): empty'],
    ['hf,arxiv:', 'SOURCES entry 2 ("arxiv:"): needs categories, e.g. arxiv:cs.LG+cs.CL'],
    ['semantic-scholar', 'SOURCES entry 1 ("semantic-scholar"): unknown source "semantic-scholar"'],
    ['arxiv:cs.LG+cs LG', 'SOURCES entry 1 ("arxiv:cs.LG+cs LG"): "cs LG" is not an arXiv category'],
    ['hf,hf', 'SOURCES entry 2 ("hf"): hf is listed twice'],
    ['hf:cs.LG', 'SOURCES entry 1 ("hf:cs.LG"): hf takes no categories'],
  ])('refuses %j naming the entry', (spec, message) => {
    expect(() => parseSources(spec)).toThrow(message);
  });
});
