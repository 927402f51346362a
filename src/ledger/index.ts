// The ledger: the `digests` table as the record of every send. Every write to `digests` is in this folder
// (tests/unit/ledger-owns-digests.test.ts): rows created by the planner's set-based statements (create.ts),
// their states changed by compare-and-set (port.ts, states.ts), made unknown when no one can say
// (recover.ts), their packed paper lists (items.ts, pack.ts) or references to shared query lists (lists.ts, refs.ts), read for rendering (read.ts), and their lists
// pruned after DIGEST_RETENTION_DAYS (retention.ts).
export { claimantId, DEFAULT_LEASE_MS } from './claimant.ts';
export { rewriteItemsMany, rowWriters, type ItemsRewrite, type RowWriters } from './create.ts';
export { decodeItems, eachItem, encodeItems, mapItems, maskIds, parseTopicIds, type LedgerItem, type PackedItem } from './items.ts';
export { decodeList, decodeRefs, encodeRefs, isRefs, ListReader, mergeLists, plainItems, type ListRef, type QueryList } from './lists.ts';
export { packItems } from './pack.ts';
export { insertQueryList, insertRefRows, type NewList, type NewRefRow } from './refs.ts';
export type { FailureRecord, RecoverOptions, SendLedger, SentRecord } from './port.ts';
export { digestRowReader, type DigestRecipient, type DigestRecord, type DigestRowSql } from './read.ts';
export { markOpenRowsUnknown, recoverStale } from './recover.ts';
export { pruneLedger } from './retention.ts';
export { replyCode, SqliteLedger, type SubscriberMarks } from './states.ts';
export { LEDGER_CHECKPOINT_FRAMES } from './states-sql.ts';
