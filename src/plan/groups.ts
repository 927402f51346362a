// Planning once per topic set (PlanOptions.lists = 'per-topic-set'; the default plans once per query,
// query-lists.ts): subscribers who share a paper list share its planning.
//
// A subscriber without a feedback profile gets a list that depends only on their unmuted queries and
// their watermark: the papers matched in (watermark, through], ordered by topics matched, upvotes and
// relevance, none of which is theirs alone. Only which bit of a mask names which of their topics is
// theirs (bits follow their topics' positions, muted ones included). So the planner computes each
// distinct (unmuted queries, watermark, through) once per run, a "group", with masks over the group's
// own bits (its queries in ascending id), and gives each subscriber of the group the same bytes, with a
// few bytes of their own saying which of their bits each group bit is (ledger/items.ts, mapped layout; none
// when the two orders agree). Subscribers with a profile (their own scores and suggestions) are planned
// one by one as before (SQL_PLAN_ROWS, ledger/create.ts), and so is everyone when PlanOptions.perSubscriber is
// set: the reference the grouped plan is tested against (tests/integration/plan-groups.test.ts).
//
// Decision: groups by the SET of queries, not the typed order (9x fewer lists than one per subscriber on
// a broad population, 2.3x by order). The group lists live in a temp table for the whole run (plan_groups:
// derived data, cleared at the start and end of a run and at PLAN_GROUPS_MAX); two runs on one connection
// may share or empty it, a cost, never a wrong row. Measurements: BENCHMARKS.md, "The ledger".

/** Groups kept per run before the table is emptied (a broad 1M population has ~14k sets). */
export const PLAN_GROUPS_MAX = 25_000;

/**
 * Run-long group lists. qkey: the group's unmuted query ids, ascending, comma-separated (group bit i =
 * the i-th). list: the packed list in hex (ledger/items.ts). Only subscribers with something new are grouped,
 * so every group has a paper; one without (none can be) would keep a NULL list and plan no row, as a
 * subscriber with nothing new gets none.
 */
export const SQL_CREATE_GROUPS = `
  CREATE TEMP TABLE IF NOT EXISTS plan_groups (
    id          INTEGER PRIMARY KEY,
    qkey        TEXT NOT NULL,
    watermark   INTEGER NOT NULL,
    through     INTEGER NOT NULL,
    list        TEXT,
    paper_count INTEGER,
    UNIQUE (qkey, watermark, through)
  )`;
export const SQL_CLEAR_GROUPS = `DELETE FROM plan_groups`;
/** Groups so far (ids are never reused until the table is emptied). */
export const SQL_GROUPS_SIZE = `SELECT coalesce(max(id), 0) AS n FROM plan_groups`;

/** The chunk's groups not seen yet this run. */
export const SQL_ADD_GROUPS = `
  INSERT OR IGNORE INTO plan_groups (qkey, watermark, through)
  SELECT DISTINCT e.qkey, e.watermark, e.through FROM plan_slots e WHERE e.grouped = 1`;

/**
 * The lists of the groups added above (ids above :from, the size before): SQL_PLAN_ROWS's items (ledger/create.ts), widths
 * and order, per group instead of per subscriber (no profile score: grouped subscribers have none).
 * json_each turns the key back into its queries, its array index being the group bit.
 */
export const SQL_PLAN_GROUPS = `
  WITH todo AS MATERIALIZED (
    SELECT g.id, g.watermark, g.through, CAST(j.value AS INTEGER) AS query_id, j.key AS bit
    FROM plan_groups g, json_each('[' || g.qkey || ']') j
    WHERE g.id > :from
  ),
  -- CROSS JOIN: walk the new groups' queries and look their matches up (query_matches' primary key), never
  -- the other way. SQLite chose to scan every match and probe the materialized todo list: with thousands of
  -- distinct phrases (48,000 matches a day, bench:plan --profile diverse) that was 3x the list's own cost.
  items AS MATERIALIZED (
    SELECT g.id AS gid, m.paper_id, m.paper_id - g.watermark AS off, sum(1 << g.bit) AS mask,
           count(*) AS n, min(m.score) AS best
    FROM todo g
    CROSS JOIN query_matches m ON m.query_id = g.query_id AND m.paper_id > g.watermark AND m.paper_id <= g.through
    GROUP BY g.id, m.paper_id
  ),
  widths AS MATERIALIZED (
    SELECT gid, ow, CASE WHEN (ow + mw) % 2 = 1 THEN mw + 1 ELSE mw END AS mw
    FROM (SELECT gid, length(printf('%x', max(off))) AS ow, length(printf('%x', max(mask))) AS mw FROM items GROUP BY gid)
  ),
  lists AS MATERIALIZED (
    SELECT i.gid,
           printf('%02x', w.ow * 16 + w.mw) ||
             group_concat(printf('%0*x%0*x', w.ow, i.off, w.mw, i.mask), ''
                          ORDER BY i.n DESC, p.upvotes DESC, i.best ASC, i.paper_id ASC) AS list,
           count(*) AS n
    FROM items i
    JOIN widths w ON w.gid = i.gid
    JOIN papers p ON p.id = i.paper_id
    GROUP BY i.gid
  )
  UPDATE plan_groups SET list = l.list, paper_count = l.n FROM lists l WHERE plan_groups.id = l.gid`;



