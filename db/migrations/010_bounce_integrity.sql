-- 010: reports from outside act only on what they were for, and say what they mean.
--
-- A digest's VERP tag signs a random nonce of its row as well as its id. SQLite hands a deleted row's id
-- to the next insert (no AUTOINCREMENT here; a rebuild of the ledger would cascade through its foreign
-- keys), so a tag that signed only the id outlived its row: a late bounce after a console delete hit the
-- next, unrelated digest. Rows planned before this migration keep a NULL nonce and their id-only tags,
-- which stay unambiguous while that row exists (src/bounces/digest-tag.ts).
ALTER TABLE digests ADD COLUMN verp_nonce INTEGER;

-- Mailgun signs `timestamp + token`, not the event data: a signature is good once. Each accepted token,
-- with a hash of the body it came with, is kept until its timestamp is too old to pass the 15-minute
-- check anyway (expires_at), then pruned.
CREATE TABLE mailgun_tokens (
  token       TEXT PRIMARY KEY,
  body_sha256 TEXT NOT NULL,
  expires_at  TEXT NOT NULL
) WITHOUT ROWID, STRICT;
CREATE INDEX mailgun_tokens_expiry ON mailgun_tokens (expires_at);

-- bounce_events gains the kind 'policy' (a 5.7.x spam / blocklist refusal: about our sending, not the
-- reader's address), the outcome 'alerted', and the channel 'send' (a policy block or full mailbox the
-- relay answered at send time). A CHECK cannot be altered: the table is rebuilt (nothing references it),
-- rows and indexes as they were.
CREATE TABLE bounce_events_010 (
  id            INTEGER PRIMARY KEY,
  digest_id     INTEGER NOT NULL REFERENCES digests (id) ON DELETE CASCADE,
  subscriber_id INTEGER NOT NULL REFERENCES subscribers (id) ON DELETE CASCADE,
  kind          TEXT NOT NULL CHECK (kind IN ('hard', 'soft', 'complaint', 'policy')),
  channel       TEXT NOT NULL CHECK (channel IN ('smtp', 'mailgun', 'ses', 'send')),
  status        TEXT,
  detail        TEXT NOT NULL,
  outcome       TEXT NOT NULL CHECK (outcome IN ('suppressed', 'counted', 'unsubscribed', 'alerted', 'none')),
  received_at   TEXT NOT NULL,
  UNIQUE (digest_id, kind)
) STRICT;
INSERT INTO bounce_events_010 (id, digest_id, subscriber_id, kind, channel, status, detail, outcome, received_at)
  SELECT id, digest_id, subscriber_id, kind, channel, status, detail, outcome, received_at FROM bounce_events;
DROP TABLE bounce_events;
ALTER TABLE bounce_events_010 RENAME TO bounce_events;
CREATE INDEX bounce_events_subscriber ON bounce_events (subscriber_id, received_at);
CREATE INDEX bounce_events_received ON bounce_events (received_at, kind);
