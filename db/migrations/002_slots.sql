-- 002: editions follow each subscriber's schedule (DESIGN.md, "Digest semantics", revised).
--
-- Before: an edition was the date of the newest batch, so one batch dated in the future stopped every
-- digest, and papers of a day already mailed waited for a newer date. Now:
--   * digests.edition is the subscriber's own local delivery date (their slot). Rows of the old model
--     keep the batch date they were planned under; their history (sent, failed, unknown) stays as it was.
--   * subscribers.last_slot is the local date of the last slot that ran for them, whether or not it
--     sent anything (a slot with nothing matched is still that day's delivery); it is the old
--     last_digest_date, which meant the same for the slots that sent something.
--   * digests.papers (JSON, 8.5 KB per row at 180 papers) becomes digests.items, a packed BLOB read
--     through src/plan/items.ts (about 2 bytes per paper), with the row's topic ids in topic_ids.
--     items is set to NULL once the row is older than DIGEST_RETENTION_DAYS (items_pruned_at says when).
-- Watermarks, suppressions, tokens (token_salt) and every row's status are kept: nothing is resent,
-- nothing is lost. Open rows (planned, retry) stay sendable: their paper lists are converted below.

ALTER TABLE subscribers ADD COLUMN last_slot TEXT;       -- subscriber-local YYYY-MM-DD
ALTER TABLE subscribers ADD COLUMN last_slot_at TEXT;    -- UTC time that slot ran
UPDATE subscribers SET last_slot = last_digest_date;
ALTER TABLE subscribers DROP COLUMN last_digest_date;

ALTER TABLE digests ADD COLUMN topic_ids TEXT NOT NULL DEFAULT ''; -- "12,13,14": bit i of a mask = i-th id
ALTER TABLE digests ADD COLUMN items BLOB;                         -- packed (see src/plan/items.ts); NULL once pruned
ALTER TABLE digests ADD COLUMN items_pruned_at TEXT;

-- Old rows: topic ids in ascending order, then each paper's offset above from_paper and topic mask,
-- packed exactly as the planner packs them (header byte: offset and mask widths in hex digits).
UPDATE digests SET topic_ids = coalesce((
  SELECT group_concat(tid, ',' ORDER BY tid)
  FROM (SELECT DISTINCT t.value AS tid FROM json_each(digests.papers) p, json_each(p.value, '$.t') t)), '');

CREATE TEMP TABLE m002_items AS
  SELECT d.id AS digest_id, p.key AS pos,
         json_extract(p.value, '$.p') - d.from_paper AS off,
         (SELECT coalesce(sum(1 << (SELECT count(*) FROM json_each('[' || d.topic_ids || ']') o WHERE o.value < t.value)), 0)
          FROM json_each(p.value, '$.t') t) AS mask
  FROM digests d, json_each(d.papers) p;

CREATE TEMP TABLE m002_widths AS
  SELECT digest_id, ow, CASE WHEN (ow + mw) % 2 = 1 THEN mw + 1 ELSE mw END AS mw
  FROM (SELECT digest_id, length(printf('%x', max(off))) AS ow, length(printf('%x', max(mask))) AS mw
        FROM m002_items GROUP BY digest_id);

UPDATE digests SET items = (
  SELECT unhex(printf('%02x', w.ow * 16 + w.mw) || group_concat(printf('%0*x%0*x', w.ow, i.off, w.mw, i.mask), '' ORDER BY i.pos))
  FROM m002_items i JOIN m002_widths w ON w.digest_id = i.digest_id
  WHERE i.digest_id = digests.id);
-- A row that listed no paper (never written by the planner) gets an empty list, not NULL (= pruned).
UPDATE digests SET items = unhex('') WHERE items IS NULL;

DROP TABLE m002_items;
DROP TABLE m002_widths;
ALTER TABLE digests DROP COLUMN papers;

-- Pruning walks only rows that still hold a paper list.
CREATE INDEX digests_prunable ON digests (planned_at) WHERE items IS NOT NULL;
-- The welcome digest's watermark and the overdue check look papers up by ingest time.
CREATE INDEX papers_created ON papers (created_at);
-- The planner asks "does this subscriber have an open row, or a row for this slot?" per subscriber.
CREATE INDEX digests_subscriber_status ON digests (subscriber_id, status);
