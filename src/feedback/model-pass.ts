// What the planner does, after writing a chunk's ledger rows, for readers with a model (training.ts):
//  * if the model is trusted (its held-out AUC, stored with it, clears quality.ts's bar), orders their
//    papers by topics matched and the model together: key = topics matched +
//    RANK_WEIGHT x calibrated probability - PLANNER_WEIGHT x (position in the starting order, 0 to 1)
//    (so a paper the model rates 0.9 passes one that matched one more topic but rates 0.1, and a small
//    difference in probability does not overturn the starting order). The starting order is the
//    planner's; for a reader who follows an author, the one without the follow (follow-order.ts);
//  * suggests up to MAX_SUGGESTIONS papers of the row's range that no topic of theirs matched, whose
//    calibrated probability reaches SUGGEST_MIN, each with the liked paper that weighs most in its score
//    (the reason shown: "because you liked …"), unless they turned suggestions off. A trusted model's best,
//    up to inlineBound (suggest.ts), are ranked inside the list (no topic bit: mask 0) as if one topic had
//    matched them; all are in digest_suggestions (their reasons; the loader lists the others below). A
//    model whose held-out evidence is nil yet (one or two votes: its calibrated slope is 0) orders
//    nothing and suggests instead, below the list, the papers nearest one of the reader's liked papers
//    (cosine >= NEIGHBOUR_MIN, neighbours.ts);
//  * with "only the papers my model rates well" (subscribers.model_only), keeps the papers reaching
//    MODEL_KEEP, and at least the MODEL_KEEP_MIN best.
// Scores come from one inverted index of the run's papers (paper-index.ts), term at a time. Planned per
// query (the default), a modelled reader's row is written once, final (planRows: the planner hands its
// chunk's rows over before writing them); planned otherwise, rows are read back and rewritten (apply).
// Writes go a hundred rows per statement (db/batch-values.ts); readers without a model are not touched.
import type { Db } from '../db/open.ts';
import { statement } from '../db/statements.ts';
import { runBatched } from '../db/batch-values.ts';
import { eachItem, ListReader, packItems, rewriteItemsMany, type ItemsRewrite, type ListRef } from '../ledger/index.ts';
import { popcount, sigmoid } from './model.ts';
import { NeighbourSuggester } from './neighbours.ts';
import { PaperIndex, type Span } from './paper-index.ts';
import { followOrder } from './follow-order.ts';
import { SQL_MODEL, SQL_READERS, SQL_ROWS, SQL_SUGGEST, SUGGESTION_TUPLE, type Model, type Row } from './model-pass-sql.ts';
import { inlineBound, MAX_SUGGESTIONS } from './suggest.ts';
import { trainReaderModel, type StoredWeights } from './training.ts';
import { trustedModel } from './quality.ts';
import { SUGGESTION_MATCH, SUGGEST_MIN, MODEL_KEEP, MODEL_KEEP_MIN, RANK_WEIGHT, PLANNER_WEIGHT, LAZY_TRAIN_MAX } from './model-pass-weights.ts';

export { SUGGESTION_MATCH, SUGGEST_MIN, MODEL_KEEP, MODEL_KEEP_MIN, RANK_WEIGHT, PLANNER_WEIGHT, LAZY_TRAIN_MAX } from './model-pass-weights.ts';

/** A row the planner is about to write as references to query lists (planRows). */
export interface PlannedRow {
  subscriberId: number;
  fromPaper: number;
  toPaper: number;
  topicIds: string;
  refs: ListRef[];
}

/** What planRows decided for a chunk's rows, by their index in the rows given. */
export interface PlannedModels {
  /** The rows whose reader's model ordered (or trimmed) them: their final plain list, written instead of the references. */
  lists: Map<number, { items: Buffer; paperCount: number }>;
  /** Writes the suggestions, once the rows exist: `ids[k]` is the ledger id of row k. */
  writeSuggestions(ids: readonly number[]): void;
}

export interface ModelPassResult {
  reranked: number;
  suggested: number;
  trained: number;
}

/** A plan run's model pass, summed over its chunks: what it did and its time (ms). */
export interface ModelPassTotals extends ModelPassResult {
  ms: number;
  /** CPU time (ms) of the same. */
  cpuMs: number;
}

/** One plan run's pass (its paper index lives as long as the run). */
export function createModelPass(db: Db, now: Date): ModelPass {
  return new ModelPass(db, now);
}

export class ModelPass {
  private readonly index: PaperIndex;
  private readonly neighbourSuggester: NeighbourSuggester;
  private acc = new Float32Array(0);
  private mark = new Uint8Array(0);
  /** 1 at the positions of the papers never suggested to the row's reader (block(); cleared after each row). */
  private blocked = new Uint8Array(0);
  /** A reader's model term index by term id, -1 elsewhere (reasonsOf). */
  private termSlot = new Int16Array(0);
  private lazyLeft = LAZY_TRAIN_MAX;
  private trainedNow = 0;
  private readonly totalsSoFar: ModelPassTotals = { reranked: 0, suggested: 0, trained: 0, ms: 0, cpuMs: 0 };

  constructor(
    private readonly db: Db,
    private readonly now: Date,
  ) {
    this.index = new PaperIndex(db);
    this.neighbourSuggester = new NeighbourSuggester(db, this.index);
    this.lists = new ListReader(db);
  }

  /** Rows planned as references to query lists (ledger/lists.ts) are read merged. */
  private readonly lists: ListReader;

  /** The pass's list reader: the planner remembers in it the lists it writes (plan/query-lists.ts). */
  get listReader(): ListReader {
    return this.lists;
  }

  /** The run so far. */
  totals(): ModelPassTotals {
    return { ...this.totalsSoFar };
  }

  /** Reorders, trims and completes with suggestions the rows with ids above `before`. */
  apply(before: number): ModelPassResult {
    return this.timed(() => {
      const rows = statement<[number], Row>(this.db, SQL_ROWS).all(before);
      for (const r of rows) r.items = this.lists.plain(r.items, r.fromPaper, r.toPaper);
      const writes: ChunkWrites = { rewrites: [], suggestions: [] };
      const result = this.scoreRows(rows, writes);
      rewriteItemsMany(this.db, writes.rewrites);
      this.writeSuggestions(writes.suggestions);
      return result;
    });
  }

  /**
   * The same for rows not written yet (the planner's per-query chunk, plan/query-lists.ts): the rows of
   * readers with a model get their final list here, from the run's lists in memory, and are written once
   * (not written as references, read back, merged and rewritten); their suggestions follow the rows.
   */
  planRows(planned: readonly PlannedRow[]): PlannedModels {
    const writes: ChunkWrites = { rewrites: [], suggestions: [] };
    this.timed(() => {
      const bySid = new Map<number, Row>();
      for (const r of statement<[], Row>(this.db, SQL_READERS).all()) bySid.set(r.sid, r);
      const rows: Row[] = [];
      planned.forEach((p, k) => {
        const r = bySid.get(p.subscriberId);
        if (!r) return;
        // The row's id is not known yet: its index stands in for it until writeSuggestions.
        Object.assign(r, { id: k, fromPaper: p.fromPaper, toPaper: p.toPaper, topicIds: p.topicIds });
        r.merged = this.lists.merge(p.refs, p.fromPaper, p.toPaper);
        rows.push(r);
      });
      return this.scoreRows(rows, writes);
    });
    return {
      lists: new Map(writes.rewrites.map((w) => [w.id, { items: w.items, paperCount: w.paperCount }])),
      writeSuggestions: (ids) => {
        const { suggestions } = writes;
        this.timed(() => {
          for (let i = 0; i < suggestions.length; i += 4) suggestions[i] = ids[suggestions[i] as number];
          this.writeSuggestions(suggestions);
          return { reranked: 0, suggested: 0, trained: 0 };
        });
      },
    };
  }

  /** Runs part of the pass, adding its counts and time (wall and CPU) to the run's totals. */
  private timed(part: () => ModelPassResult): ModelPassResult {
    const started = performance.now();
    const cpu = process.cpuUsage();
    const r = part();
    const used = process.cpuUsage(cpu);
    this.totalsSoFar.cpuMs += (used.user + used.system) / 1000;
    this.totalsSoFar.reranked += r.reranked;
    this.totalsSoFar.suggested += r.suggested;
    this.totalsSoFar.trained += r.trained;
    this.totalsSoFar.ms += performance.now() - started;
    return r;
  }

  private writeSuggestions(flat: unknown[]): void {
    runBatched(this.db, 4, flat, (tuples) => SQL_SUGGEST.replace(SUGGESTION_TUPLE, tuples), SUGGESTION_TUPLE);
  }

  private modelOf(r: Row): Model | undefined {
    let m: { bias: number; a: number; b: number; weights: string } | undefined =
      r.weights !== null ? { bias: r.bias!, a: r.a!, b: r.b!, weights: r.weights } : undefined;
    if (!m && this.lazyLeft > 0) {
      this.lazyLeft--;
      this.trainedNow++;
      if (trainReaderModel(this.db, r.sid, this.now)) m = statement<[number], NonNullable<typeof m>>(this.db, SQL_MODEL).get(r.sid);
    }
    if (!m) return undefined;
    let stored = JSON.parse(m.weights) as StoredWeights;
    // Stored before its quality was measured: retrained (within the run's budget), else not trusted.
    if (stored.q === undefined && this.lazyLeft > 0) {
      this.lazyLeft--;
      this.trainedNow++;
      if (!trainReaderModel(this.db, r.sid, this.now)) return undefined;
      m = statement<[number], NonNullable<typeof m>>(this.db, SQL_MODEL).get(r.sid)!;
      stored = JSON.parse(m.weights) as StoredWeights;
    }
    const model: Model = { bias: m.bias, a: m.a, b: m.b, terms: [], w: [], anchors: [], trusted: trustedModel(stored.q) };
    stored.t.forEach((term, k) => {
      const t = this.index.termId(term);
      if (t === undefined) return; // no paper of the run has it: it cannot score any
      model.terms.push(t);
      model.w.push(stored.w[k]!);
      model.anchors.push(stored.a[k] ?? null);
    });
    return model;
  }

  /** Orders the rows of readers with a model and picks their suggestions, into `writes`. */
  private scoreRows(rows: Row[], writes: ChunkWrites): ModelPassResult {
    const result: ModelPassResult = { reranked: 0, suggested: 0, trained: 0 };
    this.trainedNow = 0;
    if (rows.length === 0) return result;
    let lo = Infinity;
    let hi = 0;
    for (const r of rows) {
      lo = Math.min(lo, r.fromPaper);
      hi = Math.max(hi, r.toPaper);
    }
    const held = `${this.index.lo}:${this.index.hi}`;
    this.index.cover(lo, hi);
    // Terms first seen in a newly held paper are missing from the cached liked vectors.
    if (`${this.index.lo}:${this.index.hi}` !== held) this.neighbourSuggester.clearCache();
    if (this.acc.length < this.index.size) {
      this.acc = new Float32Array(this.index.size);
      this.mark = new Uint8Array(this.index.size);
      this.blocked = new Uint8Array(this.index.size);
    }
    if (this.termSlot.length < this.index.termCount) this.termSlot = new Int16Array(this.index.termCount).fill(-1);
    for (const r of rows) {
      const model = this.modelOf(r);
      if (!model) continue;
      result.suggested += this.rescore(r, model, writes);
      result.reranked++;
    }
    result.trained = this.trainedNow;
    return result;
  }

  /** Marks in `blocked` the positions of papers never suggested to the row's reader; returns them (to clear). */
  private block(ids: readonly number[], ...lists: Array<string | null>): number[] {
    const marked: number[] = [];
    const mark = (id: number): void => {
      const pos = id - this.index.lo;
      if (pos < 0 || pos >= this.index.size || this.blocked[pos] === 1) return;
      this.blocked[pos] = 1;
      marked.push(pos);
    };
    for (const id of ids) mark(id);
    // Digits read in place: 1.4M ids a run for 33k readers who voted on their range (bench:plan).
    for (const list of lists) {
      if (!list) continue;
      let id = 0;
      for (let i = 0; i <= list.length; i++) {
        const c = i < list.length ? list.charCodeAt(i) : 44;
        if (c === 44) {
          mark(id);
          id = 0;
        } else id = id * 10 + c - 48;
      }
    }
    return marked;
  }

  /** The model's dot product over the held papers of the row's range, into `acc` (PaperIndex.score). */
  private accumulate(r: Row, model: Model): Span {
    return this.index.score(model.terms, model.w, r.fromPaper, r.toPaper, this.acc, this.mark);
  }

  /** One row: its order (and trim), then its suggestions. Returns the suggestions written. */
  private rescore(r: Row, model: Model, writes: ChunkWrites): number {
    const touched = this.accumulate(r, model);
    const prob = (pos: number): number => {
      const dot = pos >= 0 && pos < this.index.size ? this.acc[pos]! : 0;
      return sigmoid(model.a * (model.bias + dot) + model.b);
    };
    let blocked: number[] = [];
    try {
      const ids: number[] = [];
      const masks: number[] = [];
      const probs: number[] = [];
      if (r.merged) {
        for (let i = 0; i < r.merged.ids.length; i++) {
          ids.push(r.merged.ids[i]!);
          masks.push(r.merged.masks[i]!);
          probs.push(prob(r.merged.ids[i]! - this.index.lo));
        }
      } else {
        eachItem(r.items, r.fromPaper, r.topicIds === '' ? 0 : r.topicIds.split(',').length, (paperId, mask) => {
          ids.push(paperId);
          masks.push(mask);
          probs.push(prob(paperId - this.index.lo));
        });
      }
      // The order the model starts from: the planner's, or for a follower the one without the follow.
      const n = ids.length;
      const follow = r.follows === 1 ? followOrder(this.db, r, ids) : undefined;
      const base = follow?.order ?? ids.map((_, i) => i);
      // Key: topics matched + RANK_WEIGHT x probability - the starting order as a prior (a paper passes one
      // listed above it only by a clear margin).
      const keys = new Array<number>(n);
      base.forEach((i, rank) => {
        keys[i] = (follow ? follow.matched[i]! : popcount(masks[i]!)) + RANK_WEIGHT * probs[i]! - (n > 1 ? (PLANNER_WEIGHT * rank) / (n - 1) : 0);
      });
      // Never suggested: the list's papers, the ones voted on, the ones a muted topic matched.
      if (r.suggestions === 1) blocked = this.block(ids, r.voted, r.mutedHits);
      // Confident suggestions (a calibrated model's), the best of them ranked inside the list with the
      // topic matches (mask 0: no topic; SUGGESTION_MATCH), the rest below it.
      const candidates = r.suggestions === 1 && model.a > 0 ? this.confident(model, touched, prob) : [];
      // Only a model whose held-out quality clears the bar (quality.ts) orders the list and ranks
      // suggestions inside it; the others' suggestions go below the list, which keeps its starting order.
      const trusted = model.a > 0 && model.trusted;
      for (const c of trusted ? candidates.slice(0, inlineBound(n)) : []) {
        base.push(ids.length);
        ids.push(c.pos + this.index.lo);
        masks.push(0);
        probs.push(c.p);
        keys.push(SUGGESTION_MATCH + RANK_WEIGHT * c.p);
      }
      // A flat curve gives every paper one probability: the starting order stands.
      if (trusted || r.modelOnly === 1 || follow) {
        const rankOf = new Array<number>(ids.length);
        base.forEach((i, rank) => (rankOf[i] = rank));
        let order = trusted || r.modelOnly === 1 ? base.slice().sort((x, y) => keys[y]! - keys[x]! || rankOf[x]! - rankOf[y]!) : base;
        if (r.modelOnly === 1) order = order.filter((i, rank) => rank < MODEL_KEEP_MIN || probs[i]! >= MODEL_KEEP);
        const blob = packItems(order.map((i) => ids[i]!), order.map((i) => masks[i]!), r.fromPaper);
        writes.rewrites.push({ id: r.id, items: blob, paperCount: order.length });
      }
      if (candidates.length > 0) this.reasonsOf(model, candidates, r.id, writes);
      if (r.suggestions !== 1) return 0;
      // A flat curve (slope 0: the model has not earned trust yet): the liked papers' nearest instead.
      if (!(model.a > 0)) {
        const near = this.neighbourSuggester.suggest(r.sid, touched, this.mark, this.acc, this.blocked);
        for (const c of near) writes.suggestions.push(r.id, c.paperId, c.cos, c.reason);
        return near.length;
      }
      return candidates.length;
    } finally {
      this.acc.fill(0, touched.first, touched.last + 1);
      this.mark.fill(0, touched.first, touched.last + 1);
      for (const pos of blocked) this.blocked[pos] = 0;
    }
  }

  /** The MAX_SUGGESTIONS best papers of the row's range not blocked (block()), probability >= SUGGEST_MIN. */
  private confident(model: Model, touched: Span, prob: (pos: number) => number): Array<{ pos: number; p: number }> {
    // p >= SUGGEST_MIN, as a least dot product: most papers fail this one comparison.
    const least = (Math.log(SUGGEST_MIN / (1 - SUGGEST_MIN)) - model.b) / model.a - model.bias;
    // The MAX_SUGGESTIONS best by dot product (the probability's order), highest first, then the lower
    // position, kept in a small sorted array: a calibrated model passes hundreds of a day's papers, and
    // collecting and sorting them all was a third of the pass (CPU profile, BENCHMARKS.md).
    const { acc, blocked, mark } = this;
    // Positions rise through the walk, so a tie with a paper already kept loses: once MAX_SUGGESTIONS are
    // kept, a paper must beat the last one's score (`floor`, kept in a local).
    const best: number[] = [];
    let floor = -Infinity;
    for (let pos = touched.first; pos <= touched.last; pos++) {
      if (mark[pos] !== 1) continue;
      const a = acc[pos]!;
      if (a < least || a <= floor || blocked[pos] === 1) continue;
      let k = Math.min(best.length, MAX_SUGGESTIONS - 1);
      while (k > 0 && acc[best[k - 1]!]! < a) k--;
      best.splice(k, 0, pos);
      if (best.length > MAX_SUGGESTIONS) best.pop();
      if (best.length === MAX_SUGGESTIONS) floor = acc[best[MAX_SUGGESTIONS - 1]!]!;
    }
    return best.map((pos) => ({ pos, p: prob(pos) }));
  }

  /**
   * Each suggestion's reason, the anchor (liked paper) of the model term that adds most to its score (or
   * null), into the chunk's writes. The model's terms are looked up by term id in termSlot (filled for this
   * reader, then cleared): a search of its 64 terms per term of each paper was a tenth of the pass.
   */
  private reasonsOf(model: Model, candidates: ReadonlyArray<{ pos: number; p: number }>, rowId: number, writes: ChunkWrites): void {
    const { termSlot } = this;
    for (let k = model.terms.length - 1; k >= 0; k--) termSlot[model.terms[k]!] = k; // the first k wins, as indexOf did
    try {
      for (const c of candidates) {
        let best = 0;
        let anchor: number | null = null;
        this.index.vector(c.pos, (t, value) => {
          const k = termSlot[t]!;
          if (k < 0 || model.anchors[k] === null) return;
          const part = model.w[k]! * value;
          if (part > best) {
            best = part;
            anchor = model.anchors[k]!;
          }
        });
        writes.suggestions.push(rowId, c.pos + this.index.lo, c.p, anchor);
      }
    } finally {
      for (const t of model.terms) termSlot[t] = -1;
    }
  }
}

/** What a chunk's rows write, written together at its end (a statement per hundred rows, not per row). */
interface ChunkWrites {
  rewrites: ItemsRewrite[];
  /** digest_suggestions rows, flat: digest id, paper id, score, reason paper. */
  suggestions: unknown[];
}
