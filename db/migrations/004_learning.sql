-- 004: digests that learn (issue 13): code links, a reader's cap, upvotes>= and like: topics,
-- feedback from the email with a per-subscriber term profile, "you may also like" suggestions.
-- Only additions: no existing column changes meaning, so older code reading this file still works.

-- A paper's code repository (Hugging Face's paper API `githubRepo`, or `codeUrl` in a batch file). http(s) only.
ALTER TABLE papers ADD COLUMN code_url TEXT;

-- A reader's own cap: the most papers one email lists (the rest behind the "more papers" link). NULL: no cap.
ALTER TABLE subscribers ADD COLUMN max_papers INTEGER CHECK (max_papers IS NULL OR max_papers BETWEEN 1 AND 500);
-- "You may also like": up to three papers no topic matched but the feedback profile ranks high. 1 = on.
ALTER TABLE subscribers ADD COLUMN suggestions INTEGER NOT NULL DEFAULT 1 CHECK (suggestions IN (0, 1));

-- What a distinct query runs. queries.fts stays the unique key (what two subscribers typing the same
-- query share); for a plain topic it is also the FTS5 expression. For `… upvotes>=N` and `like:` topics
-- the key carries the filter and match_expr holds the FTS5 expression actually run.
ALTER TABLE queries ADD COLUMN match_expr TEXT;                              -- NULL: run queries.fts
ALTER TABLE queries ADD COLUMN min_upvotes INTEGER NOT NULL DEFAULT 0;
-- like: topics: bm25 score a paper must reach, as a fraction of the examples' own score (scores are
-- negative, lower is better), and the example's terms (JSON [{"w": surface word, "s": stem, "x": weight}]).
ALTER TABLE queries ADD COLUMN like_self REAL;                              -- the examples' own bm25 score
ALTER TABLE queries ADD COLUMN like_terms TEXT;

-- Examples a like: topic named that were not in the database, looked up through the arXiv source.
-- Kept apart from papers: an old paper fetched as an example must never arrive in anyone's digest.
CREATE TABLE like_examples (
  paper_key  TEXT PRIMARY KEY,
  title      TEXT NOT NULL,
  abstract   TEXT NOT NULL,
  fetched_at TEXT NOT NULL
) STRICT;

-- Papers' distinctive terms (top tf-idf stems of title + abstract), written by the matcher for new
-- papers: what profiles are scored against, set-based (a join on term), never per paper in JS.
CREATE TABLE paper_terms (
  paper_id INTEGER NOT NULL REFERENCES papers (id) ON DELETE CASCADE,
  term     TEXT NOT NULL,   -- FTS5 stem (as in fts5vocab)
  weight   REAL NOT NULL,   -- tf-idf, the paper's vector normalised to length 1
  PRIMARY KEY (paper_id, term)
) WITHOUT ROWID, STRICT;
CREATE INDEX paper_terms_term ON paper_terms (term, paper_id);

-- "More like this" (+1) and "less like this" (-1), one vote per subscriber and paper (the last one counts).
CREATE TABLE feedback (
  subscriber_id INTEGER NOT NULL REFERENCES subscribers (id) ON DELETE CASCADE,
  paper_id      INTEGER NOT NULL REFERENCES papers (id),
  vote          INTEGER NOT NULL CHECK (vote IN (-1, 1)),
  at            TEXT NOT NULL,
  PRIMARY KEY (subscriber_id, paper_id)
) WITHOUT ROWID, STRICT;

-- Each subscriber's profile: Rocchio-style term weights, rebuilt in SQL from their feedback and paper_terms.
CREATE TABLE profile_terms (
  subscriber_id INTEGER NOT NULL REFERENCES subscribers (id) ON DELETE CASCADE,
  term          TEXT NOT NULL,
  weight        REAL NOT NULL,
  rank          INTEGER NOT NULL,  -- 1 = the strongest positive term; suggestions look at the first few only
  PRIMARY KEY (subscriber_id, term)
) WITHOUT ROWID, STRICT;

-- Papers a digest row suggests ("you may also like"), written with the row by the planner.
CREATE TABLE digest_suggestions (
  digest_id INTEGER NOT NULL REFERENCES digests (id) ON DELETE CASCADE,
  paper_id  INTEGER NOT NULL REFERENCES papers (id),
  score     REAL NOT NULL,
  PRIMARY KEY (digest_id, paper_id)
) WITHOUT ROWID, STRICT;

-- Document frequencies of the FTS5 index (term, doc = papers holding it, cnt = occurrences): what
-- like: topics and paper_terms weigh terms with (idf). Reading one term is an index lookup.
CREATE VIRTUAL TABLE papers_vocab USING fts5vocab (papers_fts, 'row');
