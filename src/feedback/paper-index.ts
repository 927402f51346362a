// The papers a plan run scores, held once per run: their feature vectors (paper_terms) as an inverted
// index (term -> papers holding it), so a reader's model scores every paper of their range term at a
// time (score): the work is the postings of the model's MODEL_TERMS terms, never readers x papers. Bounded: at
// most MAX_INDEXED_PAPERS papers (the newest of the range asked for).
import type { Db } from '../db/open.ts';
import { statement } from '../db/statements.ts';

/** Papers held at most (about 70 bytes each per term, 64 terms: ~4.5 MB per 1,000 papers). */
export const MAX_INDEXED_PAPERS = 20_000;

const SQL_RANGE = `SELECT paper_id, term, weight FROM paper_terms WHERE paper_id >= ? AND paper_id <= ? ORDER BY paper_id`;

export class PaperIndex {
  /** Papers held: ids lo..hi (positions 0..hi-lo). */
  lo = 1;
  hi = 0;
  private readonly termIds = new Map<string, number>();
  /** Postings of term t: postPos/postVal[start[t] .. start[t + 1]) (positions and weights); read in place by the scorer. */
  start = new Int32Array(1);
  postPos = new Int32Array(0);
  postVal = new Float32Array(0);
  /** A paper's own vector: rows vecStart[pos] .. vecStart[pos + 1] of vecTerm / vecVal (read in place too). */
  vecStart = new Int32Array(1);
  vecTerm = new Int32Array(0);
  vecVal = new Float32Array(0);

  constructor(private readonly db: Db) {}

  /** The id a term has in this run, or undefined when no held paper has it. */
  termId(term: string): number | undefined {
    return this.termIds.get(term);
  }

  /** Makes sure papers (from, to] are held (the newest MAX_INDEXED_PAPERS of them). */
  cover(from: number, to: number): void {
    const lo = Math.max(from + 1, to - MAX_INDEXED_PAPERS + 1);
    if (lo > to || (to <= this.hi && lo >= this.lo)) return;
    // Grow what is held when the union stays within bounds (the chunks of one run mostly share a range).
    const ulo = Math.min(lo, this.lo);
    const uhi = Math.max(to, this.hi);
    if (this.size > 0 && uhi - ulo < MAX_INDEXED_PAPERS) this.load(ulo, uhi);
    else this.load(lo, to);
  }

  private load(lo: number, hi: number): void {
    const rows = statement<[number, number], [number, string, number]>(this.db, SQL_RANGE).raw().all(lo, hi);
    const n = hi - lo + 1;
    const terms = new Int32Array(rows.length);
    const vecStart = new Int32Array(n + 1);
    for (let r = 0; r < rows.length; r++) {
      const [paperId, term] = rows[r]!;
      let t = this.termIds.get(term);
      if (t === undefined) this.termIds.set(term, (t = this.termIds.size));
      terms[r] = t;
      vecStart[paperId - lo + 1]!++;
    }
    for (let p = 0; p < n; p++) vecStart[p + 1]! += vecStart[p]!;
    const vecVal = new Float32Array(rows.length);
    for (let r = 0; r < rows.length; r++) vecVal[r] = rows[r]![2];
    // Counting sort of the rows by term: the postings.
    const start = new Int32Array(this.termIds.size + 1);
    for (let r = 0; r < rows.length; r++) start[terms[r]! + 1]!++;
    for (let t = 0; t < this.termIds.size; t++) start[t + 1]! += start[t]!;
    const fill = start.slice(0, this.termIds.size);
    const postPos = new Int32Array(rows.length);
    const postVal = new Float32Array(rows.length);
    for (let r = 0; r < rows.length; r++) {
      const at = fill[terms[r]!]!++;
      postPos[at] = rows[r]![0] - lo;
      postVal[at] = rows[r]![2];
    }
    Object.assign(this, { lo, hi, start, postPos, postVal, vecStart, vecTerm: terms, vecVal });
  }

  /**
   * Adds w[k] x the weight of terms[k] (term ids) to acc[pos] for every held paper of ids (from, to] that
   * has it, k in order (a Float32Array sum: the same rounding whatever the caller), marking mark[pos] = 1;
   * returns the span of positions scored (the marked ones inside it were touched; the caller walks it, and
   * clears acc and mark over it). A term's postings are in position order, so the range is found by
   * bisection, and papers are marked with a plain store: a test and a push per posting cost more (8,000
   * postings over 1,000 papers per reader on bench:plan), and so did collecting the ~1,000 touched
   * positions into an array per reader (the caller's walk of the span reads the marks instead).
   */
  score(terms: readonly number[], w: readonly number[], fromPaper: number, toPaper: number, acc: Float32Array, mark: Uint8Array): Span {
    const from = Math.max(-1, fromPaper - this.lo); // positions > from and <= to
    const to = Math.min(this.size - 1, toPaper - this.lo);
    const { start, postPos, postVal } = this;
    for (let k = 0; k < terms.length; k++) {
      const wk = w[k]!;
      const t = terms[k]!;
      let j = start[t]!;
      let end = start[t + 1]!;
      if (from >= 0) j = firstAbove(postPos, j, end, from);
      if (to < this.size - 1) end = firstAbove(postPos, j, end, to);
      for (; j < end; j++) {
        const pos = postPos[j]!;
        mark[pos] = 1;
        acc[pos] = acc[pos]! + wk * postVal[j]!;
      }
    }
    return { first: from + 1, last: to };
  }

  /** Calls fn(term, value) for every term of the paper at position pos. */
  vector(pos: number, fn: (t: number, value: number) => void): void {
    for (let k = this.vecStart[pos]!; k < this.vecStart[pos + 1]!; k++) fn(this.vecTerm[k]!, this.vecVal[k]!);
  }

  /** Terms the run has seen (ids are below this). */
  get termCount(): number {
    return this.termIds.size;
  }

  /** Papers the index holds (for accumulators). */
  get size(): number {
    return Math.max(0, this.hi - this.lo + 1);
  }
}

/** Positions first..last (inclusive; empty when first > last) of a score: those marked were touched. */
export interface Span {
  first: number;
  last: number;
}

/** The first index in [lo, hi) of ascending `values` whose value is above `x` (hi when none is). */
function firstAbove(values: Int32Array, lo: number, hi: number, x: number): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
