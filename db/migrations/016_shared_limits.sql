-- 016: the web tier's limits, in the store every instance shares (src/db/shared-limits.ts): the login,
-- subscribe and preview counters per client address, and the spacing of requests to a feed host (arXiv's
-- one request every 3 seconds for the whole deployment). Short-lived rows: each is deleted once its time
-- has passed (until_ms), so the table holds about one row per client seen in the last hour. Not copied by
-- `digest copy` and not needed in a backup: losing it only resets the counters.
--
-- A counter (fixed window from its first hit): hits in the window, until_ms = when the window ends.
-- A spacing (one request at a time to a host, the next one an interval after the last ended): holder =
-- the request that took the host last; until_ms = while it runs, when its lease lapses (a process that
-- died mid-request blocks the host no longer than that), once it ended, the earliest next start.
CREATE TABLE shared_limits (
  purpose  TEXT NOT NULL,     -- 'POST /subscribe', 'POST /admin/login', 'spacing', …
  key      TEXT NOT NULL,     -- the client address, or the host
  hits     INTEGER NOT NULL,
  until_ms INTEGER NOT NULL,  -- milliseconds since 1970 (the service's clock)
  holder   TEXT,              -- spacing only: who took it last (process and a random token)
  PRIMARY KEY (purpose, key)
) STRICT, WITHOUT ROWID;
CREATE INDEX shared_limits_until ON shared_limits (purpose, until_ms);
