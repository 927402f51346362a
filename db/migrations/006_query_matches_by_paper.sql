-- Issue 10: the renderer builds one card per paper per run with the highlights of every topic that
-- matched it (src/render/card-highlight.ts); the loader asks which queries matched a paper, once per
-- paper and run (src/render/view.ts SQL_PAPER_TOPICS). query_matches is keyed (query_id, paper_id),
-- so that question scanned the whole table; this index answers it directly.
CREATE INDEX query_matches_paper ON query_matches (paper_id, query_id);
