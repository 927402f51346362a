// The ledger on PostgreSQL in one process with several sessions: batch claims never overlap, every state
// change is a compare-and-set on the claimant, a gone claimant's rows become unknown (a live one's stay),
// and planning a slot twice at once plans it once.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PgLedger, RESCAN_MS } from '../../src/ledger/postgres/ledger.ts';
import { SQL_CLAIM } from '../../src/ledger/postgres/ledger-sql.ts';
import { ClaimantLock, recoverStale } from '../../src/ledger/postgres/liveness.ts';
import { migratePostgres } from '../../src/db/postgres/migrate.ts';
import { planEdition } from '../../src/ledger/postgres/plan.ts';
import { postgresForTests, type TestSchema } from '../helpers/postgres.ts';
import { seedSubscribers, SQL_WATERMARKS } from '../helpers/pg-seed.ts';
import { findSubscriberById } from '../../src/subscribers/records/postgres.ts';

const pg = await postgresForTests();

describe.skipIf(!pg.reachable)('the ledger on PostgreSQL', () => {
  let s: TestSchema;
  beforeAll(async () => {
    s = await pg.schema();
    await migratePostgres(s.pool);
  });
  afterAll(async () => s?.drop());
  beforeEach(async () => {
    await s.pool.query('TRUNCATE digests, subscribers RESTART IDENTITY CASCADE');
    await seedSubscribers(s.pool, 200);
  });

  it('plans a slot once, whoever plans it at the same time (with the lock, and with the unique key alone)', async () => {
    const both = await Promise.all([1, 2, 3].map(() => planEdition(s.pool, { edition: '2026-11-27', toPaper: 10 })));
    expect(both.reduce((n, r) => n + r.planned, 0)).toBe(200);
    const noLock = await Promise.all([1, 2].map(() => planEdition(s.pool, { edition: '2026-11-28', toPaper: 12, lock: false })));
    expect(noLock.reduce((n, r) => n + r.planned, 0)).toBe(200);
    const r = await s.pool.query('SELECT count(*)::int AS n, count(DISTINCT (subscriber_id, edition))::int AS d FROM digests');
    expect(r.rows[0]).toEqual({ n: 400, d: 400 });
  });

  it('claims in batches that never overlap, and records by compare-and-set', async () => {
    await planEdition(s.pool, { edition: '2026-11-27', toPaper: 10 });
    const a = new PgLedger(s.pool, 'host:1:1');
    const b = new PgLedger(s.pool, 'host:2:2');
    const claims = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).claimBatch(15)));
    const ids = claims.flat().map((c) => c.id);
    expect(ids.length).toBe(200);
    expect(new Set(ids).size).toBe(200);
    const first = claims[0]![0]!; // b's
    expect(await a.recordSent([{ id: first.id, messageId: 'm', response: '250 ok', at: new Date() }])).toEqual([]);
    expect(await b.recordSent([{ id: first.id, messageId: 'm', response: '250 ok', at: new Date() }])).toEqual([first.id]);
    expect(await b.recordSent([{ id: first.id, messageId: 'm', response: '250 ok', at: new Date() }])).toEqual([]);
    const sub = await s.pool.query(`SELECT watermark FROM ${SQL_WATERMARKS} w WHERE id = $1`, [first.subscriber_id]);
    expect(sub.rows[0].watermark).toBe(10);
    const second = claims[0]![1]!;
    expect(await a.markRetry(second.id, { code: 451, response: '451 later' }, new Date())).toBeUndefined();
    expect(await b.markRetry(second.id, { code: 451, response: '451 later' }, new Date(Date.now() - 1))).toBe('retry');
    const again = await a.claimBatch(5);
    expect(again.map((c) => c.id)).toEqual([second.id]);
  });

  it('claims due retries first, earliest first, then fills the batch with the lowest planned ids, never more than asked', async () => {
    await planEdition(s.pool, { edition: '2026-11-27', toPaper: 10 });
    const a = new PgLedger(s.pool, 'host:1:1');
    const first = await a.claimBatch(6);
    const now = Date.now();
    // Three retries due (the latest-failed one due first), one not due yet.
    const dueAt = [now - 1000, now - 3000, now - 2000];
    for (const [i, at] of dueAt.entries()) await a.markRetry(first[i]!.id, { code: 451, response: '451 later' }, new Date(at));
    await a.markRetry(first[3]!.id, { code: 451, response: '451 later' }, new Date(now + 60_000));
    const b = new PgLedger(s.pool, 'host:2:2');
    const batch = await b.claimBatch(5, new Date(now));
    const byDue = [1, 2, 0].map((i) => first[i]!.id);
    const lowestPlanned = (await s.pool.query(`SELECT id FROM digests WHERE status = 'planned' ORDER BY id LIMIT 2`)).rows;
    expect(batch.map((r) => r.id).sort((x, y) => x - y)).toEqual(
      [...byDue, ...[first[5]!.id + 1, first[5]!.id + 2]].sort((x, y) => x - y),
    );
    expect(batch.map((r) => r.id).slice(0, 3)).toEqual(byDue);
    expect(lowestPlanned.map((r) => r.id)).toEqual([first[5]!.id + 3, first[5]!.id + 4]);
    const held = await s.pool.query(`SELECT count(*)::int AS n FROM digests WHERE claimed_by = 'host:2:2' AND status = 'sending'`);
    expect(held.rows[0].n).toBe(5);
  });

  it('passes over a row another session holds, and claims it once that session has written a new version of it', async () => {
    await planEdition(s.pool, { edition: '2026-11-27', toPaper: 10 });
    const lowest = (await s.pool.query(`SELECT min(id)::int AS id FROM digests`)).rows[0].id as number;
    const other = await s.pool.connect();
    try {
      await other.query('BEGIN');
      await other.query(`UPDATE digests SET paper_count = paper_count + 1 WHERE id = $1`, [lowest]);
      const a = new PgLedger(s.pool, 'host:1:1');
      expect((await a.claimBatch(3)).map((r) => r.id)).toEqual([lowest + 1, lowest + 2, lowest + 3]);
      await other.query('COMMIT');
      // The row now lives at another place in the table (a new version): the claim still finds and takes it,
      // at its next walk from the lowest id (the claimant's cursor is above it until then).
      expect((await a.claimBatch(3, new Date(Date.now() + RESCAN_MS))).map((r) => r.id)).toEqual([lowest, lowest + 4, lowest + 5]);
    } finally {
      other.release();
    }
    const row = await s.pool.query(`SELECT status, claimed_by, paper_count FROM digests WHERE id = $1`, [lowest]);
    expect(row.rows[0]).toEqual({ status: 'sending', claimed_by: 'host:1:1', paper_count: 11 });
  });

  it('takes a passed-over row before it answers that nothing is left, without waiting for the next walk', async () => {
    await planEdition(s.pool, { edition: '2026-11-27', toPaper: 10 });
    const lowest = (await s.pool.query(`SELECT min(id)::int AS id FROM digests`)).rows[0].id as number;
    const other = await s.pool.connect();
    const a = new PgLedger(s.pool, 'host:1:1');
    const taken: number[] = [];
    try {
      await other.query('BEGIN');
      await other.query(`SELECT id FROM digests WHERE id = $1 FOR UPDATE`, [lowest]);
      taken.push(...(await a.claimBatch(1)).map((r) => r.id));
      // The holder lets go without changing the row (a claim rolled back): it is planned, below the cursor.
      await other.query('ROLLBACK');
      // Full batches up to the last row above the cursor, so no claim comes up short before the empty one.
      for (let batch = await a.claimBatch(198); batch.length > 0; batch = await a.claimBatch(198)) taken.push(...batch.map((r) => r.id));
    } finally {
      other.release();
    }
    expect(taken.length).toBe(200);
    expect(new Set(taken).size).toBe(200);
    expect(taken.at(-1)).toBe(lowest);
    // A row this claimant gives back is planned again below its cursor: its next claim takes it first.
    await planEdition(s.pool, { edition: '2026-11-28', toPaper: 12 });
    const claimed = await a.claimBatch(50);
    expect(a.cursor).toBe(claimed.at(-1)!.id);
    expect(await a.release([claimed[0]!.id])).toBe(1);
    expect((await a.claimBatch(2)).map((r) => r.id)).toEqual([claimed[0]!.id, claimed.at(-1)!.id + 1]);
  });

  it('claims from its cursor: a claim late in an edition does not walk the rows already sent', async () => {
    await s.pool.query('TRUNCATE digests, subscribers RESTART IDENTITY CASCADE');
    await seedSubscribers(s.pool, 5000);
    await planEdition(s.pool, { edition: '2026-11-27', toPaper: 10 });
    const a = new PgLedger(s.pool, 'host:1:1');
    for (let i = 0; i < 8; i++) {
      const batch = await a.claimBatch(500);
      await a.recordSent(batch.map((r) => ({ id: r.id, place: r.place, messageId: `m${r.id}`, response: '250 ok', at: new Date() })));
    }
    // 4,000 rows sent and not vacuumed: their old entries are still in the claim's index. Index pages a claim
    // of 2 reads, from the cursor this claimant holds and from the lowest id:
    const pages = async (from: number) => {
      const c = await s.pool.connect();
      try {
        await c.query('BEGIN');
        const plan = await c.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${SQL_CLAIM}`, ['probe:0:0', new Date().toISOString(), 2, from]);
        return plan.rows[0]['QUERY PLAN'][0].Plan['Shared Hit Blocks'] + plan.rows[0]['QUERY PLAN'][0].Plan['Shared Read Blocks'];
      } finally {
        await c.query('ROLLBACK');
        c.release();
      }
    };
    const fromCursor = await pages(a.cursor);
    const fromLowest = await pages(0);
    expect(fromLowest).toBeGreaterThan(10);
    expect(fromCursor).toBeLessThan(fromLowest / 3);
    expect((await a.claimBatch(2)).map((r) => r.id)).toEqual([4001, 4002]);
  });

  it('records by the place the claim returned, and a row whose version moved since (marked unknown) by id all the same', async () => {
    await planEdition(s.pool, { edition: '2026-11-27', toPaper: 10 });
    const a = new PgLedger(s.pool, 'host:1:1');
    const b = new PgLedger(s.pool, 'host:2:2');
    const mine = await a.claimBatch(3);
    const theirs = await b.claimBatch(1);
    expect(mine.every((r) => /^\(\d+,\d+\)$/.test(r.place ?? ''))).toBe(true);
    // Someone gave up on our claim of the second row while we were still sending it: a new version, elsewhere.
    await s.pool.query(`UPDATE digests SET status = 'unknown', smtp_response = 'gave up' WHERE id = $1`, [mine[1]!.id]);
    const sent = (r: (typeof mine)[number]) => ({ id: r.id, place: r.place, messageId: `m${r.id}`, response: '250 ok', at: new Date() });
    // Another claimant's row at its true place is still not ours to record.
    expect(await a.recordSent([sent(theirs[0]!)])).toEqual([]);
    expect((await a.recordSent(mine.map(sent))).sort((x, y) => x - y)).toEqual(mine.map((r) => r.id));
    const rows = await s.pool.query(
      `SELECT d.status, w.watermark FROM digests d JOIN ${SQL_WATERMARKS} w ON w.id = d.subscriber_id WHERE d.id = ANY($1) ORDER BY d.id`,
      [[...mine, ...theirs].map((r) => r.id)],
    );
    expect(rows.rows).toEqual([...mine.map(() => ({ status: 'sent', watermark: 10 })), { status: 'sending', watermark: 0 }]);
  });

  it("a delivery writes its ledger row only, and the reader's next slot starts after it all the same", async () => {
    await planEdition(s.pool, { edition: '2026-11-27', toPaper: 10 });
    const a = new PgLedger(s.pool, 'host:1:1');
    const [row] = await a.claimBatch(1);
    const before = (await s.pool.query(`SELECT xmin::text AS v FROM subscribers WHERE id = $1`, [row!.subscriber_id])).rows[0].v;
    expect(await a.recordSent([{ id: row!.id, place: row!.place, messageId: 'm', response: '250 ok', at: new Date() }])).toEqual([row!.id]);
    expect((await s.pool.query(`SELECT xmin::text AS v FROM subscribers WHERE id = $1`, [row!.subscriber_id])).rows[0].v).toBe(before);
    await planEdition(s.pool, { edition: '2026-11-28', toPaper: 14 });
    const next = await s.pool.query(`SELECT subscriber_id = $1 AS delivered, from_paper, paper_count FROM digests WHERE edition = '2026-11-28' ORDER BY subscriber_id`, [row!.subscriber_id]);
    // The delivered reader's digest holds what came after theirs; everyone else's, still everything.
    expect(next.rows.find((r) => r.delivered)).toEqual({ delivered: true, from_paper: 10, paper_count: 4 });
    expect(next.rows.filter((r) => !r.delivered).every((r) => r.from_paper === 0 && r.paper_count === 14)).toBe(true);
  });

  it("a late record of a row marked unknown moves the reader's watermark even after a newer, lower row was sent", async () => {
    await planEdition(s.pool, { edition: '2026-11-27', toPaper: 10 });
    const a = new PgLedger(s.pool, 'host:1:1');
    const [old] = await a.claimBatch(1);
    await s.pool.query(`UPDATE digests SET status = 'unknown', smtp_response = 'gave up' WHERE id = $1`, [old!.id]);
    // The next slot is planned meanwhile (its bound lower, as a new topic's unmatched query can make it) and sent.
    await planEdition(s.pool, { edition: '2026-11-28', toPaper: 8 });
    const b = new PgLedger(s.pool, 'host:2:2');
    const mine = (await s.pool.query(`SELECT id FROM digests WHERE subscriber_id = $1 AND edition = '2026-11-28'`, [old!.subscriber_id])).rows[0].id;
    let newer;
    while (!newer) newer = (await b.claimBatch(50)).find((r) => r.id === mine);
    await b.recordSent([{ id: newer.id, place: newer.place, messageId: 'n', response: '250 ok', at: new Date() }]);
    const mark = async () => (await s.pool.query(`SELECT watermark FROM ${SQL_WATERMARKS} w WHERE id = $1`, [old!.subscriber_id])).rows[0].watermark;
    expect(await mark()).toBe(8);
    // The relay's answer to the old row comes at last: recorded, and its papers (up to 10) count as delivered.
    expect(await a.recordSent([{ id: old!.id, place: old!.place, messageId: 'o', response: '250 ok', at: new Date() }])).toEqual([old!.id]);
    expect(await mark()).toBe(10);
  });

  it('counts failures in a row: a delivery in between starts the count again, without writing the subscriber', async () => {
    const a = new PgLedger(s.pool, 'host:1:1');
    const only = (await s.pool.query(`SELECT min(id)::int AS id FROM subscribers`)).rows[0].id as number;
    await s.pool.query(`UPDATE subscribers SET status = 'unsubscribed' WHERE id <> $1`, [only]);
    const slot = async (day: number) => {
      await planEdition(s.pool, { edition: `2026-11-${day}`, toPaper: day });
      return (await a.claimBatch(1))[0]!;
    };
    const fail = async (day: number) => a.markFailed((await slot(day)).id, { code: 550, response: '550 no such user' }, 2);
    // What the console shows (the subscriber's record): their status and failures in a row.
    const person = async () => {
      const r = (await findSubscriberById(s.pool, only))!;
      return { status: r.status, hardFailures: r.hardFailures, watermark: r.watermark };
    };
    expect(await fail(20)).toBe(false);
    const sent = await slot(21);
    await a.recordSent([{ id: sent.id, place: sent.place, messageId: 'm', response: '250 ok', at: new Date() }]);
    expect(await person()).toEqual({ status: 'confirmed', hardFailures: 0, watermark: 21 });
    expect(await fail(22)).toBe(false);
    expect(await person()).toEqual({ status: 'confirmed', hardFailures: 1, watermark: 21 });
    expect(await fail(23)).toBe(true);
    expect(await person()).toEqual({ status: 'suppressed', hardFailures: 2, watermark: 21 });
  });

  it("turns a gone claimant's rows in flight unknown, and leaves a live claimant's alone", async () => {
    await planEdition(s.pool, { edition: '2026-11-27', toPaper: 10 });
    const lock = new ClaimantLock(s.url, 'here:1:1', s.name);
    await lock.hold();
    try {
      const live = await new PgLedger(s.pool, 'here:1:1').claimBatch(3);
      const gone = await new PgLedger(s.pool, 'gone:2:2').claimBatch(4);
      const recovered = await recoverStale(s.pool);
      expect(recovered.sort((x, y) => x - y)).toEqual(gone.map((g) => g.id));
      const r = await s.pool.query(`SELECT status, count(*)::int AS n FROM digests WHERE claimed_by IS NOT NULL GROUP BY status ORDER BY status`);
      expect(r.rows).toEqual([
        { status: 'sending', n: live.length },
        { status: 'unknown', n: 4 },
      ]);
      const w = await s.pool.query(`SELECT max(watermark)::int AS w FROM ${SQL_WATERMARKS} w`);
      expect(w.rows[0].w).toBe(0);
    } finally {
      await lock.release();
    }
    expect((await recoverStale(s.pool)).length).toBe(3);
  });
});
