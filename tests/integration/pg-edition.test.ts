// An edition ingested, matched and planned on PostgreSQL gives every subscriber the rows the SQLite
// pipeline gives them: the same slots, bounds, counts and papers in the same order (decoded through the
// query lists), over three days (repeated papers with new upvotes, then an older day's backfill), with
// broad, narrow, muted, OR/NOT and upvotes topics, two time zones, a cap, and subscribers who must get
// nothing. Planners at once plan each subscriber+slot once; a bad batch writes nothing on PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import type { Db } from '../../src/db/open.ts';
import { copySqliteToPostgres } from '../../src/db/postgres/copy.ts';
import { ingestBatch } from '../../src/ingest/ingest.ts';
import { ingestBatchPg } from '../../src/ingest/postgres/ingest.ts';
import { matchPending } from '../../src/match/matcher.ts';
import { matchPendingPg } from '../../src/match/postgres/match.ts';
import { planDigests } from '../../src/plan/planner.ts';
import { planDigestsPg } from '../../src/plan/postgres/plan.ts';
import type { IncomingBatch } from '../../src/types.ts';
import {
  addSubscribers,
  backfillBatch,
  BATCH_DAY_1,
  BATCH_DAY_2,
  fixtureBatch,
  postgresRows,
  SQL_DELIVER_ALL,
  SQL_DELIVER_ALL_PG,
  sqliteRows,
  type DecodedRow,
  type EditionSubscriber,
} from '../helpers/pg-edition.ts';
import { postgresForTests, type TestSchema } from '../helpers/postgres.ts';
import { tempDatabase, type TempDb } from '../helpers/seed.ts';

const pg = await postgresForTests();

// 2025-11-25 is a Tuesday; at 14:00 UTC it is 09:00 in New York.
const SUBSCRIBERS: EditionSubscriber[] = [
  { email: 'broad@example.org', topics: ['reinforcement learning', 'language models', 'agents', 'learning'] },
  { email: 'narrow@example.org', topics: ['starcraft'] },
  { email: 'muted@example.org', timezone: 'America/New_York', topics: ['reinforcement', { text: 'web', muted: true }, 'navigate'] },
  { email: 'or-not@example.org', timezone: 'America/New_York', deliveryHour: 8, topics: ['navigation OR web', 'learning -reinforcement'] },
  { email: 'capped@example.org', maxPapers: 3, topics: ['learning', 'model*'] },
  { email: 'upvoted@example.org', topics: ['learning upvotes>=5'] },
  { email: 'late@example.org', deliveryHour: 23, topics: ['learning'] },
  { email: 'weekly@example.org', frequency: 'weekly', weeklyDay: 5, topics: ['learning'] },
  { email: 'left@example.org', status: 'unsubscribed', topics: ['learning'] },
  { email: 'paused@example.org', pausedUntil: '2025-12-31T00:00:00.000Z', topics: ['learning'] },
  { email: 'all-muted@example.org', topics: [{ text: 'learning', muted: true }] },
];
const NOTHING_DUE = ['late@example.org', 'weekly@example.org', 'left@example.org', 'paused@example.org', 'all-muted@example.org'];

/** Day 1's first five papers again on day 2, from another source, with more upvotes (merge: highest wins). */
function repeated(day1: IncomingBatch): IncomingBatch {
  return { source: 'hf-again', date: '2025-11-26', papers: day1.papers.slice(0, 5).map((p) => ({ ...p, upvotes: p.upvotes + 7 })) };
}

describe.skipIf(!pg.reachable)('an edition on PostgreSQL', () => {
  let s: TestSchema;
  let t: TempDb;
  let db: Db;
  const clock = new ManualClock('2025-11-25T14:00:00.000Z');
  const ids = new Map<string, number>();
  const seen = new Map<number, Set<number>>();

  beforeAll(async () => {
    s = await pg.schema();
    t = tempDatabase('pg-edition-');
    db = t.db;
    addSubscribers(db, SUBSCRIBERS);
    for (const r of db.prepare('SELECT id, email FROM subscribers').all() as Array<{ id: number; email: string }>) ids.set(r.email, r.id);
    const copied = await copySqliteToPostgres(db, s.pool);
    expect(copied.ok).toBe(true);
  });
  afterAll(async () => {
    t?.cleanup();
    await s?.drop();
  });

  async function ingestBoth(batches: IncomingBatch[]): Promise<void> {
    for (const b of batches) {
      const lite = ingestBatch(db, b, clock);
      const pgr = await ingestBatchPg(s.pool, b, clock);
      expect(pgr).toEqual(lite);
    }
  }

  /** Matches and plans on both engines; returns the PostgreSQL rows after checking they are SQLite's. */
  async function editionOnBoth(edition: string, planners = 1, lock = true, countBy: 'auto' | 'rows' = 'auto'): Promise<DecodedRow[]> {
    const liteMatch = matchPending(db);
    const pgMatch = await matchPendingPg(s.pool);
    expect({ queries: pgMatch.queries, matches: pgMatch.matches, failed: pgMatch.failed }).toEqual({
      queries: liteMatch.queries,
      matches: liteMatch.matches,
      failed: liteMatch.failed,
    });
    const lite = await planDigests(db, { clock, mode: 'due', yieldBetweenChunks: false });
    const runs = await Promise.all(Array.from({ length: planners }, () => planDigestsPg(s.pool, { clock, mode: 'due', lock, countBy })));
    expect(runs.reduce((n, r) => n + r.planned, 0)).toBe(lite.planned);
    expect(runs.reduce((n, r) => n + r.items, 0)).toBe(lite.items);
    const pgRows = await postgresRows(s.pool, edition);
    expect(pgRows).toEqual(sqliteRows(db, edition));
    const slots = await s.pool.query<{ email: string; last_slot: string | null }>('SELECT email, last_slot FROM subscribers ORDER BY id');
    expect(slots.rows).toEqual(db.prepare('SELECT email, last_slot FROM subscribers ORDER BY id').all());
    // Each paper once per subscriber, whatever the day.
    for (const r of pgRows) {
      const mine = seen.get(r.subscriber) ?? new Set<number>();
      for (const p of r.papers) {
        expect(mine.has(p.paperId), `paper ${p.paperId} twice for subscriber ${r.subscriber}`).toBe(false);
        mine.add(p.paperId);
      }
      seen.set(r.subscriber, mine);
    }
    return pgRows;
  }

  function deliverBoth(): Promise<unknown> {
    for (const sql of SQL_DELIVER_ALL) db.exec(sql);
    return SQL_DELIVER_ALL_PG.reduce<Promise<unknown>>((p, sql) => p.then(() => s.pool.query(sql)), Promise.resolve());
  }

  it('day 1: the same rows as SQLite for every subscriber; nothing for those not due, paused, gone or all muted', async () => {
    await ingestBoth([fixtureBatch(BATCH_DAY_1)]);
    const rows = await editionOnBoth('2025-11-25');
    const by = new Map(rows.map((r) => [r.subscriber, r]));
    for (const email of ['broad@example.org', 'narrow@example.org', 'muted@example.org', 'or-not@example.org', 'capped@example.org']) {
      expect(by.get(ids.get(email)!)?.papers.length, email).toBeGreaterThan(0);
    }
    for (const email of NOTHING_DUE) expect(by.has(ids.get(email)!), email).toBe(false);
    // The muted topic (bit 1) never marks a paper; the broad reader's list is in display order (topics matched first).
    const muted = by.get(ids.get('muted@example.org')!)!;
    const mutedTopic = (await s.pool.query('SELECT id FROM topics WHERE text = $1', ['web'])).rows[0].id as number;
    expect(muted.papers.every((p) => !p.topicIds.includes(mutedTopic))).toBe(true);
    const broad = by.get(ids.get('broad@example.org')!)!.papers.map((p) => p.topicIds.length);
    expect(broad).toEqual([...broad].sort((a, b) => b - a));
  });

  it('day 2: repeated papers are not planned again; new ones are, the same on both engines (papers counted by rows)', async () => {
    await deliverBoth();
    clock.set('2025-11-26T14:00:00.000Z');
    const day1 = fixtureBatch(BATCH_DAY_1);
    await ingestBoth([fixtureBatch(BATCH_DAY_2), repeated(day1)]);
    const rows = await editionOnBoth('2025-11-26', 1, true, 'rows');
    expect(rows.length).toBeGreaterThan(0);
  });

  it('day 3: a backfill (an older day arriving late), planned by two planners at once without the lock, plans each subscriber once', async () => {
    await deliverBoth();
    clock.set('2025-11-27T14:00:00.000Z');
    await ingestBoth([backfillBatch()]);
    const rows = await editionOnBoth('2025-11-27', 2, false);
    expect(rows.length).toBeGreaterThan(0);
    const dup = await s.pool.query('SELECT subscriber_id, edition FROM digests GROUP BY 1, 2 HAVING count(*) > 1');
    expect(dup.rows).toEqual([]);
  });

  it('day 4: three planners at once with the lock: one plans, the others return at once', async () => {
    await deliverBoth();
    clock.set('2025-11-28T14:00:00.000Z');
    const b: IncomingBatch = { ...fixtureBatch(BATCH_DAY_2), source: 'late-news', date: '2025-11-28' };
    b.papers = b.papers.map((p, i) => ({ ...p, key: `2511.${30000 + i}`, url: `https://arxiv.org/abs/2511.${30000 + i}` }));
    await ingestBoth([b]);
    await matchPendingPg(s.pool);
    const runs = await Promise.all([1, 2, 3].map(() => planDigestsPg(s.pool, { clock, mode: 'due' })));
    expect(runs.filter((r) => r.ran)).toHaveLength(1);
    expect(runs.find((r) => r.ran)!.planned).toBeGreaterThan(0);
    const again = await planDigestsPg(s.pool, { clock, mode: 'due' });
    expect(again).toEqual({ ran: true, slots: 0, planned: 0, items: 0 });
    matchPending(db);
    await planDigests(db, { clock, mode: 'due', yieldBetweenChunks: false });
    expect(await postgresRows(s.pool, '2025-11-28')).toEqual(sqliteRows(db, '2025-11-28'));
  });

  it('a bad batch ingests nothing on PostgreSQL: refused before writing, or rolled back when a write fails mid-way', async () => {
    const count = async () =>
      (await s.pool.query('SELECT (SELECT count(*) FROM papers)::int AS papers, (SELECT count(*) FROM batches)::int AS batches, (SELECT count(*) FROM batch_papers)::int AS links')).rows[0];
    const before = await count();
    const base = backfillBatch('2025-11-21');
    const fresh = base.papers.map((p, i) => ({ ...p, key: `2509.${40000 + i}`, url: `https://arxiv.org/abs/2509.${40000 + i}` }));
    const bad = { ...base, papers: fresh.map((p, i) => (i === 3 ? { ...p, url: 'ftp://nope' } : p)) };
    await expect(ingestBatchPg(s.pool, bad, clock)).rejects.toMatchObject({ code: 'BATCH_INVALID', message: expect.stringContaining('papers[3].url') });
    expect(await count()).toEqual(before);
    // A write that fails after the batch row and the new papers are written: nothing of it stays.
    await s.pool.query(`CREATE FUNCTION fail_links() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'disk full'; END $$`);
    await s.pool.query(`CREATE TRIGGER fail_links BEFORE INSERT ON batch_papers FOR EACH ROW EXECUTE FUNCTION fail_links()`);
    const good = { ...base, papers: fresh };
    await expect(ingestBatchPg(s.pool, good, clock)).rejects.toThrow(/disk full/);
    expect(await count()).toEqual(before);
    await s.pool.query(`DROP TRIGGER fail_links ON batch_papers`);
    const r = await ingestBatchPg(s.pool, good, clock);
    expect(r).toMatchObject({ papers: fresh.length, newPapers: fresh.length, duplicate: false });
    expect(await ingestBatchPg(s.pool, good, clock)).toMatchObject({ batchId: r.batchId, duplicate: true, newPapers: 0 });
  });
});
