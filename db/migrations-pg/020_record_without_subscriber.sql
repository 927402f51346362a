-- 020 (PostgreSQL only): a delivery no longer writes its subscriber's row (issue 39 item 5; BENCHMARKS.md "the
-- record without the subscriber's row", 2026-12-07). The watermark is read as the higher of the column and
-- the newest sent row's to_paper; the failure streak (`hard_failures`) counts the failures after the sent row
-- `failures_after`, so a newer delivery ends it without a write (src/subscribers/records/postgres-delivered.ts).
ALTER TABLE subscribers ADD COLUMN failures_after bigint;
-- A streak counted before this migration is after the newest row sent so far.
UPDATE subscribers s SET failures_after = (SELECT d.id FROM digests d WHERE d.subscriber_id = s.id AND d.status = 'sent'
                                           ORDER BY d.edition DESC LIMIT 1)
WHERE s.hard_failures > 0;
