-- 016: the web tier's limits, in the store every instance shares (src/db/shared-limits.ts): the login,
-- subscribe and preview counters per client address, and the spacing of requests to a feed host (arXiv's
-- one request every 3 seconds for the whole deployment). Short-lived rows: each is deleted once its time
-- has passed (until_ms), so the table holds about one row per client seen in the last hour. Not copied by
-- `digest copy` and not needed in a backup: losing it only resets the counters.
--
-- A counter (fixed window from its first hit): hits in the window, until_ms = when the window ends.
-- A spacing: hits = requests booked, until_ms = the earliest start of the next request.
CREATE TABLE shared_limits (
  purpose  TEXT NOT NULL,     -- 'POST /subscribe', 'POST /admin/login', 'spacing', …
  key      TEXT NOT NULL,     -- the client address, or the host
  hits     INTEGER NOT NULL,
  until_ms INTEGER NOT NULL,  -- milliseconds since 1970 (the service's clock)
  PRIMARY KEY (purpose, key)
) STRICT, WITHOUT ROWID;
CREATE INDEX shared_limits_until ON shared_limits (purpose, until_ms);
