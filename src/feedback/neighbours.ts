// Suggestions for a reader whose model has no calibrated evidence yet (one or two votes: slope 0): the
// papers nearest one of their newest liked papers by cosine, that paper the reason, shown below the list
// (model-pass.ts asks; the candidates are the ones the flat model's dot product ranks highest).
import type { Db } from '../db/open.ts';
import { statement } from '../db/statements.ts';
import type { PaperIndex, Span } from './paper-index.ts';
import { MAX_SUGGESTIONS } from './suggest.ts';

/**
 * Cosine between a paper and a liked one for a suggestion from a model without calibrated evidence.
 * On the sample listing (71 abstracts of one field) 0.15 kept papers of the liked paper's theme about half
 * the time and 0.18 three times out of four, finding a sixth of them (BENCHMARKS.md, reader models).
 */
export const NEIGHBOUR_MIN = 0.16;
/** Papers with the highest model score looked at for that cosine. */
const NEIGHBOUR_POOL = 12;
/** Liked papers compared (the newest). */
const NEIGHBOUR_LIKED = 5;
/** A reader's newest liked papers. */
const SQL_LIKED = `SELECT paper_id AS paperId FROM feedback WHERE subscriber_id = ? AND vote > 0 ORDER BY at DESC, paper_id LIMIT ${NEIGHBOUR_LIKED}`;
const SQL_PAPER_VECTOR = `SELECT term, weight FROM paper_terms WHERE paper_id = ?`;
/** Liked papers' vectors kept per run. */
const LIKED_CACHE = 20_000;

export class NeighbourSuggester {
  /** A liked paper's weights by term id, scattered for one comparison and cleared after it. */
  private dense = new Float32Array(0);
  private readonly likedCache = new Map<number, { terms: number[]; weights: number[] }>();

  constructor(
    private readonly db: Db,
    private readonly index: PaperIndex,
  ) {}

  /** Terms first seen in a newly held paper are missing from the cached liked vectors. */
  clearCache(): void {
    this.likedCache.clear();
  }

  /**
   * Suggestions for a reader whose model is flat: papers close to one they liked, that paper the reason.
   * `blocked` marks (1) the positions never suggested to them: their list's papers, voted on, muted.
   * `touched`: the span the model scored, its touched positions marked (1) in `mark`.
   */
  suggest(sid: number, touched: Span, mark: Uint8Array, acc: Float32Array, blocked: Uint8Array): Array<{ paperId: number; cos: number; reason: number }> {
    // The NEIGHBOUR_POOL best by the model's dot product, kept in a small sorted array (no full sort).
    const pool: number[] = [];
    for (let pos = touched.first; pos <= touched.last; pos++) {
      if (mark[pos] !== 1 || blocked[pos] === 1) continue;
      if (pool.length === NEIGHBOUR_POOL && acc[pos]! <= acc[pool[NEIGHBOUR_POOL - 1]!]!) continue;
      let k = Math.min(pool.length, NEIGHBOUR_POOL - 1);
      while (k > 0 && acc[pool[k - 1]!]! < acc[pos]!) k--;
      pool.splice(k, 0, pos);
      if (pool.length > NEIGHBOUR_POOL) pool.pop();
    }
    if (pool.length === 0) return [];
    const best = new Map<number, { cos: number; reason: number }>();
    for (const liked of statement<[number], { paperId: number }>(this.db, SQL_LIKED).all(sid)) {
      const vec = this.likedVector(liked.paperId);
      if (vec.terms.length === 0) continue;
      if (this.dense.length < this.index.termCount) this.dense = new Float32Array(this.index.termCount);
      for (let k = 0; k < vec.terms.length; k++) this.dense[vec.terms[k]!] = vec.weights[k]!;
      const { vecStart, vecTerm, vecVal } = this.index;
      for (const pos of pool) {
        if (pos + this.index.lo === liked.paperId) continue;
        let cos = 0;
        for (let k = vecStart[pos]!, end = vecStart[pos + 1]!; k < end; k++) cos += vecVal[k]! * this.dense[vecTerm[k]!]!;
        if (cos >= NEIGHBOUR_MIN && cos > (best.get(pos)?.cos ?? 0)) best.set(pos, { cos, reason: liked.paperId });
      }
      for (const t of vec.terms) this.dense[t] = 0;
    }
    const kept = [...best].sort((x, y) => y[1].cos - x[1].cos || x[0] - y[0]).slice(0, MAX_SUGGESTIONS);
    return kept.map(([pos, c]) => ({ paperId: pos + this.index.lo, cos: c.cos, reason: c.reason }));
  }

  /** A liked paper's vector over the run's term ids (cached for the run: readers like the same papers). */
  private likedVector(paperId: number): { terms: number[]; weights: number[] } {
    let v = this.likedCache.get(paperId);
    if (v) return v;
    v = { terms: [], weights: [] };
    for (const row of statement<[number], { term: string; weight: number }>(this.db, SQL_PAPER_VECTOR).all(paperId)) {
      const t = this.index.termId(row.term);
      if (t === undefined) continue;
      v.terms.push(t);
      v.weights.push(row.weight);
    }
    if (this.likedCache.size >= LIKED_CACHE) this.likedCache.clear();
    this.likedCache.set(paperId, v);
    return v;
  }
}
