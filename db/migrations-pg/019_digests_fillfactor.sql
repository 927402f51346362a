-- 019 (PostgreSQL only): room on each ledger page for a row's next versions (issue 39 item 5; BENCHMARKS.md
-- "claim and record, fewer pages per digest", 2026-12-07). A claim and a record each write a new version of
-- the row (never HOT: `status` is in partial indexes' predicates). On a full page (fillfactor 100) the new
-- version goes to another page: one more WAL record and more pages touched per update. At 70 the claim's
-- version fits on the row's own page (and the record's too once the claim's old version is pruned): per
-- digest 11.3 -> 10.5 WAL records, 1,165 -> 1,084 WAL bytes. At 50: 9.9 records, but a ledger twice as big.
-- New pages only (each edition is inserted anew); an existing table is unchanged until rewritten.
ALTER TABLE digests SET (fillfactor = 70);
