-- 011: consent. An address's opt-out history that no public request erases, a re-subscribe request of an
-- unsubscribed address kept apart from its row until the emailed link is clicked, and confirmation emails
-- as deliveries with a state of their own (recorded, retried, counted).

-- Every opt-out and every reversal of one, by address (normalised, as subscribers.email is): it outlives
-- the subscriber row, so a console delete forgets the person's data but not that they said no.
--   unsubscribe  the reader (link, one-click, or `digest unsubscribe` / the console on their behalf)
--   complaint    a spam complaint (feedback loop, relay webhook)
--   hard-bounce  a hard bounce, or permanent failures at send time up to HARD_FAILURES_TO_SUPPRESS
--   operator     the console's "suppress"
--   lifted       the operator lifted the opt-outs before it, with the reason in detail
--   reconfirmed  the person clicked a confirmation link they asked for after unsubscribing
CREATE TABLE consent_events (
  id     INTEGER PRIMARY KEY AUTOINCREMENT,
  email  TEXT NOT NULL COLLATE NOCASE,
  kind   TEXT NOT NULL CHECK (kind IN ('unsubscribe', 'complaint', 'hard-bounce', 'operator', 'lifted', 'reconfirmed')),
  status TEXT,                       -- the subscriber's status it left ('unsubscribed' | 'suppressed'); NULL for reversals
  detail TEXT NOT NULL DEFAULT '',
  at     TEXT NOT NULL
) STRICT;
CREATE INDEX consent_events_email ON consent_events (email, id);
CREATE INDEX consent_events_at ON consent_events (at);

-- Why the status is what it is: set by the writer together with the status (subscribers/repo.ts), read by
-- the trigger below. NULL: the trigger works the reason out (a complaint or bounce report recorded in the
-- same moment, else unsubscribe / hard bounce by the status).
ALTER TABLE subscribers ADD COLUMN opt_out_reason TEXT;
ALTER TABLE subscribers ADD COLUMN opt_out_detail TEXT;

-- Whatever path changes the status (a link, a bounce, the ledger's hard-failure limit, the console, the
-- CLI, code written later), the change to unsubscribed or suppressed is recorded here.
CREATE TRIGGER subscribers_opt_out_history AFTER UPDATE OF status ON subscribers
WHEN new.status IN ('unsubscribed', 'suppressed') AND old.status IS NOT new.status
BEGIN
  INSERT INTO consent_events (email, kind, status, detail, at)
  VALUES (
    new.email,
    coalesce(
      new.opt_out_reason,
      CASE WHEN EXISTS (SELECT 1 FROM bounce_events b WHERE b.subscriber_id = new.id AND b.kind = 'complaint'
                          AND b.received_at IS (CASE new.status WHEN 'unsubscribed' THEN new.unsubscribed_at ELSE new.suppressed_at END)) THEN 'complaint'
           WHEN new.status = 'unsubscribed' THEN 'unsubscribe'
           ELSE 'hard-bounce' END),
    new.status,
    coalesce(
      new.opt_out_detail,
      (SELECT trim(coalesce(b.status, '') || ' ' || b.detail) FROM bounce_events b
       WHERE b.subscriber_id = new.id AND b.received_at IS (CASE new.status WHEN 'unsubscribed' THEN new.unsubscribed_at ELSE new.suppressed_at END)
       ORDER BY b.id DESC LIMIT 1),
      ''),
    coalesce(CASE new.status WHEN 'unsubscribed' THEN new.unsubscribed_at ELSE new.suppressed_at END,
             strftime('%Y-%m-%dT%H:%M:%fZ', 'now')));
END;

-- A complaint about an address that had already unsubscribed, or a hard bounce about one that had left,
-- changes no status, but it still decides what a form may do later (never mail a complainer): recorded
-- too. (A complaint about a suppressed address unsubscribes it: the trigger above records that one.)
CREATE TRIGGER bounce_events_opt_out_history AFTER INSERT ON bounce_events
WHEN (new.kind = 'complaint' AND (SELECT status FROM subscribers WHERE id = new.subscriber_id) = 'unsubscribed')
  OR (new.kind = 'hard' AND (SELECT status FROM subscribers WHERE id = new.subscriber_id) IN ('unsubscribed', 'suppressed'))
BEGIN
  INSERT INTO consent_events (email, kind, status, detail, at)
  SELECT s.email, CASE new.kind WHEN 'complaint' THEN 'complaint' ELSE 'hard-bounce' END, s.status,
         trim(coalesce(new.status, '') || ' ' || new.detail), new.received_at
  FROM subscribers s WHERE s.id = new.subscriber_id;
END;

-- The history of a database made before this migration: each address that has left, with the best reason
-- the database holds.
INSERT INTO consent_events (email, kind, status, detail, at)
SELECT s.email,
       CASE WHEN s.status = 'unsubscribed' AND EXISTS (SELECT 1 FROM bounce_events b WHERE b.subscriber_id = s.id AND b.kind = 'complaint')
              THEN 'complaint'
            WHEN s.status = 'unsubscribed' THEN 'unsubscribe'
            ELSE 'hard-bounce' END,
       s.status, 'recorded before the opt-out history existed',
       coalesce(CASE s.status WHEN 'unsubscribed' THEN s.unsubscribed_at ELSE s.suppressed_at END, s.created_at)
FROM subscribers s WHERE s.status IN ('unsubscribed', 'suppressed') ORDER BY s.id;

-- What an unsubscribed address asked for on the subscribe form: applied only when the confirmation link
-- sent after it is clicked; until then the row stays unsubscribed and gets nothing.
CREATE TABLE resubscribe_requests (
  subscriber_id INTEGER PRIMARY KEY REFERENCES subscribers (id) ON DELETE CASCADE,
  topics        TEXT NOT NULL,        -- JSON array of the topics as typed
  timezone      TEXT NOT NULL,
  delivery_hour INTEGER NOT NULL,
  frequency     TEXT NOT NULL,
  requested_at  TEXT NOT NULL
) STRICT;

-- Confirmation emails (and "you are already subscribed"), one row per email, written before it is sent:
-- retried on the backoff curve when the relay fails, counted in `digest status`, /metrics and the
-- console. Keyed by address too, for the per-address limits (3 a day, none while one of the last hour is
-- still valid), which hold whatever client asks and survive a delete.
CREATE TABLE notices (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  subscriber_id   INTEGER REFERENCES subscribers (id) ON DELETE SET NULL, -- the row stays: the limits count it
  email           TEXT NOT NULL COLLATE NOCASE,
  kind            TEXT NOT NULL CHECK (kind IN ('confirm', 'already-subscribed')),
  status          TEXT NOT NULL DEFAULT 'planned'
                  CHECK (status IN ('planned', 'sending', 'retry', 'sent', 'failed', 'unknown')),
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT,
  claimed_by      TEXT,
  claimed_at      TEXT,
  smtp_code       INTEGER,
  smtp_response   TEXT,
  created_at      TEXT NOT NULL,
  sent_at         TEXT
) STRICT;
CREATE INDEX notices_email ON notices (email, created_at);
CREATE INDEX notices_open ON notices (status, next_attempt_at) WHERE status IN ('planned', 'retry', 'sending');
CREATE INDEX notices_subscriber ON notices (subscriber_id, id);
