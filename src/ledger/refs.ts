// Writing query lists and the ledger rows that refer to them (lists.ts), for the planner's per-query plan
// (plan/query-lists.ts), inside its chunk transaction.
import type { Db } from '../db/open.ts';
import { runBatched } from '../db/batch-values.ts';
import { statement } from '../db/statements.ts';
import { encodeList, encodeRefs, type ListRef } from './lists.ts';

const SQL_INSERT_LIST = `
  INSERT INTO query_lists (query_id, from_paper, to_paper, items, paper_count, planned_at) VALUES (?, ?, ?, ?, ?, ?)`;
// verp_nonce: 52 random bits and a sign, as create.ts's rows (bounces/verp.ts)
const REF_ROW_TUPLE = `(?, ?, 'planned', ?, ?, ?, ?, ?, ?, random() >> 11)`;
/** One row; insertRefRows repeats its tuple (a hundred rows per statement). */
const SQL_INSERT_REF_ROW = `
  INSERT INTO digests (subscriber_id, edition, status, from_paper, to_paper, topic_ids, items, paper_count, planned_at, verp_nonce)
  VALUES ${REF_ROW_TUPLE}`;

export interface NewList {
  queryId: number;
  fromPaper: number;
  toPaper: number;
  ids: number[];
  upvotes: number[];
  scores: number[];
  plannedAt: string;
}

export interface NewRefRow {
  subscriberId: number;
  edition: string;
  fromPaper: number;
  toPaper: number;
  topicIds: string;
  refs: ListRef[];
  paperCount: number;
  plannedAt: string;
  /**
   * The row's plain packed list (pack.ts) in place of the references, when the reader's model already
   * ordered it (feedback/model-pass.ts planRows): the row is written once, final.
   */
  items?: Buffer;
}

/** Stores one query list; returns its id. */
export function insertQueryList(db: Db, l: NewList): number {
  const items = encodeList(l.ids, l.upvotes, l.scores);
  return Number(statement(db, SQL_INSERT_LIST).run(l.queryId, l.fromPaper, l.toPaper, items, l.ids.length, l.plannedAt).lastInsertRowid);
}

const SQL_LAST_ID = `SELECT coalesce(max(id), 0) AS id FROM digests`;
const SQL_IDS_AFTER = `SELECT id FROM digests WHERE id > ? ORDER BY id`;

/**
 * Writes planned ledger rows whose items refer to query lists (or, with `items`, a plain list), in this
 * order, a hundred per statement; returns their ids in the same order. Inside the planner's chunk
 * transaction, which holds the write lock: the rows after the newest one before it are these.
 */
export function insertRefRows(db: Db, rows: readonly NewRefRow[]): number[] {
  if (rows.length === 0) return [];
  const before = statement<[], { id: number }>(db, SQL_LAST_ID).get()!.id;
  const values: unknown[] = [];
  for (const r of rows) values.push(r.subscriberId, r.edition, r.fromPaper, r.toPaper, r.topicIds, r.items ?? encodeRefs(r.refs), r.paperCount, r.plannedAt);
  runBatched(db, 8, values, (tuples) => SQL_INSERT_REF_ROW.replace(REF_ROW_TUPLE, tuples), REF_ROW_TUPLE);
  const ids = statement<[number], number>(db, SQL_IDS_AFTER).pluck().all(before);
  if (ids.length !== rows.length) throw new Error(`planned ${rows.length} ledger rows, found ${ids.length}`);
  return ids;
}
