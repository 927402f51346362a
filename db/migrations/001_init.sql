-- 001: the whole schema of the first release.
-- Times are ISO-8601 UTC strings ('2025-11-25T07:00:00.000Z'); dates are 'YYYY-MM-DD'.

-- Key/value settings the service keeps for itself (for example a generated SECRET_KEY in local mode).
CREATE TABLE settings (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT;

-- One row per ingested batch (a day of one source, a file, an API post).
-- Re-ingesting identical content finds the same row and writes nothing.
CREATE TABLE batches (
  id              INTEGER PRIMARY KEY,
  source          TEXT NOT NULL,
  date            TEXT NOT NULL,            -- the day the batch is for; names the edition
  content_hash    TEXT NOT NULL,            -- sha256 of the normalised papers
  paper_count     INTEGER NOT NULL,
  new_paper_count INTEGER NOT NULL,
  ingested_at     TEXT NOT NULL,
  UNIQUE (source, date, content_hash)
) STRICT;
CREATE INDEX batches_date ON batches (date);

-- One row per paper, whatever the source. id grows in ingest order: a digest covers an id range.
CREATE TABLE papers (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
  paper_key      TEXT NOT NULL UNIQUE,      -- normalised id: arXiv id without version, or source id
  title          TEXT NOT NULL,
  abstract       TEXT NOT NULL,
  authors        TEXT NOT NULL DEFAULT '[]', -- JSON array of names
  url            TEXT NOT NULL,
  published_at   TEXT,
  upvotes        INTEGER NOT NULL DEFAULT 0,
  categories     TEXT NOT NULL DEFAULT '[]', -- JSON array, e.g. ["cs.LG","cs.CL"]
  first_batch_id INTEGER NOT NULL REFERENCES batches (id),
  created_at     TEXT NOT NULL,
  updated_at     TEXT NOT NULL
);

CREATE TABLE batch_papers (
  batch_id INTEGER NOT NULL REFERENCES batches (id),
  paper_id INTEGER NOT NULL REFERENCES papers (id),
  PRIMARY KEY (batch_id, paper_id)
) WITHOUT ROWID, STRICT;

-- Full-text index over papers (external content, kept in sync by triggers).
CREATE VIRTUAL TABLE papers_fts USING fts5 (
  title, abstract, authors, categories,
  content = 'papers', content_rowid = 'id',
  tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER papers_fts_insert AFTER INSERT ON papers BEGIN
  INSERT INTO papers_fts (rowid, title, abstract, authors, categories)
  VALUES (new.id, new.title, new.abstract, new.authors, new.categories);
END;
CREATE TRIGGER papers_fts_delete AFTER DELETE ON papers BEGIN
  INSERT INTO papers_fts (papers_fts, rowid, title, abstract, authors, categories)
  VALUES ('delete', old.id, old.title, old.abstract, old.authors, old.categories);
END;
CREATE TRIGGER papers_fts_update AFTER UPDATE OF title, abstract, authors, categories ON papers BEGIN
  INSERT INTO papers_fts (papers_fts, rowid, title, abstract, authors, categories)
  VALUES ('delete', old.id, old.title, old.abstract, old.authors, old.categories);
  INSERT INTO papers_fts (rowid, title, abstract, authors, categories)
  VALUES (new.id, new.title, new.abstract, new.authors, new.categories);
END;

-- Subscribers. Nothing is sent unless status = 'confirmed'.
CREATE TABLE subscribers (
  id               INTEGER PRIMARY KEY,
  email            TEXT NOT NULL COLLATE NOCASE UNIQUE,
  status           TEXT NOT NULL DEFAULT 'pending'
                   CHECK (status IN ('pending', 'confirmed', 'unsubscribed', 'suppressed')),
  token_salt       TEXT NOT NULL,            -- random, part of every signed link; rotating it revokes links
  timezone         TEXT NOT NULL,
  delivery_hour    INTEGER NOT NULL DEFAULT 7 CHECK (delivery_hour BETWEEN 0 AND 23),
  frequency        TEXT NOT NULL DEFAULT 'daily' CHECK (frequency IN ('daily', 'weekly')),
  weekly_day       INTEGER NOT NULL DEFAULT 1 CHECK (weekly_day BETWEEN 0 AND 6), -- 0 = Sunday
  paused_until     TEXT,
  watermark        INTEGER NOT NULL DEFAULT 0, -- papers.id through which digests were delivered
  last_digest_date TEXT,                        -- subscriber-local date of the last planned digest
  hard_failures    INTEGER NOT NULL DEFAULT 0,  -- consecutive permanent SMTP failures
  confirm_sent_at  TEXT,
  created_at       TEXT NOT NULL,
  confirmed_at     TEXT,
  unsubscribed_at  TEXT,
  suppressed_at    TEXT
) STRICT;
CREATE INDEX subscribers_status ON subscribers (status, timezone);

-- Distinct topic queries, by their normalised FTS5 expression: each is matched once per new paper.
CREATE TABLE queries (
  id              INTEGER PRIMARY KEY,
  fts             TEXT NOT NULL UNIQUE,
  matched_through INTEGER NOT NULL DEFAULT 0  -- papers.id this query has been matched up to
) STRICT;

-- A subscriber's topics, as typed, pointing at the distinct query.
CREATE TABLE topics (
  id            INTEGER PRIMARY KEY,
  subscriber_id INTEGER NOT NULL REFERENCES subscribers (id) ON DELETE CASCADE,
  query_id      INTEGER NOT NULL REFERENCES queries (id),
  text          TEXT NOT NULL,
  muted         INTEGER NOT NULL DEFAULT 0,
  position      INTEGER NOT NULL,
  UNIQUE (subscriber_id, query_id)
) STRICT;
CREATE INDEX topics_query ON topics (query_id, subscriber_id);

-- Result of matching: which distinct query matched which paper, with its bm25 score (lower is better).
CREATE TABLE query_matches (
  query_id INTEGER NOT NULL REFERENCES queries (id) ON DELETE CASCADE,
  paper_id INTEGER NOT NULL REFERENCES papers (id),
  score    REAL NOT NULL,
  PRIMARY KEY (query_id, paper_id)
) WITHOUT ROWID, STRICT;

-- The ledger: one row per subscriber per edition, written before anything is sent.
CREATE TABLE digests (
  id              INTEGER PRIMARY KEY,
  subscriber_id   INTEGER NOT NULL REFERENCES subscribers (id) ON DELETE CASCADE,
  edition         TEXT NOT NULL,             -- date of the newest batch covered
  status          TEXT NOT NULL DEFAULT 'planned'
                  CHECK (status IN ('planned', 'sending', 'retry', 'sent', 'failed', 'unknown', 'suppressed')),
  from_paper      INTEGER NOT NULL,          -- exclusive
  to_paper        INTEGER NOT NULL,          -- inclusive
  papers          TEXT NOT NULL,             -- JSON [{"p": paperId, "t": [topicId…], "s": score}] in display order
  paper_count     INTEGER NOT NULL,
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT,
  claimed_by      TEXT,
  claimed_at      TEXT,
  message_id      TEXT,
  smtp_code       INTEGER,
  smtp_response   TEXT,
  planned_at      TEXT NOT NULL,
  sent_at         TEXT,
  UNIQUE (subscriber_id, edition)
) STRICT;
CREATE INDEX digests_queue ON digests (status, next_attempt_at);
CREATE INDEX digests_edition ON digests (edition, status);

-- What each configured source has fetched, per day.
CREATE TABLE source_days (
  source     TEXT NOT NULL,                  -- e.g. 'hf' or 'arxiv:cs.LG+cs.CL'
  day        TEXT NOT NULL,
  status     TEXT NOT NULL CHECK (status IN ('ingested', 'empty', 'error')),
  batch_id   INTEGER REFERENCES batches (id),
  attempts   INTEGER NOT NULL DEFAULT 0,
  last_error TEXT,
  fetched_at TEXT NOT NULL,
  PRIMARY KEY (source, day)
) STRICT;
