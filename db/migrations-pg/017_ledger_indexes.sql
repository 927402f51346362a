-- 017 (PostgreSQL only): fewer index entries per claim and record (issue 39 item 5; BENCHMARKS.md
-- "PostgreSQL: fewer ledger indexes", 2026-11-27). A row's status is in partial indexes' predicates, so no
-- claim or record is a HOT update: each one inserts into every index its new version matches. Before this,
-- a digest (claim + record) paid 8 index inserts; now 4 (primary key, (subscriber_id, edition), digests_open
-- at the claim; digests_prunable too on rows holding a list).
--   * digests_subscriber_open + digests_in_flight -> digests_open, one partial index over the open rows keyed
--     by claimant: rows in flight are its non-NULL keys (claimed_by IS NOT NULL), planned rows its NULLs; the
--     planner's "has an open digest" reads it as a set (plan-sql.ts SQL_FIND_SLOTS).
--   * digests_edition (edition, id, status), updated by every claim and record -> digest_editions: the id
--     range of each edition, one row per edition, kept by a statement trigger on INSERT (never on UPDATE);
--     per-edition reads walk the primary key over that range (console-sql.ts, figures-sql.ts).
DROP INDEX digests_subscriber_open;
DROP INDEX digests_in_flight;
DROP INDEX digests_edition;
CREATE INDEX digests_open ON digests (claimed_by) WHERE status IN ('planned', 'retry', 'sending');

-- first_id..last_id holds every row of the edition (and may hold others: zones plan neighbouring editions
-- in one statement); readers filter on edition too. Ids never change, so the range only ever widens.
CREATE TABLE digest_editions (
  edition  text PRIMARY KEY,
  first_id bigint NOT NULL,
  last_id  bigint NOT NULL
);
INSERT INTO digest_editions (edition, first_id, last_id) SELECT edition, min(id), max(id) FROM digests GROUP BY edition;

-- Once per INSERT statement, over its rows (a transition table): a planning run of 1M rows adds a few rows
-- here, not 1M. Schema-qualified by the trigger's table, whatever the session's search_path.
CREATE FUNCTION digest_editions_widen() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format(
    'INSERT INTO %I.digest_editions AS e (edition, first_id, last_id)
     SELECT edition, min(id), max(id) FROM new_rows GROUP BY edition
     ON CONFLICT (edition) DO UPDATE SET first_id = least(e.first_id, excluded.first_id),
                                         last_id = greatest(e.last_id, excluded.last_id)', TG_TABLE_SCHEMA);
  RETURN NULL;
END $$;
CREATE TRIGGER digests_widen_editions AFTER INSERT ON digests
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION digest_editions_widen();

-- Room for the watermark's update after each delivery to stay on its page (HOT: no index touched). At 90,
-- the planner's last_slot update used the room and 14% of watermark updates were HOT; at 50, 92%. New pages
-- only: an existing table gets it with `VACUUM FULL subscribers` (a lock on the table; optional).
ALTER TABLE subscribers SET (fillfactor = 50);
