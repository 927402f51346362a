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

/** First byte of a reference row. */
export const REFS = 1;
const LIST_RECORD = 16;
const REF_RECORD = 7;

/** One query's papers of a plan run: ids with their upvotes when planned and the query's scores. */
export interface QueryList {
  ids: Int32Array;
  upvotes: Int32Array;
  scores: Float64Array;
}

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

/** Paper spans (to - from) up to this are merged through MergeScratch's dense index; wider ones through a Map. */
const DENSE_SPAN = 1 << 20;

/**
 * What one merge works in, reused from merge to merge (one per ListReader): a merge made a Map and five
 * arrays per digest, ~5% of a diverse sending thread's CPU. `slot[id - from - 1]` is the paper's index in
 * the merge when `stamp` there is this merge's; nothing is cleared between merges.
 */
class MergeScratch {
  slot = new Int32Array(0);
  stamp = new Int32Array(0);
  merge = 0;
  ids = new Int32Array(256);
  masks = new Int32Array(256);
  ups = new Int32Array(256);
  hits = new Int32Array(256);
  best = new Float64Array(256);
  /** The merge's indexes in display order (sortOrder), and the sort's second buffer. */
  order = new Int32Array(256);
  orderTmp = new Int32Array(256);

  /** Room for `n` papers and, when dense, a span of `span` ids. */
  reserve(n: number, span: number): void {
    if (n > this.ids.length) {
      const size = Math.max(n, this.ids.length * 2);
      this.ids = new Int32Array(size);
      this.masks = new Int32Array(size);
      this.ups = new Int32Array(size);
      this.hits = new Int32Array(size);
      this.best = new Float64Array(size);
      this.order = new Int32Array(size);
      this.orderTmp = new Int32Array(size);
    }
    if (span <= DENSE_SPAN && span > this.slot.length) {
      this.slot = new Int32Array(Math.min(DENSE_SPAN, Math.max(span, this.slot.length * 2)));
      this.stamp = new Int32Array(this.slot.length);
      this.merge = 0;
    }
    // A new stamp per merge; on wrapping, the stamps start over from a cleared array.
    if (++this.merge === 0x7fffffff) {
      this.stamp.fill(0);
      this.merge = 1;
    }
  }
}

const sharedScratch = new MergeScratch();

/** Negative when merge index `a` shows before `b`: more of the row's topics, more upvotes, lower score, lower id. */
function compareMerged(a: number, b: number, s: MergeScratch): number {
  return s.hits[b]! - s.hits[a]! || s.ups[b]! - s.ups[a]! || s.best[a]! - s.best[b]! || s.ids[a]! - s.ids[b]!;
}

/**
 * The merge's `n` indexes in display order (compareMerged), in the scratch's typed arrays: runs of 8 sorted
 * by insertion, then merged pairwise. Decision: not Array.prototype.sort with a comparator, which copied
 * the array into a work array of its own per digest (~4% of the bytes a diverse digest allocated). The
 * order is total (paper ids differ), so any correct sort gives the same list.
 */
function sortOrder(s: MergeScratch, n: number): Int32Array {
  let src = s.order;
  let dst = s.orderTmp;
  for (let i = 0; i < n; i++) src[i] = i;
  const RUN = 8;
  for (let lo = 0; lo < n; lo += RUN) {
    const hi = Math.min(n, lo + RUN);
    for (let i = lo + 1; i < hi; i++) {
      const x = src[i]!;
      let j = i - 1;
      for (; j >= lo && compareMerged(x, src[j]!, s) < 0; j--) src[j + 1] = src[j]!;
      src[j + 1] = x;
    }
  }
  for (let width = RUN; width < n; width *= 2) {
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(n, lo + width);
      const hi = Math.min(n, lo + 2 * width);
      let i = lo;
      let j = mid;
      let k = lo;
      while (i < mid && j < hi) dst[k++] = compareMerged(src[j]!, src[i]!, s) < 0 ? src[j++]! : src[i++]!;
      while (i < mid) dst[k++] = src[i++]!;
      while (j < hi) dst[k++] = src[j++]!;
    }
    const t = src;
    src = dst;
    dst = t;
  }
  return src;
}

/**
 * The papers of `lists` (each with its row bit) within (from, to], in display order, with their row masks:
 * more of the row's topics matched, then upvotes, then the best (lowest) score, then paper id.
 */
export function mergeLists(lists: ReadonlyArray<{ bit: number; list: QueryList }>, from: number, to: number, scratch = sharedScratch): { ids: number[]; masks: number[] } {
  const n = collect(lists, from, to, scratch);
  const { ids, masks } = scratch;
  const order = sortOrder(scratch, n);
  const outIds = new Array<number>(n);
  const outMasks = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    outIds[i] = ids[order[i]!]!;
    outMasks[i] = masks[order[i]!]!;
  }
  return { ids: outIds, masks: outMasks };
}

/** A merge for a walk: papers [0, n) of `ids` and `masks`, the first `ordered` of them in display order, the rest in no order. */
export interface PartialMerge {
  ids: Int32Array;
  masks: Int32Array;
  n: number;
  ordered: number;
}

/**
 * mergeLists' papers with only the first `k` put in display order (all of them when k >= their number),
 * written into `into`'s arrays (grown when too short). Decision: an email shows 25 of a diverse digest's
 * ~190 papers and only counts the others; sorting all of them was most of the loader's merge
 * (BENCHMARKS.md, "The loader's merge").
 */
export function mergeFirst(lists: ReadonlyArray<{ bit: number; list: QueryList }>, from: number, to: number, k: number, into: PartialMerge, scratch = sharedScratch): PartialMerge {
  const n = collect(lists, from, to, scratch);
  if (into.ids.length < n) {
    into.ids = new Int32Array(Math.max(n, 2 * into.ids.length));
    into.masks = new Int32Array(into.ids.length);
  }
  const { ids, masks } = scratch;
  const ordered = Math.min(k, n);
  const order = ordered === n ? sortOrder(scratch, n) : selectFirst(scratch, n, ordered);
  for (let i = 0; i < ordered; i++) {
    into.ids[i] = ids[order[i]!]!;
    into.masks[i] = masks[order[i]!]!;
  }
  if (ordered < n) {
    // The rest in the order first met: the merge indexes not selected (flagged in orderTmp).
    const taken = scratch.orderTmp.fill(0, 0, n);
    for (let i = 0; i < ordered; i++) taken[order[i]!] = 1;
    for (let i = 0, at = ordered; i < n; i++) {
      if (taken[i] === 1) continue;
      into.ids[at] = ids[i]!;
      into.masks[at++] = masks[i]!;
    }
  }
  into.n = n;
  into.ordered = ordered;
  return into;
}

/**
 * The first `k` (k < n) of the merge's `n` indexes in display order, in s.order[0, k): each index
 * compared with the k-th kept so far, inserted (binary search) only when it comes before it.
 */
function selectFirst(s: MergeScratch, n: number, k: number): Int32Array {
  const top = s.order;
  if (k === 0) return top;
  let m = 0;
  for (let i = 0; i < n; i++) {
    if (m === k && compareMerged(i, top[k - 1]!, s) >= 0) continue;
    let lo = 0;
    let hi = m;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (compareMerged(top[mid]!, i, s) < 0) lo = mid + 1;
      else hi = mid;
    }
    // Shift [lo, end) one place right; when full, the k-th falls off.
    const end = m < k ? m++ : k - 1;
    for (let j = end; j > lo; j--) top[j] = top[j - 1]!;
    top[lo] = i;
  }
  return top;
}

/** The distinct papers of `lists` within (from, to] into the scratch's arrays, in the order first met; returns how many. */
function collect(lists: ReadonlyArray<{ bit: number; list: QueryList }>, from: number, to: number, scratch: MergeScratch): number {
  let total = 0;
  for (const { list } of lists) total += list.ids.length;
  const span = to - from;
  scratch.reserve(total, span);
  const { slot, stamp, merge, ids, masks, ups, hits, best } = scratch;
  const dense = span <= DENSE_SPAN;
  const at = dense ? undefined : new Map<number, number>();
  let n = 0;
  for (const { bit, list } of lists) {
    const listIds = list.ids;
    for (let i = 0; i < listIds.length; i++) {
      const id = listIds[i]!;
      if (id <= from || id > to) continue;
      let k: number | undefined;
      if (dense) k = stamp[id - from - 1] === merge ? slot[id - from - 1]! : undefined;
      else k = at!.get(id);
      if (k === undefined) {
        if (dense) {
          stamp[id - from - 1] = merge;
          slot[id - from - 1] = n;
        } else at!.set(id, n);
        ids[n] = id;
        masks[n] = 1 << bit;
        ups[n] = list.upvotes[i]!;
        best[n] = list.scores[i]!;
        hits[n] = 1;
        n++;
      } else {
        masks[k] = masks[k]! | (1 << bit);
        hits[k]!++;
        if (list.scores[i]! < best[k]!) best[k] = list.scores[i]!;
      }
    }
  }
  return n;
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
    const key = `${fromPaper}:${toPaper}:${Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength).toString('latin1')}`;
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

  private refLists(blob: Uint8Array): Array<{ bit: number; list: QueryList }> {
    return decodeRefs(blob).map((r) => ({ bit: r.bit, list: this.list(r.listId) }));
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
