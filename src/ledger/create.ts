// Creating ledger rows: the planner decides which slots get a row (its temp table plan_slots, planner.ts,
// and the run's group lists plan_groups, groups.ts); these set-based INSERT … SELECT statements write the
// rows, one statement per chunk, inside the planner's chunk transaction. A row's papers are packed in SQL
// (items.ts). The model pass (feedback/model-pass.ts) then rewrites the lists of readers with a model.
import type { Db } from '../db/open.ts';
import { runBatched } from '../db/batch-values.ts';
import { statement } from '../db/statements.ts';

/** Papers in the rows planned after a row id (the run's count of items). */
const SQL_ITEMS_AFTER = `SELECT coalesce(sum(paper_count), 0) AS n FROM digests WHERE id > ?`;
/** The newest ledger row before planning (the rows after it are this run's). */
const SQL_MAX_DIGEST = `SELECT coalesce(max(id), 0) AS id FROM digests`;

/**
 * Step 2b: one row per subscriber planned on their own with a hit, its papers packed (see items.ts) in
 * display order: more topics matched, then upvotes, then relevance (bm25: lower is better), then paper
 * id (step 2c then reorders the rows of readers with a model). Topic bits index the subscriber's topics ordered by
 * position (muted ones too, so the bits stay put), listed in topic_ids. No row for a subscriber with
 * nothing new. The grouped ones (step 2a) get the same rows from SQL_COPY_GROUP_ROWS below.
 */
const SQL_PLAN_ROWS = `
  WITH bits AS MATERIALIZED (
    SELECT t.subscriber_id, t.id, t.query_id, t.muted,
           row_number() OVER (PARTITION BY t.subscriber_id ORDER BY t.position, t.id) - 1 AS bit
    FROM plan_slots e CROSS JOIN topics t ON t.subscriber_id = e.id -- CROSS: walk this chunk, not every topic
    WHERE e.open = 0 AND e.through IS NOT NULL AND e.grouped = 0
  ),
  items AS MATERIALIZED (
    SELECT e.id AS sid, m.paper_id, m.paper_id - e.watermark AS off, sum(1 << b.bit) AS mask,
           count(*) AS n, min(m.score) AS best
    FROM plan_slots e
    JOIN bits b ON b.subscriber_id = e.id AND b.muted = 0
    JOIN query_matches m ON m.query_id = b.query_id AND m.paper_id > e.watermark AND m.paper_id <= e.through
    WHERE e.open = 0 AND e.grouped = 0
    GROUP BY e.id, m.paper_id
  ),
  widths AS MATERIALIZED (
    SELECT sid, ow, CASE WHEN (ow + mw) % 2 = 1 THEN mw + 1 ELSE mw END AS mw
    FROM (SELECT sid, length(printf('%x', max(off))) AS ow, length(printf('%x', max(mask))) AS mw FROM items GROUP BY sid)
  ),
  topic_lists AS MATERIALIZED (
    SELECT subscriber_id AS sid, group_concat(id, ',' ORDER BY bit) AS ids FROM bits GROUP BY subscriber_id
  )
  -- verp_nonce: 52 random bits and a sign, so a bounce address's tag fits this row only (bounces/verp.ts)
  INSERT INTO digests (subscriber_id, edition, status, from_paper, to_paper, topic_ids, items, paper_count, planned_at, verp_nonce)
  SELECT e.id, e.slot, 'planned', e.watermark, e.through, tl.ids,
         unhex(printf('%02x', w.ow * 16 + w.mw) ||
               group_concat(printf('%0*x%0*x', w.ow, i.off, w.mw, i.mask), ''
                            ORDER BY i.n DESC, p.upvotes DESC, i.best ASC, i.paper_id ASC)),
         count(*), :now, random() >> 11
  FROM items i
  JOIN plan_slots e ON e.id = i.sid
  JOIN widths w ON w.sid = i.sid
  JOIN topic_lists tl ON tl.sid = i.sid
  JOIN papers p ON p.id = i.paper_id
  GROUP BY i.sid`;

/** Hex of the identity map for up to 20 topics (MAX_TOPICS): bit j is bit j. */
const IDENTITY = Array.from({ length: 20 }, (_, j) => j.toString(16).padStart(2, '0')).join('');

/**
 * One ledger row per grouped subscriber whose group has papers: the group's list, mapped to the
 * subscriber's bits unless they agree (items.ts). map: for each unmuted topic in ascending query id (the
 * group's bit order), its bit among all the subscriber's topics by position (SQL_PLAN_ROWS's bits).
 */
const SQL_COPY_GROUP_ROWS = `
  WITH bits AS MATERIALIZED (
    SELECT t.subscriber_id, t.id, t.query_id, t.muted,
           row_number() OVER (PARTITION BY t.subscriber_id ORDER BY t.position, t.id) - 1 AS bit
    FROM plan_slots e CROSS JOIN topics t ON t.subscriber_id = e.id -- CROSS: walk this chunk, not every topic
    WHERE e.grouped = 1
  ),
  maps AS MATERIALIZED (
    SELECT subscriber_id AS sid, group_concat(id, ',' ORDER BY bit) AS ids,
           group_concat(CASE WHEN muted = 0 THEN printf('%02x', bit) END, '' ORDER BY query_id) AS map,
           sum(muted = 0) AS k
    FROM bits GROUP BY subscriber_id
  )
  -- verp_nonce: 52 random bits and a sign, so a bounce address's tag fits this row only (bounces/verp.ts)
  INSERT INTO digests (subscriber_id, edition, status, from_paper, to_paper, topic_ids, items, paper_count, planned_at, verp_nonce)
  SELECT e.id, e.slot, 'planned', e.watermark, e.through, mp.ids,
         unhex(CASE WHEN mp.map = substr('${IDENTITY}', 1, 2 * mp.k) THEN g.list
                    ELSE printf('00%02x', mp.k) || mp.map || g.list END),
         g.paper_count, :now, random() >> 11
  FROM plan_slots e
  JOIN plan_groups g ON g.qkey = e.qkey AND g.watermark = e.watermark AND g.through = e.through
  JOIN maps mp ON mp.sid = e.id
  WHERE e.grouped = 1 AND g.paper_count > 0`;


/** The row-writing statements of one connection, for the planner's chunk transaction. */
export interface RowWriters {
  /** The newest ledger row's id before planning (the rows after it are this chunk's). */
  lastId(): number;
  /** Rows of the chunk's subscribers planned on their own (plan_slots.grouped = 0); returns rows written. */
  planAlone(now: string): number;
  /** Rows of the chunk's grouped subscribers, their group's list mapped to their bits; returns rows written. */
  copyGroupRows(now: string): number;
  /** Papers in the rows planned after a row id. */
  itemsAfter(before: number): number;
}

export function rowWriters(db: Db): RowWriters {
  const planRows = statement(db, SQL_PLAN_ROWS);
  const copyRows = statement(db, SQL_COPY_GROUP_ROWS);
  const itemsOf = statement(db, SQL_ITEMS_AFTER);
  const maxDigest = statement(db, SQL_MAX_DIGEST);
  return {
    lastId: () => (maxDigest.get() as { id: number }).id,
    planAlone: (now) => planRows.run({ now }).changes,
    copyGroupRows: (now) => copyRows.run({ now }).changes,
    itemsAfter: (before) => (itemsOf.get(before) as { n: number }).n,
  };
}

/** A row's new packed list and count (step 2c: a reader's own order and trim, packed in JavaScript, pack.ts). */
export interface ItemsRewrite {
  id: number;
  items: Buffer;
  paperCount: number;
}

/**
 * Rewrites rows' packed lists and counts (the model pass, inside the planner's chunk transaction), a hundred
 * per statement: one UPDATE per row was ~5% of the pass (BENCHMARKS.md, reader models, fourth pass).
 */
export function rewriteItemsMany(db: Db, rewrites: readonly ItemsRewrite[]): void {
  const values: unknown[] = [];
  for (const r of rewrites) values.push(r.id, r.items, r.paperCount);
  runBatched(db, 3, values, (tuples) => `WITH v(id, items, n) AS (VALUES ${tuples}) UPDATE digests SET items = v.items, paper_count = v.n FROM v WHERE digests.id = v.id`);
}
