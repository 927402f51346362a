-- 007: the ledger's indexes, laid out so a delivered digest writes fewer pages (src/send/ledger.ts, the
-- decision on the pages a digest writes).
--
-- A digest goes planned -> sending -> sent, and every index entry that holds `status` moves with it. In
-- 001's layout, (status, next_attempt_at), (edition, status) and (subscriber_id, status), those moves land
-- far apart (the claimed row leaves the front of the planned range, the delivered one goes to the end of
-- the sent range), so a sending lane's transaction (record sent + claim next) wrote 10.1 pages to the WAL
-- (41 KB), 7.1 of them in these indexes (bench/ledger.ts, 100,000 planned digests). Now 6.0 (24 KB):
--   * digests_queue holds only the rows waiting or in flight (planned, retry, sending): a sent row leaves
--     it instead of joining a sent range that grows forever. Its rows run in descending id order, so the
--     next planned row to claim (the lowest id, as before) ends the planned range, next to the retry and
--     sending ranges: claiming and recording touch one leaf. The WHERE is an OR of equalities, not an IN
--     list: SQLite uses a partial index only for a query term that implies its WHERE, and `status =
--     'retry'` implies the OR but not an IN. Queries over several of these states repeat the OR as is.
--   * digests_edition is (edition, id, status): an entry keeps its place when its status changes (status
--     comes after id), a lane's claimed and delivered rows, a few ids apart, share a leaf, and the reports
--     still count statuses from the index alone.
--   * digests_subscriber_open replaces digests_subscriber_status: the planner only asks whether a
--     subscriber has an open row, so only open rows are in it (not their delivered history).
--   * digests_trouble: rows whose last attempt failed, is to be retried or is unknown, by edition, for the
--     console's relay errors and `digest status`'s failure reasons (001's queue index held them). It does
--     not change while digests are delivered.
-- No column or row changes. On an existing ledger this builds four indexes once (800,000 rows: ~2 s).

DROP INDEX digests_queue;
CREATE INDEX digests_queue ON digests (status, next_attempt_at, id DESC)
  WHERE status = 'planned' OR status = 'retry' OR status = 'sending';

DROP INDEX digests_edition;
CREATE INDEX digests_edition ON digests (edition, id, status);

DROP INDEX digests_subscriber_status;
CREATE INDEX digests_subscriber_open ON digests (subscriber_id)
  WHERE status = 'planned' OR status = 'retry' OR status = 'sending';

CREATE INDEX digests_trouble ON digests (edition)
  WHERE status = 'retry' OR status = 'failed' OR status = 'unknown';
