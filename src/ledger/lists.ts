// Query lists: a plan run's papers of one query, stored once (table query_lists, migration 015) and
// referred to by every ledger row whose reader has that query unmuted. Such a row's `items` is a
// reference, not a list: byte REFS, then k, then k entries (the row's topic bit, the list id in 6 bytes,
// little-endian). A plain list never starts with 0x01 (its first nibble, the offset width, is >= 1) nor does a
// mapped one (0x00, items.ts), so readers tell the three apart by the first byte.
//
// Reading a reference row merges its lists within the row's (from_paper, to_paper] in the planner's
// display order (topics matched, upvotes when planned, best bm25, paper id), deduplicating papers matched
// by several of its queries, and gives the plain packed list (pack.ts) a per-reader plan would have stored;
// the sending loader walks the merge instead (ListReader.walk), only the papers its email shows sorted.
// Decision: planning writes ~3,000 lists of ~60 papers instead of one list per reader (18.8M items for 100k
// diverse readers); the merge costs the loader ~190 papers deduplicated and 25 of them sorted per digest (BENCHMARKS.md).
import type { Db } from '../db/open.ts';
import { statement } from '../db/statements.ts';
import { eachItem } from './items.ts';
import { packItems } from './pack.ts';
import { mergeFirst, mergeLists, type PartialMerge, type QueryList } from './list-merge.ts';

export { mergeFirst, mergeLists, type PartialMerge, type QueryList } from './list-merge.ts';

/** First byte of a reference row. */
export const REFS = 1;
const LIST_RECORD = 16;
const REF_RECORD = 7;


/** A reference row's entry: the row's topic bit and the list of that topic's query. */
export interface ListRef {
  bit: number;
  listId: number;
}

export function encodeList(ids: readonly number[], upvotes: readonly number[], scores: readonly number[]): Buffer {
  const out = Buffer.alloc(ids.length * LIST_RECORD);
  for (let i = 0; i < ids.length; i++) {
    out.writeUInt32LE(ids[i]!, i * LIST_RECORD);
    out.writeInt32LE(upvotes[i]!, i * LIST_RECORD + 4);
    out.writeDoubleLE(scores[i]!, i * LIST_RECORD + 8);
  }
  return out;
}

export function decodeList(blob: Uint8Array): QueryList {
  if (blob.length % LIST_RECORD !== 0) throw new Error(`malformed query list (${blob.length} bytes)`);
  const b = Buffer.from(blob.buffer, blob.byteOffset, blob.length);
  const n = blob.length / LIST_RECORD;
  const list: QueryList = { ids: new Int32Array(n), upvotes: new Int32Array(n), scores: new Float64Array(n) };
  for (let i = 0; i < n; i++) {
    list.ids[i] = b.readUInt32LE(i * LIST_RECORD);
    list.upvotes[i] = b.readInt32LE(i * LIST_RECORD + 4);
    list.scores[i] = b.readDoubleLE(i * LIST_RECORD + 8);
  }
  return list;
}

export function isRefs(blob: Uint8Array): boolean {
  return blob.length > 0 && blob[0] === REFS;
}

export function encodeRefs(refs: readonly ListRef[]): Buffer {
  const out = Buffer.alloc(2 + refs.length * REF_RECORD);
  out[0] = REFS;
  out[1] = refs.length;
  refs.forEach((r, i) => {
    out[2 + i * REF_RECORD] = r.bit;
    out.writeUIntLE(r.listId, 3 + i * REF_RECORD, 6);
  });
  return out;
}

export function decodeRefs(blob: Uint8Array): ListRef[] {
  const k = blob[1] ?? 0;
  if (blob[0] !== REFS || k === 0 || blob.length !== 2 + k * REF_RECORD) throw new Error(`malformed list reference (${blob.length} bytes)`);
  const b = Buffer.from(blob.buffer, blob.byteOffset, blob.length);
  return Array.from({ length: k }, (_, i) => ({ bit: b[2 + i * REF_RECORD]!, listId: b.readUIntLE(3 + i * REF_RECORD, 6) }));
}

const SQL_LIST = `SELECT items FROM query_lists WHERE id = ?`;
/** Lists a reader keeps decoded (a diverse run has ~3,000, ~1 KB each). */
const LIST_CACHE = 4_096;
/** Merged lists kept per reader (~200 papers, ~1 KB each): a broad run's shared topic sets hit it. */
const MERGED_CACHE = 2_048;

/** Reads rows' items whatever their layout; a send run's loader keeps one (lists never change once written). */
export class ListReader {
  private readonly cache = new Map<number, QueryList>();
  /** Merged lists by reference and bounds: readers who share a topic set and a watermark share one merge. */
  private readonly merged = new Map<string, Uint8Array>();
  /** walk()'s merges by the same key (null: walked once, not kept), and the buffer a merge not kept is made in. */
  private readonly walked = new Map<string, PartialMerge | null>();
  private walkBuffer?: PartialMerge;
  private readonly get;

  constructor(db: Db, private readonly cacheSize = LIST_CACHE) {
    this.get = statement<[number], { items: Buffer }>(db, SQL_LIST);
  }

  /** A row's items as a plain or mapped packed list (items.ts): a reference row's lists merged, else the blob itself. */
  plain(blob: Uint8Array, fromPaper: number, toPaper: number): Uint8Array {
    if (!isRefs(blob)) return blob;
    const key = `${fromPaper}:${toPaper}:${Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength).toString('latin1')}`;
    const known = this.merged.get(key);
    if (known) return known;
    const packed = mergeRefRow(blob, fromPaper, toPaper, (id) => this.list(id));
    if (this.merged.size >= MERGED_CACHE) this.merged.clear();
    this.merged.set(key, packed);
    return packed;
  }

  /**
   * The papers of references `refs` within (fromPaper, toPaper], in display order with their row masks: what
   * plain() packs, unpacked (the model pass reorders it at once: packing it to read it back cost ~4% of a
   * 100k plan, BENCHMARKS.md, reader models, seventh pass).
   */
  merge(refs: readonly ListRef[], fromPaper: number, toPaper: number): { ids: number[]; masks: number[] } {
    return mergeLists(refs.map((r) => ({ bit: r.bit, list: this.list(r.listId) })), fromPaper, toPaper);
  }

  /**
   * Keeps a list this process has just written (the planner's run, plan/query-lists.ts): reading a row
   * that refers to it needs no read back. forget() drops it should its transaction roll back (its id
   * would be given to another list).
   */
  remember(id: number, list: QueryList): void {
    if (this.cache.size >= this.cacheSize) this.cache.clear();
    this.cache.set(id, list);
  }

  /** Drops lists (and every merge, which may hold them) whose writing transaction rolled back. */
  forget(ids: readonly number[]): void {
    for (const id of ids) this.cache.delete(id);
    this.merged.clear();
    this.walked.clear();
  }

  /**
   * A row's papers for the sending loader: `fn(paperId, mask)` once per paper, in display order for as long
   * as fn returns true (it wants the next one in order too), then the rest in no order. A reference row's
   * lists are merged with only its first `ordered` papers sorted (mergeFirst): the papers an email shows;
   * the others it only counts. fn must not walk this reader (its merge is in the reader's buffer).
   */
  walk(blob: Uint8Array, fromPaper: number, toPaper: number, topicCount: number, ordered: number, fn: (paperId: number, mask: number) => boolean): void {
    if (!isRefs(blob)) {
      eachItem(blob, fromPaper, topicCount, fn);
      return;
    }
    const key = refKey(blob, fromPaper, toPaper);
    const kept = this.walked.get(key);
    let w: PartialMerge;
    if (kept && kept.ordered >= Math.min(ordered, kept.n)) w = kept;
    else {
      this.walkBuffer ??= { ids: new Int32Array(256), masks: new Int32Array(256), n: 0, ordered: 0 };
      w = mergeFirst(this.refLists(blob), fromPaper, toPaper, ordered, this.walkBuffer);
      // Kept from a row's second walk on: a broad run's readers share a few hundred topic sets, a diverse
      // run's hardly any (a copy per digest for nothing).
      if (this.walked.size >= MERGED_CACHE) this.walked.clear();
      this.walked.set(key, kept === undefined ? null : { ids: w.ids.slice(0, w.n), masks: w.masks.slice(0, w.n), n: w.n, ordered: w.ordered });
    }
    const { ids, masks, n } = w;
    let inOrder = true;
    let i = 0;
    for (; i < w.ordered; i++) inOrder = fn(ids[i]!, masks[i]!);
    if (inOrder && i < n) {
      // fn wants order past the papers sorted (it left one out: deleted since planning): all of them sorted.
      const all = mergeLists(this.refLists(blob), fromPaper, toPaper);
      for (; i < n; i++) fn(all.ids[i]!, all.masks[i]!);
      return;
    }
    for (; i < n; i++) fn(ids[i]!, masks[i]!);
  }

  /** A reference row's lists with their bits, read from the blob in place (checked as decodeRefs checks it). */
  private refLists(blob: Uint8Array): Array<{ bit: number; list: QueryList }> {
    const k = refCount(blob);
    const out = new Array<{ bit: number; list: QueryList }>(k);
    for (let i = 0, at = 2; i < k; i++, at += REF_RECORD) out[i] = { bit: blob[at]!, list: this.list(listIdAt(blob, at + 1)) };
    return out;
  }

  private list(id: number): QueryList {
    let list = this.cache.get(id);
    if (list) return list;
    const row = this.get.get(id);
    if (!row) throw new Error(`query list ${id} of a ledger row is missing`);
    list = decodeList(row.items);
    if (this.cache.size >= this.cacheSize) this.cache.clear();
    this.cache.set(id, list);
    return list;
  }
}

/** The number of entries of a reference row (its blob checked as decodeRefs checks it). */
function refCount(blob: Uint8Array): number {
  const k = blob[1] ?? 0;
  if (blob[0] !== REFS || k === 0 || blob.length !== 2 + k * REF_RECORD) throw new Error(`malformed list reference (${blob.length} bytes)`);
  return k;
}

/** The 6-byte little-endian list id at `at` (encodeRefs). */
function listIdAt(blob: Uint8Array, at: number): number {
  return blob[at]! + blob[at + 1]! * 0x100 + blob[at + 2]! * 0x10000 + blob[at + 3]! * 0x1000000 + (blob[at + 4]! + blob[at + 5]! * 0x100) * 0x100000000;
}

/**
 * The walk's cache key of a reference row within its bounds: the bounds and each entry's bit and list id.
 * Decision: it was the blob as latin1 text (a Buffer view and a native call per digest); numbers joined in
 * JavaScript name the same rows (the blob is exactly k entries of bit and id) for less.
 */
function refKey(blob: Uint8Array, fromPaper: number, toPaper: number): string {
  const k = refCount(blob);
  let key = `${fromPaper}:${toPaper}`;
  for (let i = 0, at = 2; i < k; i++, at += REF_RECORD) key += `:${blob[at]!}.${listIdAt(blob, at + 1)}`;
  return key;
}

/** A reference row's lists (`list` finds each by id) merged into the plain packed list a per-reader plan would have stored. */
export function mergeRefRow(blob: Uint8Array, fromPaper: number, toPaper: number, list: (listId: number) => QueryList): Uint8Array {
  const lists = decodeRefs(blob).map((r) => ({ bit: r.bit, list: list(r.listId) }));
  const merged = mergeLists(lists, fromPaper, toPaper);
  return packItems(merged.ids, merged.masks, fromPaper);
}

/** One row's items as a packed list (the feedback check, training: a row at a time). */
export function plainItems(db: Db, blob: Uint8Array, fromPaper: number, toPaper: number): Uint8Array {
  return isRefs(blob) ? new ListReader(db, 8).plain(blob, fromPaper, toPaper) : blob;
}
