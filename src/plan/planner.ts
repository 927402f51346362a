// The ledger's rows, planned before anything is sent: one digest row per subscriber per slot (their local
// delivery date, see slots.ts), planned with set-based SQL (never subscribers x papers in JS).
//
// A row covers the papers (watermark, through]: everything matched for the subscriber since their last
// DELIVERED digest. Missed days therefore merge into one digest (catch-up), and a paper whose digest
// failed or was lost in a crash rides in the next one. A paper keeps its id when it comes back in a
// later batch or from another source, so it is never in two rows' ranges.
//
// The planner decides which slots get a row (plan_slots); the ledger writes the rows (ledger/create.ts).
// Decision: one short transaction per chunk of subscribers (by id range), idempotent (the slot is marked
// run with its rows), sized from the last chunk's time (CHUNK_TARGET_MS), with a gap after each
// (CHUNK_GAP_SHARE) so other writers get the lock. Each query's papers are listed once per run and a row
// refers to its topics' lists (query-lists.ts; PlanOptions.lists = 'per-topic-set': one list per topic set,
// groups.ts); PlanOptions.perSubscriber plans everyone one by one: the same digests (tested). Step 2c
// (src/feedback/model-pass.ts) then reorders the rows of readers with a model and adds their suggestions.
// Measurements behind these: BENCHMARKS.md, "The ledger".
import { setTimeout as sleep } from 'node:timers/promises';
import { statement } from '../db/statements.ts';
import type { Clock } from '../clock.ts';
import { retryWhileBusy } from '../db/busy.ts';
import type { Db } from '../db/open.ts';
import type { Logger } from '../log.ts';
import { createModelPass, type ModelPassTotals } from '../feedback/model-pass.ts';
import { rowWriters } from '../ledger/index.ts';
import {
  PLAN_GROUPS_MAX,
  SQL_ADD_GROUPS,
  SQL_CLEAR_GROUPS,
  SQL_CREATE_GROUPS,
  SQL_GROUPS_SIZE,
  SQL_PLAN_GROUPS,
} from './groups.ts';
import { QueryListRun } from './query-lists.ts';
import { SQL_SLOT_HAS_COME, zonesNow, type PlanMode } from './slots.ts';


export type { PlanMode } from './slots.ts';

export interface PlanOptions {
  clock: Clock;
  mode: PlanMode;
  /** Plan this one subscriber only (preview, the first digest right after confirming). */
  onlySubscriber?: number;
  /** Subscribers per transaction (by id range): fixed when given, else adapted to CHUNK_TARGET_MS. */
  chunkSize?: number;
  /** Let the event loop run between chunks (default true; a preview inside a savepoint says false). */
  yieldBetweenChunks?: boolean;
  /**
   * When a chunk cannot take the write lock (another process writes), try it again for up to this long,
   * letting the event loop run between tries (default 0: the connection's busy_timeout only).
   */
  busyWaitMs?: number;
  /**
   * Plan every subscriber on their own, none through a group (groups.ts): the reference the grouped plan
   * is tested against, and a way out should grouping ever be suspected. Same rows either way.
   */
  perSubscriber?: boolean;
  /**
   * How the subscribers planned together share their lists: 'per-query' (default) lists each query once
   * per run and writes per reader a reference to theirs (query-lists.ts); 'per-topic-set' copies one list
   * per topic set to each reader (groups.ts). Same digests either way (tested).
   */
  lists?: 'per-query' | 'per-topic-set';
  /** Groups kept before the run's group table is emptied (default PLAN_GROUPS_MAX; tests use a small one). */
  groupCacheMax?: number;
  /** Called once at the end with what the reader models did (readers ordered, suggestions, time): benchmarks. */
  onModels?: (totals: ModelPassTotals) => void;
  /** Called after each chunk with its time (the write lock's hold, plus any wait for it) and slots: benchmarks. */
  onChunk?: (ms: number, slots: number) => void;
  logger?: Logger;
}

export interface PlanResult {
  /** Subscribers whose slot ran (with or without a digest). */
  slots: number;
  /** Digest rows written. */
  planned: number;
  /** Papers across those rows. */
  items: number;
}

/**
 * First chunk, in subscribers; later chunks are sized to take about CHUNK_TARGET_MS each. Small, as a
 * chunk's cost is unknown until one has run: a first chunk of 1,000 broad subscribers held the lock
 * 0.65-1.1 s (their groups all new; one by one, as long), and growing 4x per chunk costs friendly
 * planning a few more short chunks.
 */
export const DEFAULT_PLAN_CHUNK = 100;
/** PlanOptions.lists when not given. */
export const DEFAULT_LISTS: NonNullable<PlanOptions['lists']> = 'per-query';
export const CHUNK_TARGET_MS = 40;
/** Pause after each chunk, as a share of its time (bounds: 2-50 ms), so other writers get the lock. */
export const CHUNK_GAP_SHARE = 0.25;
const CHUNK_MIN = 20;
const CHUNK_MAX = 50_000;

/** Time zones of the subscribers who could receive something (index subscribers_status). */
const SQL_ACTIVE_TIMEZONES = `SELECT DISTINCT timezone FROM subscribers WHERE status = 'confirmed'`;

/** Per time zone, the local calendar facts of "now", computed in JS (Intl, DST-correct). */
const SQL_CREATE_TEMP = `
  CREATE TEMP TABLE IF NOT EXISTS plan_local (
    timezone      TEXT PRIMARY KEY,
    local_date    TEXT NOT NULL,
    local_hour    INTEGER NOT NULL,
    local_weekday INTEGER NOT NULL
  );
  CREATE TEMP TABLE IF NOT EXISTS plan_slots (
    id        INTEGER PRIMARY KEY, -- subscriber
    slot      TEXT NOT NULL,
    watermark INTEGER NOT NULL,
    through   INTEGER,            -- NULL: no unmuted topic
    open      INTEGER NOT NULL,   -- 1: a row is still open (or this slot has one): no new row
    qkey      TEXT,               -- unmuted query ids, ascending (groups.ts)
    grouped   INTEGER NOT NULL    -- 1: planned through their group (groups.ts), 0: on their own
  )`;
const SQL_CLEAR_PLAN_LOCAL = `DELETE FROM plan_local`;
const SQL_INSERT_PLAN_LOCAL = `
  INSERT INTO plan_local (timezone, local_date, local_hour, local_weekday)
  VALUES (:timezone, :date, :hour, :weekday)`;

const SQL_SUBSCRIBER_ID_RANGE = `SELECT min(id) AS lo, max(id) AS hi FROM subscribers WHERE status = 'confirmed'`;
const SQL_MAX_PAPER = `SELECT coalesce(max(id), 0) AS id FROM papers`;

/**
 * Step 1 of a chunk: the subscribers of [:lo, :hi] whose slot has come. `through` is the highest paper
 * id every one of their unmuted queries has been matched up to (capped by :maxPaper), so a paper the
 * matcher has not looked at yet is never skipped by the watermark. `open`: a row of theirs is still
 * planned, sending or retrying (its papers overlap: a second row would show them twice), or a row
 * already has this slot's date (a row of the old batch-dated model): the slot runs without a new row.
 * The open rows are found through the partial index digests_subscriber_open (migration 007), whose WHERE
 * the query repeats word for word (an IN list would not let SQLite use it).
 */
const SQL_FIND_SLOTS = `
  INSERT INTO plan_slots (id, slot, watermark, through, open, grouped)
  SELECT s.id, l.local_date, s.watermark,
         min(:maxPaper, (SELECT min(q.matched_through) FROM topics t JOIN queries q ON q.id = t.query_id
                         WHERE t.subscriber_id = s.id AND t.muted = 0)),
         EXISTS (SELECT 1 FROM digests d WHERE d.subscriber_id = s.id AND (d.status = 'planned' OR d.status = 'retry' OR d.status = 'sending'))
           OR EXISTS (SELECT 1 FROM digests d WHERE d.subscriber_id = s.id AND d.edition = l.local_date),
         0
  FROM subscribers s
  JOIN plan_local l ON l.timezone = s.timezone
  WHERE s.id BETWEEN :lo AND :hi
    AND +s.status = 'confirmed' -- '+': walk the id range, not the status index, per chunk
    AND (s.paused_until IS NULL OR s.paused_until <= :now)
    AND ${SQL_SLOT_HAS_COME}`;

/**
 * Step 2a (groups.ts): who is planned through their group. Everyone who may get a row and has an unmuted
 * topic that matched something new (a reader with a model too: step 2c reorders their copy). Those with
 * nothing new stay out: they would only add an empty group each (half of the friendly list: 39,000 groups
 * at 100k, about 10% of its planning time).
 */
const SQL_MARK_GROUPED = `
  UPDATE plan_slots
  SET grouped = 1,
      qkey = (SELECT group_concat(t.query_id, ',' ORDER BY t.query_id) FROM topics t
              WHERE t.subscriber_id = plan_slots.id AND t.muted = 0)
  WHERE open = 0 AND through IS NOT NULL
    AND EXISTS (SELECT 1 FROM topics t
                JOIN query_matches m ON m.query_id = t.query_id AND m.paper_id > plan_slots.watermark AND m.paper_id <= plan_slots.through
                WHERE t.subscriber_id = plan_slots.id AND t.muted = 0)`;

/** SQL_MARK_GROUPED without the topic set's key, which planning per query (query-lists.ts) does not use. */
const SQL_MARK_GROUPED_BY_QUERY = `
  UPDATE plan_slots SET grouped = 1
  WHERE open = 0 AND through IS NOT NULL
    AND EXISTS (SELECT 1 FROM topics t
                JOIN query_matches m ON m.query_id = t.query_id AND m.paper_id > plan_slots.watermark AND m.paper_id <= plan_slots.through
                WHERE t.subscriber_id = plan_slots.id AND t.muted = 0)`;

/**
 * Step 3: the slot has run for every subscriber found in step 1, with a row or without. The one write to
 * `subscribers` outside src/subscribers/: it is set-based over this chunk's temp table and must be in the
 * chunk's transaction, so it stays beside the statements it completes.
 */
const SQL_MARK_SLOTS_RUN = `
  UPDATE subscribers SET last_slot = (SELECT e.slot FROM plan_slots e WHERE e.id = subscribers.id), last_slot_at = :now
  WHERE id IN (SELECT id FROM plan_slots)`;

const SQL_COUNT_CHUNK = `SELECT count(*) AS slots FROM plan_slots`;
/** Subscribers of the chunk that SQL_PLAN_ROWS (ledger/create.ts) would plan (none: the statement is skipped). */
const SQL_COUNT_ALONE = `SELECT count(*) AS n FROM plan_slots WHERE open = 0 AND through IS NOT NULL AND grouped = 0`;
const SQL_CLEAR_SLOTS = `DELETE FROM plan_slots`;

/** Writes the ledger rows of every slot that has come. Safe to run from several processes at once. */
export async function planDigests(db: Db, opts: PlanOptions): Promise<PlanResult> {
  const now = opts.clock.now().toISOString();
  db.exec(SQL_CREATE_TEMP);
  db.exec(SQL_CREATE_GROUPS);
  const s = statements(db);
  const grouping = opts.perSubscriber === true ? 0 : 1;

  s.clearLocal.run();
  const zones = (s.zones.all() as { timezone: string }[]).map((z) => z.timezone);
  for (const z of zonesNow(opts.clock, zones, opts.logger)) s.insertLocal.run(z);
  const maxPaper = (s.maxPaper.get() as { id: number }).id;
  const range =
    opts.onlySubscriber === undefined
      ? (s.range.get() as { lo: number | null; hi: number | null })
      : { lo: opts.onlySubscriber, hi: opts.onlySubscriber };

  const total: PlanResult = { slots: 0, planned: 0, items: 0 };
  if (range.lo === null || range.hi === null) return total;
  // Step 2c's reader models score the run's papers from one index, built once per run.
  const models = createModelPass(db, opts.clock.now());
  const perQuery = (opts.lists ?? DEFAULT_LISTS) === 'per-query' ? new QueryListRun(db, now, maxPaper, models.listReader) : undefined;
  const params = { now, maxPaper, due: opts.mode === 'due' ? 1 : 0, grouping, models, perQuery };
  s.clearGroups.run(); // a run's groups are its own: upvotes and matches may have changed since the last
  try {
    await planChunks(s, opts, params, range as { lo: number; hi: number }, total);
  } finally {
    // The run's temp rows go, and with them their pages (temp.auto_vacuum, db/open.ts): a temp database
    // left at its high-water mark kept ~1,700 dirty pages that every later COMMIT on this connection walked
    // (the sending thread's ledger writes: 4.4% of a broad run's samples).
    s.clearGroups.run();
    s.clearSlots.run();
  }
  opts.onModels?.(models.totals());
  opts.logger?.info({ ...total, mode: opts.mode, models: models.totals() }, 'digests planned');
  return total;
}

type ChunkParams = {
  now: string;
  maxPaper: number;
  due: number;
  grouping: number;
  models: ReturnType<typeof createModelPass>;
  perQuery: QueryListRun | undefined;
};

async function planChunks(s: Statements, opts: PlanOptions, params: ChunkParams, range: { lo: number; hi: number }, total: PlanResult) {
  let chunk = opts.chunkSize ?? DEFAULT_PLAN_CHUNK;
  const adapt = opts.chunkSize === undefined;
  for (let lo = range.lo; lo <= range.hi; ) {
    const started = performance.now();
    // IMMEDIATE: take the write lock first, so two planners cannot both see "slot not run yet".
    const bounds = { ...params, lo, hi: lo + chunk - 1 };
    const once = () => params.perQuery?.chunk(() => s.planChunk.immediate(bounds)) ?? s.planChunk.immediate(bounds);
    const r = opts.yieldBetweenChunks === false ? once() : await retryWhileBusy(once, opts.busyWaitMs ?? 0);
    total.slots += r.slots;
    total.planned += r.planned;
    total.items += r.items;
    lo += chunk;
    const ms = Math.max(performance.now() - started, 1);
    opts.onChunk?.(ms, r.slots);
    if (adapt) {
      chunk = Math.round(Math.min(CHUNK_MAX, Math.max(CHUNK_MIN, chunk * Math.min(4, Math.max(0.25, CHUNK_TARGET_MS / ms)))));
    }
    if ((s.groupsSize.get() as { n: number }).n > (opts.groupCacheMax ?? PLAN_GROUPS_MAX)) s.clearGroups.run();
    if (opts.yieldBetweenChunks !== false && lo <= range.hi) await sleep(Math.min(50, Math.max(2, ms * CHUNK_GAP_SHARE)));
  }
}

type Statements = ReturnType<typeof prepare>;
const cache = new WeakMap<Db, Statements>();

function statements(db: Db): Statements {
  let s = cache.get(db);
  if (!s) cache.set(db, (s = prepare(db)));
  return s;
}

function prepare(db: Db) {
  const findSlots = statement(db, SQL_FIND_SLOTS);
  const rows = rowWriters(db);
  const markRun = statement(db, SQL_MARK_SLOTS_RUN);
  const count = statement(db, SQL_COUNT_CHUNK);
  const clear = statement(db, SQL_CLEAR_SLOTS);
  const markGrouped = statement(db, SQL_MARK_GROUPED);
  const markByQuery = statement(db, SQL_MARK_GROUPED_BY_QUERY);
  const addGroups = statement(db, SQL_ADD_GROUPS);
  const planGroups = statement(db, SQL_PLAN_GROUPS);
  const groupsSize = statement(db, SQL_GROUPS_SIZE);
  const countAlone = statement(db, SQL_COUNT_ALONE);
  return {
    clearGroups: statement(db, SQL_CLEAR_GROUPS),
    clearSlots: clear,
    groupsSize,
    zones: statement(db, SQL_ACTIVE_TIMEZONES),
    clearLocal: statement(db, SQL_CLEAR_PLAN_LOCAL),
    insertLocal: statement(db, SQL_INSERT_PLAN_LOCAL),
    maxPaper: statement(db, SQL_MAX_PAPER),
    range: statement(db, SQL_SUBSCRIBER_ID_RANGE),
    planChunk: db.transaction((p: ChunkParams & { lo: number; hi: number }): PlanResult => {
      clear.run();
      findSlots.run({ now: p.now, maxPaper: p.maxPaper, due: p.due, lo: p.lo, hi: p.hi });
      const slots = (count.get() as { slots: number }).slots;
      if (slots === 0) return { slots: 0, planned: 0, items: 0 };
      const before = rows.lastId();
      let planned = 0;
      // The ledger writes the rows (ledger/create.ts); the planner has decided whose, in plan_slots.
      // Per query, the rows of readers with a model are written final, step 2c done (query-lists.ts).
      if (p.grouping === 1 && p.perQuery) {
        if (markByQuery.run().changes > 0) planned += p.perQuery.planChunk(p.models);
      } else if (p.grouping === 1 && markGrouped.run().changes > 0) {
        const from = (groupsSize.get() as { n: number }).n;
        if (addGroups.run().changes > 0) planGroups.run({ from });
        planned += rows.copyGroupRows(p.now);
      }
      const alone = planned > 0 && p.perQuery ? rows.lastId() : before;
      // Those planned on their own (all of them in perSubscriber mode).
      const planAlone = p.grouping === 0 || (countAlone.get() as { n: number }).n > 0 ? rows.planAlone(p.now) : 0;
      planned += planAlone;
      // Step 2c: the rows of readers with a model, in their model's order, with their suggestions.
      if (planned > 0 && (!p.perQuery || planAlone > 0)) p.models.apply(alone);
      markRun.run({ now: p.now });
      clear.run();
      const items = planned > 0 ? rows.itemsAfter(before) : 0;
      return { slots, planned, items };
    }),
  };
}
