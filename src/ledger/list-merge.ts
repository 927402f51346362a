// The merge of a reader's query lists into one digest's papers (in display order: topics matched, upvotes,
// score), whole or only as far as the papers an email shows (mergeFirst); lists.ts stores and reads them.

/** One query's papers of a plan run: ids with their upvotes when planned and the query's scores. */
export interface QueryList {
  ids: Int32Array;
  upvotes: Int32Array;
  scores: Float64Array;
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
