// Creating ledger rows on PostgreSQL: the planner (plan/postgres/plan.ts) decides which slots get a row
// (its temp tables plan_slots, plan_lists, plan_counts); this set-based INSERT … SELECT writes the rows, as
// ledger/create.ts does on SQLite, so every write to `digests` stays in the ledger's folder.

/** A list id as 6 bytes little-endian, in hex (lists.ts encodeRefs). */
const LE6_HEX = Array.from({ length: 6 }, (_, i) => `lpad(to_hex((l.list_id >> ${8 * i}) & 255), 2, '0')`).join(' || ');

/**
 * Step 4: one reference row per reader. Bits: all their topics by (position, id), muted ones too, so the
 * bits stay put (ledger/create.ts); refs: their unmuted topics' lists in bit order; paper_count: distinct
 * papers of those queries in (watermark, through] (step 3c). verp_nonce: 52 random bits and a sign (bounces/verp.ts).
 */
export const SQL_PLAN_REF_ROWS = `
  WITH bits AS MATERIALIZED (
    SELECT t.subscriber_id AS sid, t.id AS tid, t.query_id, t.muted,
           row_number() OVER (PARTITION BY t.subscriber_id ORDER BY t.position, t.id) - 1 AS bit
    FROM plan_slots e JOIN topics t ON t.subscriber_id = e.id
    WHERE e.grouped
  ),
  refs AS (
    SELECT b.sid, count(l.list_id) AS k, string_agg(b.tid::text, ',' ORDER BY b.bit) AS ids,
           string_agg(lpad(to_hex(b.bit), 2, '0') || ${LE6_HEX}, '' ORDER BY b.bit) FILTER (WHERE l.list_id IS NOT NULL) AS hex
    FROM bits b LEFT JOIN plan_lists l ON l.qid = b.query_id AND b.muted = 0
    GROUP BY b.sid
  ),
  ins AS (
  INSERT INTO digests (subscriber_id, edition, status, from_paper, to_paper, topic_ids, items, paper_count, planned_at, verp_nonce)
  SELECT e.id, e.slot, 'planned', e.watermark, e.through, r.ids, decode('01' || lpad(to_hex(r.k), 2, '0') || r.hex, 'hex'),
         c.n, $1, floor((random() - 0.5) * 9007199254740992)::bigint
  FROM plan_slots e
  JOIN refs r ON r.sid = e.id
  JOIN plan_counts c ON c.sid = e.id
  WHERE e.grouped AND c.n > 0 AND r.k > 0
  ORDER BY e.id
  ON CONFLICT (subscriber_id, edition) DO NOTHING
  RETURNING paper_count
  )
  SELECT count(*)::int AS planned, coalesce(sum(paper_count), 0)::int AS items FROM ins`;
