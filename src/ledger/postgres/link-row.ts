// A digest read on PostgreSQL for one click on its links (feedback, follow): whose it is and the papers
// its list holds, a reference row's query lists merged as the SQLite loader merges them (lists.ts), a row
// at a time. NULL items: retention pruned the list and the digest's links expired with it.
import type { Pg } from '../../db/postgres/pool.ts';
import { decodeItems } from '../items.ts';
import { decodeList, decodeRefs, isRefs, mergeRefRow } from '../lists.ts';

const SQL_LINK_DIGEST = `SELECT subscriber_id, from_paper, to_paper, items, topic_ids FROM digests WHERE id = $1`;
const SQL_LISTS = `SELECT id, items FROM query_lists WHERE id = ANY($1::bigint[])`;
const SQL_SUGGESTED = `SELECT 1 FROM digest_suggestions WHERE digest_id = $1 AND paper_id = $2`;

export interface LinkedDigest {
  subscriberId: number;
  /** The papers its list holds (undefined once retention pruned it). */
  papers: number[] | undefined;
}

export async function readLinkedDigest(c: Pg, digestId: number): Promise<LinkedDigest | undefined> {
  type Row = { subscriber_id: number; from_paper: number; to_paper: number; items: Buffer | null; topic_ids: string };
  const d = (await c.query<Row>(SQL_LINK_DIGEST, [digestId])).rows[0];
  if (!d) return undefined;
  if (d.items === null) return { subscriberId: d.subscriber_id, papers: undefined };
  const plain = isRefs(d.items) ? await mergedItems(c, d.items, d.from_paper, d.to_paper) : d.items;
  return { subscriberId: d.subscriber_id, papers: decodeItems(plain, d.from_paper, d.topic_ids).map((i) => i.paperId) };
}

/** Whether the digest suggested the paper ("you may also like"). */
export async function digestSuggested(c: Pg, digestId: number, paperId: number): Promise<boolean> {
  return (await c.query(SQL_SUGGESTED, [digestId, paperId])).rows.length > 0;
}

/** The query lists a reference row names, read in one statement, then merged as the SQLite loader merges them. */
async function mergedItems(c: Pg, refsBlob: Buffer, fromPaper: number, toPaper: number): Promise<Uint8Array> {
  const ids = decodeRefs(refsBlob).map((r) => r.listId);
  const rows = (await c.query<{ id: number; items: Buffer }>(SQL_LISTS, [ids])).rows;
  const byId = new Map(rows.map((r) => [Number(r.id), decodeList(r.items)]));
  return mergeRefRow(refsBlob, fromPaper, toPaper, (id) => {
    const list = byId.get(id);
    if (!list) throw new Error(`query list ${id} of a ledger row is missing`);
    return list;
  });
}
