// The source poller on PostgreSQL (what `digest plan` does first): the same feeds, played by a real local
// HTTP server, polled into a SQLite file and into PostgreSQL give the same papers (ids, keys, merged
// metadata), batches and per-day records; a settled day is not asked again; a day that fails is recorded
// as an error and nothing of it is ingested.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import { openDatabase, type Db } from '../../src/db/open.ts';
import { migratePostgres } from '../../src/db/postgres/migrate.ts';
import { ingestBatchPg } from '../../src/ingest/postgres/ingest.ts';
import { postgresSourceStore } from '../../src/ingest/postgres/source-store.ts';
import { createSourcePoller } from '../../src/ingest/sources.ts';
import { silentLogger } from '../../src/log.ts';
import { json, startFeedServer, xml, type FeedServer } from '../helpers/feed-server.ts';
import { postgresForTests, type TestSchema } from '../helpers/postgres.ts';

const pg = await postgresForTests();
const FEEDS = join(import.meta.dirname, '..', 'fixtures', 'feeds');
const feed = (name: string) => readFileSync(join(FEEDS, name), 'utf8');
const hf = (day: string) => `/api/daily_papers?date=${day}`;

const SQL_PAPERS = 'SELECT id, paper_key, title, abstract, authors, url, published_at, upvotes, categories, first_batch_id FROM papers ORDER BY id';
const SQL_BATCHES = 'SELECT id, source, date, content_hash, paper_count, new_paper_count FROM batches ORDER BY id';
const SQL_DAYS = 'SELECT source, day, status, batch_id, attempts, last_error FROM source_days ORDER BY source, day';

describe.skipIf(!pg.reachable)('the source poller on PostgreSQL', () => {
  let s: TestSchema;
  let dir: string;
  let db: Db;
  let server: FeedServer;
  const clock = new ManualClock('2025-11-26T06:00:00Z');

  beforeAll(async () => {
    s = await pg.schema();
    await migratePostgres(s.pool);
    dir = mkdtempSync(join(tmpdir(), 'pg-sources-'));
    db = openDatabase(join(dir, 'digest.sqlite'));
    server = await startFeedServer();
  });
  afterAll(async () => {
    await server?.close();
    db?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    await s?.drop();
  });

  function pollers() {
    const config = loadConfig({
      SOURCES: 'hf,arxiv:cs.LG+cs.CL',
      HF_API_URL: `${server.url}/api/daily_papers`,
      ARXIV_RSS_URL: `${server.url}/rss`,
      SOURCE_LOOKBACK_DAYS: '3',
      FETCH_TIMEOUT_MS: '300',
      FETCH_RETRIES: '0',
      ARXIV_MIN_INTERVAL_MS: '50',
    });
    const deps = { config, clock, logger: silentLogger, backoffMs: 5 };
    return {
      sqlite: createSourcePoller({ ...deps, db }),
      postgres: createSourcePoller({ ...deps, store: postgresSourceStore(s.pool), ingest: (b) => ingestBatchPg(s.pool, b, clock) }),
    };
  }

  async function same(): Promise<void> {
    for (const sql of [SQL_PAPERS, SQL_BATCHES, SQL_DAYS]) expect((await s.pool.query(sql)).rows, sql).toEqual(db.prepare(sql).all());
  }

  it('ingests the same days into the same rows as on SQLite, and asks a settled day once', async () => {
    server.route(hf('2025-11-23'), json([]));
    server.route(hf('2025-11-24'), json(feed('hf-2025-11-24.json')));
    server.route(hf('2025-11-25'), { status: 503, body: 'down' }, { status: 503, body: 'down' }, json(feed('hf-2025-11-25.json')));
    server.route(hf('2025-11-26'), json({ error: 'Date is in the future' }, 400));
    server.route('/rss/cs.LG+cs.CL', xml(feed('arxiv-rss-cs.LG+cs.CL.xml')));
    const p = pollers();
    const lite = await p.sqlite.poll();
    const onPg = await p.postgres.poll();
    expect(onPg).toEqual(lite);
    expect(onPg.find((r) => r.day === '2025-11-25' && r.source === 'hf')).toMatchObject({ status: 'error' });
    expect((await s.pool.query('SELECT count(*)::int AS n FROM papers')).rows[0].n).toBeGreaterThan(0);
    await same();

    // The next tick: the failed day is asked again and ingested; settled days are not asked again.
    clock.advance(3_600_000);
    const hits = server.hits(hf('2025-11-24'));
    expect(await p.postgres.poll()).toEqual(await p.sqlite.poll());
    expect(server.hits(hf('2025-11-24'))).toBe(hits);
    expect((await s.pool.query(`SELECT status FROM source_days WHERE source = 'hf' AND day = '2025-11-25'`)).rows[0].status).toBe('ingested');
    await same();
  });
});
