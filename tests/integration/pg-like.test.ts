// like: topics through the subscriber door on PostgreSQL: an example PostgreSQL holds as a paper is
// saved at once; one it lacks is looked up on arXiv (a local stand-in) and kept in PostgreSQL's
// like_examples; one arXiv does not know is refused naming it, saving nothing. The first matching run
// chooses the example's terms on the whole corpus and finds the same papers with the same scores as
// SQLite does for the same topic over the same papers, never the example itself.
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { migratePostgres } from '../../src/db/postgres/migrate.ts';
import { ingestBatch } from '../../src/ingest/ingest.ts';
import { ingestBatchPg } from '../../src/ingest/postgres/ingest.ts';
import { ensureQuery, matchPending } from '../../src/match/matcher.ts';
import { matchPendingPg } from '../../src/match/postgres/match.ts';
import { parseTopic } from '../../src/match/parse.ts';
import { openPostgresDoor, type PostgresDoorHandle } from '../../src/main.ts';
import { buildServer } from '../../src/web/server.ts';
import { startFeedServer, xml, type FeedServer } from '../helpers/feed-server.ts';
import { backfillBatch } from '../helpers/pg-edition.ts';
import { postgresForTests, type TestSchema } from '../helpers/postgres.ts';
import { tempDatabase, type TempDb } from '../helpers/seed.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { jsonPost } from '../helpers/web-harness.ts';

const pg = await postgresForTests();
const API_QUERY = readFileSync(new URL('../fixtures/feeds/arxiv-api-query.xml', import.meta.url), 'utf8');
const API_EMPTY = API_QUERY.replace(/<entry>[\s\S]*<\/entry>/, '');

describe.skipIf(!pg.reachable)('like: topics on PostgreSQL', () => {
  let s: TestSchema;
  let t: TestApp;
  let handle: PostgresDoorHandle;
  let web: FastifyInstance;
  let base: string;
  let feeds: FeedServer;
  let lite: TempDb;
  const batch = backfillBatch('2025-11-24');
  // A paper of the listing three others resemble (on SQLite, for the same topic over the same papers).
  const example = batch.papers[18]!.key;
  const topicOf = async (email: string) =>
    (await s.pool.query<{ text: string }>('SELECT t.text FROM topics t JOIN subscribers s ON s.id = t.subscriber_id WHERE s.email = $1 ORDER BY t.position', [email])).rows.map((r) => r.text);

  beforeAll(async () => {
    s = await pg.schema();
    await migratePostgres(s.pool);
    const clock = new ManualClock('2025-11-25T10:00:00.000Z');
    await ingestBatchPg(s.pool, batch, clock);
    lite = tempDatabase('pg-like-');
    ingestBatch(lite.db, batch, clock);
    feeds = await startFeedServer();
    t = await startTestApp({ DATABASE_URL: s.url, DATABASE_SCHEMA: s.name, ARXIV_API_URL: `${feeds.url}/api/query`, ARXIV_MIN_INTERVAL_MS: '0', FETCH_RETRIES: '0' });
    handle = (await openPostgresDoor(t.app))!;
    web = buildServer({ ...t.app, door: handle.served });
    await web.listen({ port: 0, host: '127.0.0.1' });
    const addr = web.server.address();
    base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  }, 60_000);
  afterAll(async () => {
    await web?.close();
    await handle?.close();
    await t?.close();
    await feeds?.close();
    lite?.cleanup();
    await s?.drop();
  });

  it('saves a like: topic of a paper PostgreSQL holds; matching finds what SQLite finds, never the example', async () => {
    const res = await fetch(`${base}/subscribe`, jsonPost({ email: 'like@example.com', topics: ['graphs', `like:${example}`] }));
    expect(res.status).toBe(202);
    expect(await topicOf('like@example.com')).toEqual(['graphs', `like:${example}`]);
    // Matching runs for confirmed readers' queries.
    await s.pool.query(`UPDATE subscribers SET status = 'confirmed', confirmed_at = '2025-11-25T10:00:00.000Z' WHERE email = 'like@example.com'`);
    await matchPendingPg(s.pool);
    const q = (await s.pool.query('SELECT id, like_terms, like_corpus FROM queries WHERE fts = $1', [parseTopic(`like:${example}`).fts])).rows[0];
    expect(q.like_corpus).toBe(batch.papers.length);
    const onPg = (await s.pool.query('SELECT paper_id AS "paperId", score FROM query_matches WHERE query_id = $1 ORDER BY paper_id', [q.id])).rows;
    const liteQuery = ensureQuery(lite.db, parseTopic(`like:${example}`));
    lite.db.prepare(`INSERT INTO subscribers (email, status, token_salt, timezone, created_at) VALUES ('x@example.org', 'confirmed', 's', 'UTC', '2025-11-25')`).run();
    lite.db.prepare(`INSERT INTO topics (subscriber_id, query_id, text, muted, position) VALUES (1, ?, 'like', 0, 0)`).run(liteQuery);
    matchPending(lite.db);
    expect(q.like_terms).toBe((lite.db.prepare('SELECT like_terms FROM queries WHERE id = ?').get(liteQuery) as { like_terms: string }).like_terms);
    expect(onPg).toEqual(lite.db.prepare('SELECT paper_id AS paperId, score FROM query_matches WHERE query_id = ? ORDER BY paper_id').all(liteQuery));
    expect(onPg.length).toBeGreaterThan(0);
    const exampleId = (await s.pool.query('SELECT id FROM papers WHERE paper_key = $1', [example])).rows[0].id;
    expect(onPg.map((m: { paperId: number }) => m.paperId)).not.toContain(exampleId);
  });

  it('an example PostgreSQL lacks is looked up on arXiv and kept in its like_examples; one arXiv does not know is refused, naming it', async () => {
    feeds.route('/api/query', xml(API_QUERY));
    expect((await fetch(`${base}/subscribe`, jsonPost({ email: 'looked@example.com', topics: ['like:2501.00010'] }))).status).toBe(202);
    expect((await s.pool.query('SELECT paper_key FROM like_examples')).rows).toEqual([{ paper_key: '2501.00010' }]);
    expect(await topicOf('looked@example.com')).toEqual(['like:2501.00010']);

    feeds.route('/api/query', xml(API_EMPTY));
    const res = await fetch(`${base}/subscribe`, jsonPost({ email: 'unknown@example.com', topics: ['graphs', 'like:2501.99999'] }));
    expect(res.status).toBe(400);
    const body = (await res.json()) as { code: string; error: string };
    expect(body.code).toBe('LIKE_UNKNOWN');
    expect(body.error).toMatch(/^like:2501\.99999: paper 2501\.99999 is not in this digest's database and arXiv does not know it either/);
    expect(await topicOf('unknown@example.com')).toEqual([]);
  });
});
