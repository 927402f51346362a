// Advisory locks are per database, not per schema: two deployments (or two test files) in two schemas of one
// PostgreSQL database must never take each other's planning turn. A planner in schema A holding its turn
// leaves schema B's planner free to plan, and only A's second planner stands aside.
import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { migratePostgres } from '../../src/db/postgres/migrate.ts';
import { planEdition, SQL_TRY_EDITION_LOCK } from '../../src/ledger/postgres/plan.ts';
import { planDigestsPg } from '../../src/plan/postgres/plan.ts';
import { SQL_TRY_PLAN_LOCK } from '../../src/plan/postgres/plan-sql.ts';
import { seedSubscribers } from '../helpers/pg-seed.ts';
import { postgresForTests, type TestSchema } from '../helpers/postgres.ts';

const pg = await postgresForTests();

describe.skipIf(!pg.reachable)('PostgreSQL locks are per schema', () => {
  const schemas: TestSchema[] = [];
  afterAll(async () => {
    for (const s of schemas) await s.drop();
  });

  it("a planner holding schema A's turn does not stop schema B's planner", async () => {
    const [a, b] = [await pg.schema(), await pg.schema()];
    schemas.push(a, b);
    for (const s of [a, b]) {
      await migratePostgres(s.pool);
      await seedSubscribers(s.pool, 50);
    }
    const holder = await a.pool.connect();
    try {
      await holder.query('BEGIN');
      // A planner of schema A in the middle of its work: it holds both planners' turns, taken by their own statements.
      expect((await holder.query(SQL_TRY_PLAN_LOCK)).rows[0].ok).toBe(true);
      expect((await holder.query(SQL_TRY_EDITION_LOCK, ['2026-11-27'])).rows[0].ok).toBe(true);
      const clock = new ManualClock(new Date('2026-11-27T20:00:00Z'));
      expect(await planEdition(b.pool, { edition: '2026-11-27', toPaper: 40 })).toEqual({ ran: true, planned: 50 });
      expect((await planDigestsPg(b.pool, { clock, mode: 'now' })).ran).toBe(true);
      expect((await planDigestsPg(a.pool, { clock, mode: 'now' })).ran).toBe(false);
      expect(await planEdition(a.pool, { edition: '2026-11-27', toPaper: 40 })).toEqual({ ran: false, planned: 0 });
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
    expect(await planEdition(a.pool, { edition: '2026-11-27', toPaper: 40 })).toEqual({ ran: true, planned: 50 });
  });
});
