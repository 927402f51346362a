-- 015: one paper list per query per plan run (src/ledger/lists.ts), shared by every ledger row that refers
-- to it: a row planned this way holds only a reference (its lists and which of its topic bits each is for),
-- the loader merges the lists when the digest is read. Rows planned before keep their own list. Only
-- additions: older code reading this file still works.
--
-- items: per paper (any order), its id (u32), its upvotes when planned (i32) and the query's bm25 score
-- (f64), little-endian. A list's rows share its planned_at (one plan run), which is how retention knows
-- when no row refers to it any more.
CREATE TABLE query_lists (
  id          INTEGER PRIMARY KEY,
  query_id    INTEGER NOT NULL,  -- no foreign key: a list outlives a query deleted while rows refer to it
  from_paper  INTEGER NOT NULL,  -- papers above this id
  to_paper    INTEGER NOT NULL,  -- up to this one
  items       BLOB NOT NULL,
  paper_count INTEGER NOT NULL,
  planned_at  TEXT NOT NULL
) STRICT;
CREATE INDEX query_lists_planned ON query_lists (planned_at);
