// Planning the slots that have come on PostgreSQL: the rows the SQLite planner writes with its per-query
// lists (planner.ts, plan/query-lists.ts) - same subscribers, same editions, same (from, to], same
// paper_count, and items that ledger/lists.ts reads to the same papers in the same order - in ONE
// transaction of set-based statements (plan-sql.ts). JavaScript only packs each query's list (per query,
// never per reader); the readers' reference rows are built in SQL.
// Safe from any number of processes: a transaction advisory lock lets one planner per tick through (the
// others return at once, ran: false; `digest run`, which sends next, waits for it and then finds its slots
// planned), and the rows are idempotent all the same (UNIQUE (subscriber_id,
// edition) with ON CONFLICT DO NOTHING; last_slot moves only forward), so two planners that both got
// through still plan each subscriber+slot once (tests/integration/pg-edition.test.ts).
// Then, in the same transaction, the reader models' pass (feedback/postgres/model-pass.ts): the rows of
// readers with a model or votes in their model's order, with their suggestions, as on SQLite.
import type pg from 'pg';
import type { Clock } from '../../clock.ts';
import { inTransaction } from '../../db/postgres/pool.ts';
import { applyModelPassPg } from '../../feedback/postgres/model-pass.ts';
import { encodeList } from '../../ledger/lists.ts';
import { SQL_PLAN_REF_ROWS } from '../../ledger/postgres/create-sql.ts';
import type { Logger } from '../../log.ts';
import type { PlanResult } from '../planner.ts';
import { zonesNow, type PlanMode } from '../slots.ts';
import {
  SQL_ACTIVE_TIMEZONES,
  SQL_COUNT_SLOTS,
  SQL_CREATE_PLAN_LISTS,
  SQL_FIND_SLOTS,
  SQL_INSERT_LISTS,
  SQL_LISTS_NEEDED,
  SQL_MARK_GROUPED,
  SQL_MARK_SLOTS_RUN,
  SQL_MAX_DIGEST,
  SQL_MAX_PAPER,
  SQL_NO_JIT,
  SQL_COUNT_BY_BITS,
  SQL_COUNT_BY_ROWS,
  SQL_TRY_PLAN_LOCK,
  SQL_WAIT_PLAN_LOCK,
} from './plan-sql.ts';

export interface PgPlanOptions {
  clock: Clock;
  mode: PlanMode;
  /** Plan this one subscriber only (the first digest right after confirming). */
  onlySubscriber?: number;
  /**
   * Take the planning lock (default true: another process planning now means ran: false at once); 'wait':
   * wait for that process to commit, then plan what is still due (nothing, usually): a caller that sends
   * right after planning (`digest run`) must not claim before this tick's rows are there. false shows the
   * unique key alone holds (tests).
   */
  lock?: boolean | 'wait';
  logger?: Logger;
  /** 'rows': count each reader's papers by joined rows even when bit strings would do (tests: both give the same). */
  countBy?: 'auto' | 'rows';
  /** Called with each step's time (benchmarks). */
  onStep?: (step: string, ms: number) => void;
}

export interface PgPlanResult extends PlanResult {
  /** False: another process was planning; nothing done. */
  ran: boolean;
}

interface NeededList {
  qid: number;
  lo: number;
  hi: number;
  ids: number[];
  upvotes: number[];
  scores: number[];
}

/** Bit-string counting (SQL_COUNT_BY_BITS) while the lists' bit strings stay below this many bits in all. */
const MAX_COUNT_BITS = 64_000_000;

/** A list's papers as a bit string over (base, maxPaper]: bit k is paper base + 1 + k. */
function bitString(ids: readonly number[], base: number, length: number): string {
  const bits = new Uint8Array(length).fill(48); // '0'
  for (const id of ids) bits[id - base - 1] = 49; // '1'
  return Buffer.from(bits).toString('latin1');
}

/**
 * Steps 3a-3c: one list per query the readers with something new need (plan_lists: query -> list), then
 * each reader's paper count (plan_counts). JavaScript packs each list once (per query, never per reader).
 */
async function writeLists(c: pg.PoolClient, maxPaper: number, now: string, countBy: PgPlanOptions['countBy'], step: (name: string) => void): Promise<void> {
  await c.query(SQL_CREATE_PLAN_LISTS);
  const needed = (await c.query<NeededList>(SQL_LISTS_NEEDED, [maxPaper])).rows;
  if (needed.length === 0) return;
  const base = Math.min(...needed.map((l) => l.lo));
  const length = maxPaper - base;
  const byBits = countBy !== 'rows' && length > 0 && length * needed.length <= MAX_COUNT_BITS;
  const ids = needed.map((l) => l.ids.map(Number));
  await c.query(SQL_INSERT_LISTS, [
    needed.map((l) => l.qid),
    needed.map((l) => l.lo),
    needed.map((l) => l.hi),
    needed.map((l, i) => encodeList(ids[i]!, l.upvotes, l.scores)),
    needed.map((l) => l.ids.length),
    needed.map((_, i) => (byBits ? bitString(ids[i]!, base, length) : null)),
    now,
  ]);
  step('lists');
  if (byBits) await c.query(SQL_COUNT_BY_BITS, [base]);
  else await c.query(SQL_COUNT_BY_ROWS);
  step(byBits ? 'counts (bits)' : 'counts (rows)');
}

/** Writes the ledger rows of every slot that has come, as planDigests does on SQLite (per-query lists). */
export async function planDigestsPg(pool: pg.Pool | pg.PoolClient, opts: PgPlanOptions): Promise<PgPlanResult> {
  const now = opts.clock.now().toISOString();
  let t = performance.now();
  const step = (name: string) => {
    const at = performance.now();
    opts.onStep?.(name, at - t);
    t = at;
  };
  const result = await inTransaction(pool, async (c): Promise<PgPlanResult> => {
    const lock = opts.lock ?? true;
    if (lock !== false && !(await c.query<{ ok: boolean }>(lock === 'wait' ? SQL_WAIT_PLAN_LOCK : SQL_TRY_PLAN_LOCK)).rows[0]!.ok) {
      return { ran: false, slots: 0, planned: 0, items: 0 };
    }
    // Few, large statements whose plans are simple: JIT compiling them cost more than it saved.
    await c.query(SQL_NO_JIT);
    const zones = (await c.query<{ timezone: string }>(SQL_ACTIVE_TIMEZONES)).rows.map((z) => z.timezone);
    const local = zonesNow(opts.clock, zones, opts.logger);
    const maxPaper = (await c.query<{ id: number }>(SQL_MAX_PAPER)).rows[0]!.id;
    await c.query(SQL_FIND_SLOTS, [
      local.map((z) => z.timezone),
      local.map((z) => z.date),
      local.map((z) => z.hour),
      local.map((z) => z.weekday),
      maxPaper,
      now,
      opts.mode === 'due' ? 1 : 0,
      opts.onlySubscriber ?? null,
    ]);
    const slots = (await c.query<{ n: number }>(SQL_COUNT_SLOTS)).rows[0]!.n;
    step('slots');
    if (slots === 0) return { ran: true, slots: 0, planned: 0, items: 0 };
    let planned = 0;
    let items = 0;
    if (((await c.query(SQL_MARK_GROUPED)).rowCount ?? 0) > 0) {
      step('readers');
      await writeLists(c, maxPaper, now, opts.countBy, step);
      const before = (await c.query<{ id: number }>(SQL_MAX_DIGEST)).rows[0]!.id;
      const r = (await c.query<{ planned: number; items: number }>(SQL_PLAN_REF_ROWS, [now])).rows[0]!;
      step('rows');
      planned = r.planned;
      items = r.items;
      if (planned > 0) {
        const models = await applyModelPassPg(c, before, opts.clock.now());
        items += models.paperDelta;
        step('models');
      }
    }
    await c.query(SQL_MARK_SLOTS_RUN, [now]);
    step('mark');
    return { ran: true, slots, planned, items };
  });
  opts.logger?.info({ ...result, mode: opts.mode }, 'digests planned (PostgreSQL)');
  return result;
}
