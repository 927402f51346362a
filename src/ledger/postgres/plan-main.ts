// Planning one edition on PostgreSQL as a process of its own (tests' "two planners at once" story):
//   DATABASE_URL=postgres://… [DATABASE_SCHEMA=…] EDITION=2026-11-27 TO_PAPER=100 [PLAN_LOCK=0] node dist/ledger/postgres/plan-main.js
// Prints one JSON line: whether it ran (got the slot's lock) and how many rows it planned.
import { planEdition } from './plan.ts';
import { createPool } from '../../db/postgres/pool.ts';

const pool = createPool(process.env.DATABASE_URL ?? '', { max: 1 });
const result = await planEdition(pool, {
  edition: process.env.EDITION ?? new Date().toISOString().slice(0, 10),
  toPaper: Number(process.env.TO_PAPER ?? 0),
  lock: process.env.PLAN_LOCK !== '0',
});
await pool.end();
process.stdout.write(`${JSON.stringify(result)}\n`);
