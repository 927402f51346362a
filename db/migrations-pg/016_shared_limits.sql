-- 016: the web tier's limits shared by every instance (the same table as db/migrations/016_shared_limits.sql;
-- read its comment). Rows are short-lived and updated in place by one atomic upsert each.
CREATE TABLE shared_limits (
  purpose  text NOT NULL,
  key      text NOT NULL,
  hits     bigint NOT NULL,
  until_ms bigint NOT NULL,
  holder   text,
  PRIMARY KEY (purpose, key)
);
CREATE INDEX shared_limits_until ON shared_limits (purpose, until_ms);
