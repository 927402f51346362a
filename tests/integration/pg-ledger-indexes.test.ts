// Migration 017 on PostgreSQL: the ledger lost digests_edition, digests_in_flight and digests_subscriber_open
// (every claim and record paid for them). What read through them must give the same answers and stay
// index-served: the console's and `digest status`'s per-edition counts (now over digest_editions' id ranges,
// even when zones interleave two editions' ids in one planning statement), and the planner's "has an open
// digest" (now through digests_open, or each reader's own rows).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PG_BY_STATE, PG_DIGEST_DAYS, PG_WAITING } from '../../src/admin/postgres/console-sql.ts';
import { migratePostgres } from '../../src/db/postgres/migrate.ts';
import { SQL_CLAIMANTS, SQL_MARK_CLAIMANT_UNKNOWN, SQL_OPEN_COUNT } from '../../src/ledger/postgres/ledger-sql.ts';
import { SQL_FIND_SLOTS } from '../../src/plan/postgres/plan-sql.ts';
import { PG_EDITION_COUNTS, PG_EDITION_FAILURES, PG_SENT_SINCE } from '../../src/report/postgres/figures-sql.ts';
import { postgresForTests, type TestSchema } from '../helpers/postgres.ts';
import { seedSubscribers } from '../helpers/pg-seed.ts';

const pg = await postgresForTests();

const READERS = 20_000;
/** Four past editions, every reader's rows in one statement, ids interleaved across editions (s.id, then edition). */
const SQL_HISTORY = `
  INSERT INTO digests (subscriber_id, edition, status, from_paper, to_paper, paper_count, planned_at, claimed_by, smtp_response)
  SELECT s.id, e.ed, CASE WHEN s.id % 50 = 0 THEN 'failed' WHEN s.id % 70 = 0 THEN 'unknown' ELSE 'sent' END,
         0, 10, 3, e.ed, 'w:old', CASE WHEN s.id % 50 = 0 THEN '550 no such user' END
  FROM subscribers s CROSS JOIN unnest('{2026-11-20,2026-11-21,2026-11-22,2026-11-23}'::text[]) AS e (ed)
  ORDER BY s.id, e.ed`;
/** Two zones planned in one statement: even readers get 2026-11-25, odd ones 2026-11-24; open rows of every kind. */
const SQL_CURRENT = `
  INSERT INTO digests (subscriber_id, edition, status, from_paper, to_paper, paper_count, planned_at, claimed_by, claimed_at, next_attempt_at)
  SELECT s.id, CASE WHEN s.id % 2 = 0 THEN '2026-11-25' ELSE '2026-11-24' END, st.status, 10, 20, 3, '2026-11-24',
         CASE WHEN st.status IN ('sending', 'sent', 'retry') THEN 'w:' || (s.id % 3) END,
         CASE WHEN st.status IN ('sending', 'sent', 'retry') THEN '2026-11-24T09:00:00.000Z' END,
         CASE WHEN st.status = 'retry' THEN '2026-11-24T10:00:00.000Z' END
  FROM subscribers s
  CROSS JOIN LATERAL (SELECT CASE WHEN s.id % 10 < 5 THEN 'sent' WHEN s.id % 10 < 8 THEN 'planned'
                                  WHEN s.id % 10 = 8 THEN 'sending' ELSE 'retry' END AS status) st
  WHERE s.id % 7 <> 0
  ORDER BY s.id`;

type Row = Record<string, unknown>;
const numbers = (rows: Row[]) => rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v])));
const byKey = (rows: Row[]) => [...rows].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

describe.skipIf(!pg.reachable)('the PostgreSQL ledger without per-edition and per-subscriber indexes (migration 017)', () => {
  let s: TestSchema;
  /** Every (edition, status) count, read the plain way: what the reworked statements must agree with. */
  let truth: Map<string, Map<string, number>>;
  const count = (edition: string, ...statuses: string[]) => {
    const m = truth.get(edition) ?? new Map<string, number>();
    return statuses.length === 0 ? [...m.values()].reduce((a, b) => a + b, 0) : statuses.reduce((n, st) => n + (m.get(st) ?? 0), 0);
  };

  beforeAll(async () => {
    s = await pg.schema();
    await migratePostgres(s.pool);
    await seedSubscribers(s.pool, READERS);
    await s.pool.query(SQL_HISTORY);
    await s.pool.query(SQL_CURRENT);
    await s.pool.query('ANALYZE');
    truth = new Map();
    for (const r of (await s.pool.query<{ edition: string; status: string; n: number }>(
      'SELECT edition, status, count(*)::int AS n FROM digests GROUP BY edition, status',
    )).rows) {
      if (!truth.has(r.edition)) truth.set(r.edition, new Map());
      truth.get(r.edition)!.set(r.status, r.n);
    }
  }, 120_000);
  afterAll(async () => s?.drop());

  it('counts each edition as a plain GROUP BY would, though two editions share one id range', async () => {
    const ranges = (await s.pool.query('SELECT edition, first_id::int AS lo, last_id::int AS hi FROM digest_editions ORDER BY edition')).rows;
    expect(ranges.map((r) => r.edition)).toEqual([...truth.keys()].sort());
    const days = numbers((await s.pool.query(PG_DIGEST_DAYS, ['2026-11-21', '2026-11-24'])).rows);
    expect(byKey(days)).toEqual(
      byKey(['2026-11-21', '2026-11-22', '2026-11-23', '2026-11-24'].map((day) => ({ day, sent: count(day, 'sent'), failed: count(day, 'failed', 'unknown') }))),
    );
    const states = numbers((await s.pool.query(PG_BY_STATE, ['2026-11-24'])).rows);
    const expected: Row[] = [];
    for (const ed of ['2026-11-24', '2026-11-25']) {
      for (const [status, n] of truth.get(ed)!) if (status !== 'sent') expected.push({ edition: ed, status, n });
      expected.push({ edition: ed, status: null, n: count(ed) });
    }
    expect(byKey(states)).toEqual(byKey(expected));
    const sent = numbers((await s.pool.query(PG_SENT_SINCE, ['2026-11-23'])).rows)[0];
    expect(sent).toEqual({ n: count('2026-11-23', 'sent') + count('2026-11-24', 'sent') + count('2026-11-25', 'sent') });
  });

  it("lists the newest editions that still have rows: an edition whose rows are all gone is not one of them", async () => {
    const client = await s.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(`DELETE FROM digests WHERE edition = '2026-11-25'`);
      const editions = numbers((await client.query(PG_EDITION_COUNTS, [2])).rows);
      expect(editions).toEqual(
        ['2026-11-24', '2026-11-23'].map((ed) => ({
          edition: ed, planned: count(ed), sent: count(ed, 'sent'), pending: count(ed, 'planned', 'sending', 'retry'),
          failed: count(ed, 'failed'), suppressed: count(ed, 'suppressed'), unknown: count(ed, 'unknown'),
        })),
      );
      const failures = numbers((await client.query(PG_EDITION_FAILURES, [2])).rows);
      expect(failures).toEqual([{ edition: '2026-11-23', code: null, response: '550 no such user', n: count('2026-11-23', 'failed') }]);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });

  it('tells the planner which readers have an open digest, for all readers at once and for one', async () => {
    const open = new Set(
      (await s.pool.query<{ id: number }>(`SELECT DISTINCT subscriber_id::int AS id FROM digests WHERE status IN ('planned', 'retry', 'sending')`)).rows.map((r) => r.id),
    );
    expect(open.size).toBeGreaterThan(1000);
    const slots = async (one: number | null) => {
      const c = await s.pool.connect();
      try {
        await c.query('BEGIN');
        await c.query(SQL_FIND_SLOTS, [['UTC'], ['2026-11-27'], [9], [5], 100, '2026-11-27T09:00:00.000Z', 0, one]);
        return (await c.query<{ id: number; open: boolean }>('SELECT id::int AS id, open FROM plan_slots ORDER BY id')).rows;
      } finally {
        await c.query('ROLLBACK');
        c.release();
      }
    };
    const all = await slots(null);
    expect(all).toHaveLength(READERS);
    expect(all.filter((r) => r.open).map((r) => r.id)).toEqual([...open].sort((a, b) => a - b));
    // one reader: its own rows by (subscriber_id, edition). 16 planned, 18 sending, 19 retry; 20 sent, 14 none (SQL_CURRENT)
    for (const id of [16, 18, 19, 20, 14]) expect(await slots(id)).toEqual([{ id, open: open.has(id) }]);
  });

  it('finds the rows in flight by claimant: gone claimants are read, their rows alone marked unknown', async () => {
    const claimants = (await s.pool.query<{ claimed_by: string }>(SQL_CLAIMANTS)).rows.map((r) => r.claimed_by).sort();
    expect(claimants).toEqual(['w:0', 'w:1', 'w:2']);
    const client = await s.pool.connect();
    try {
      await client.query('BEGIN');
      const before = (await client.query(`SELECT count(*)::int AS n FROM digests WHERE status = 'sending' AND claimed_by = 'w:1'`)).rows[0].n;
      const marked = await client.query(SQL_MARK_CLAIMANT_UNKNOWN, ['w:1', 'gone']);
      expect(marked.rowCount).toBe(before);
      const left = (await client.query(`SELECT claimed_by, status, count(*)::int AS n FROM digests WHERE status = 'sending' GROUP BY 1, 2 ORDER BY 1`)).rows;
      expect(left.map((r) => r.claimed_by)).toEqual(['w:0', 'w:2']);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });

  // Per edition: the primary key over the edition's id range; in flight: digests_open's claimed part alone.
  it('reads each of these through an index, never a scan of the whole ledger (EXPLAIN on ~100k rows)', async () => {
    const cases: Array<[string, string, unknown[], RegExp]> = [
      ['PG_DIGEST_DAYS', PG_DIGEST_DAYS, ['2026-11-21', '2026-11-24'], /Index Cond: \(\(id >= e\.first_id\) AND \(id <= e\.last_id\)\)/],
      ['PG_BY_STATE', PG_BY_STATE, ['2026-11-24'], /Index Cond: \(\(id >= e\.first_id\) AND \(id <= e\.last_id\)\)/],
      ['PG_SENT_SINCE', PG_SENT_SINCE, ['2026-11-24'], /Index Cond: \(\(id >= e\.first_id\) AND \(id <= e\.last_id\)\)/],
      ['PG_EDITION_COUNTS', PG_EDITION_COUNTS, [3], /Index Cond: \(\(id >= e\.first_id\) AND \(id <= e\.last_id\)\)/],
      ['SQL_CLAIMANTS', SQL_CLAIMANTS, [], /Index Cond: \(claimed_by IS NOT NULL\)/],
      ['SQL_MARK_CLAIMANT_UNKNOWN', SQL_MARK_CLAIMANT_UNKNOWN, ['w:1', 'gone'], /Index Cond: \(claimed_by = /],
      ['SQL_OPEN_COUNT', SQL_OPEN_COUNT, [], /digests_open/],
      ['PG_WAITING', PG_WAITING, [50], /Index Cond: \(claimed_by IS NOT NULL\)/],
    ];
    for (const [name, sql, params, index] of cases) {
      const plan = (await s.pool.query(`EXPLAIN ${sql}`, params)).rows.map((r) => r['QUERY PLAN'] as string).join('\n');
      expect({ name, seqScan: /Seq Scan on digests/.test(plan), index: index.test(plan) }).toEqual({ name, seqScan: false, index: true });
    }
  });
});
