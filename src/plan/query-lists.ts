// Planning once per query (PlanOptions.lists = 'per-query'): the papers of each query a chunk's readers
// need are listed once per run (ledger/lists.ts), and each reader's row only refers to the lists of their
// unmuted topics, with its watermark and bound; the loader merges them in display order. What is truly
// personal stays per reader: their bits (topic order, muted topics), and a model's order and suggestions
// (the model pass rewrites such a row as a plain list). A list covers (lo, hi]: lo the lowest watermark of
// the chunk's readers who first needed it, hi the query's matched bound; a later reader below lo gets
// another list for the query. Decision and figures: BENCHMARKS.md, "Planning per query".
import type { Db } from '../db/open.ts';
import { statement } from '../db/statements.ts';
import type { ModelPass } from '../feedback/model-pass.ts';
import { insertQueryList, insertRefRows, type ListReader, type NewRefRow, type QueryList } from '../ledger/index.ts';

/**
 * The chunk's grouped readers (planner.ts step 2a), one row each, with all their topics in bit order
 * (position, id) as one string `tid:qid:muted,…`: one result row per topic (333,333 at 100k readers) cost
 * about twice the CPU of one per reader to read (BENCHMARKS.md, reader models, seventh pass).
 */
const SQL_CHUNK_TOPICS = `
  SELECT e.id, e.slot, e.watermark, e.through,
         (SELECT group_concat(t.id || ':' || t.query_id || ':' || t.muted, ',' ORDER BY t.position, t.id)
          FROM topics t WHERE t.subscriber_id = e.id) AS topics
  FROM plan_slots e
  WHERE e.grouped = 1
  ORDER BY e.id`;
const SQL_QUERY_BOUND = `SELECT matched_through AS through FROM queries WHERE id = ?`;
/** A query's papers in (lo, hi], with the upvotes the display order uses (planned once, as SQL_PLAN_ROWS reads them). */
const SQL_QUERY_MATCHES = `
  SELECT m.paper_id AS id, p.upvotes, m.score FROM query_matches m JOIN papers p ON p.id = m.paper_id
  WHERE m.query_id = ? AND m.paper_id > ? AND m.paper_id <= ?`;

/** A row of SQL_CHUNK_TOPICS: sid, slot, watermark, through, topics. */
type ReaderRow = [number, string, number, number, string | null];

interface RunList {
  id: number;
  lo: number;
  hi: number;
  list: QueryList;
  /** Each paper's index among the run's listed papers (QueryListRun.slotOf), for counting a reader's. */
  slots: Int32Array;
}

interface Reader {
  sid: number;
  slot: string;
  watermark: number;
  through: number;
  tids: number[];
  /** Unmuted topics: their bit and query. */
  wants: Array<{ bit: number; qid: number }>;
}

/** One plan run's lists (kept in memory for the run: ~3,000 of ~1 KB on a diverse population). */
export class QueryListRun {
  private readonly byQuery = new Map<number, RunList[]>();
  /** The run's listed papers, each with a dense index: a few thousand, whatever the ids. */
  private readonly slotOf = new Map<number, number>();
  /** Per listed paper (by its index), the last reader counted (a reader's papers are counted once). */
  private stamp = new Int32Array(0);
  private readerNo = 0;
  /** Lists written by the chunk transaction under way: forgotten if it rolls back. */
  private fresh: Array<{ qid: number; run: RunList }> = [];

  constructor(
    private readonly db: Db,
    private readonly now: string,
    private readonly maxPaper: number,
    /** Where the run's lists are remembered as written (the model pass reads rows through it). */
    private readonly reader?: ListReader,
  ) {}

  /** Runs one chunk transaction: lists it wrote are kept for the run only if it commits. */
  chunk<T>(transaction: () => T): T {
    this.fresh = [];
    try {
      return transaction();
    } catch (e) {
      for (const { qid, run } of this.fresh) this.byQuery.set(qid, this.byQuery.get(qid)!.filter((l) => l !== run));
      this.reader?.forget(this.fresh.map(({ run }) => run.id));
      throw e;
    } finally {
      this.fresh = [];
    }
  }

  /**
   * Writes the rows of the chunk's grouped readers (plan_slots.grouped = 1); returns rows written. With
   * `models`, the rows of readers with a model are written once, in their final order, with their
   * suggestions (ModelPass.planRows); the others as references to the run's lists.
   */
  planChunk(models?: ModelPass): number {
    const readers = this.readers();
    this.addLists(readers);
    const rows: NewRefRow[] = [];
    for (const r of readers) {
      const refs = r.wants.map((w) => ({ bit: w.bit, run: this.cover(w.qid, r.watermark, r.through)! }));
      const count = this.countPapers(refs.map((x) => x.run), r.watermark, r.through);
      if (count === 0) continue;
      rows.push({
        subscriberId: r.sid,
        edition: r.slot,
        fromPaper: r.watermark,
        toPaper: r.through,
        topicIds: r.tids.join(','),
        refs: refs.map((x) => ({ bit: x.bit, listId: x.run.id })),
        paperCount: count,
        plannedAt: this.now,
      });
    }
    const modelled = models?.planRows(rows);
    modelled?.lists.forEach((l, k) => Object.assign(rows[k]!, { items: l.items, paperCount: l.paperCount }));
    const ids = insertRefRows(this.db, rows);
    modelled?.writeSuggestions(ids);
    return rows.length;
  }

  private readers(): Reader[] {
    const out: Reader[] = [];
    for (const [sid, slot, watermark, through, topics] of statement<[], ReaderRow>(this.db, SQL_CHUNK_TOPICS).raw().all()) {
      if (topics === null) continue; // no topic: no row (as the join per topic had it)
      const r: Reader = { sid, slot, watermark, through, tids: [], wants: [] };
      // `tid:qid:muted` triples, comma-separated, read digit by digit.
      const text = topics;
      let field = 0;
      let value = 0;
      let tid = 0;
      let qid = 0;
      for (let i = 0; i <= text.length; i++) {
        const c = i < text.length ? text.charCodeAt(i) : 44;
        if (c === 58 || c === 44) {
          if (field === 0) tid = value;
          else if (field === 1) qid = value;
          else {
            if (value === 0) r.wants.push({ bit: r.tids.length, qid });
            r.tids.push(tid);
          }
          field = c === 44 ? 0 : field + 1;
          value = 0;
        } else value = value * 10 + c - 48;
      }
      out.push(r);
    }
    return out;
  }

  /** The run's list of `qid` that holds (watermark, through], if any. */
  private cover(qid: number, watermark: number, through: number): RunList | undefined {
    return this.byQuery.get(qid)?.find((l) => l.lo <= watermark && l.hi >= through);
  }

  /** Lists the queries the chunk's readers need and no list of the run covers, from their lowest watermark. */
  private addLists(readers: Reader[]): void {
    const need = new Map<number, number>();
    for (const r of readers) {
      for (const w of r.wants) {
        if (this.cover(w.qid, r.watermark, r.through)) continue;
        need.set(w.qid, Math.min(need.get(w.qid) ?? Infinity, r.watermark));
      }
    }
    const bound = statement<[number], { through: number }>(this.db, SQL_QUERY_BOUND);
    const matches = statement<[number, number, number], { id: number; upvotes: number; score: number }>(this.db, SQL_QUERY_MATCHES);
    for (const [qid, lo] of need) {
      const hi = Math.min(this.maxPaper, bound.get(qid)?.through ?? 0);
      const rows = matches.all(qid, lo, hi);
      const l = { queryId: qid, fromPaper: lo, toPaper: hi, plannedAt: this.now, ids: rows.map((m) => m.id), upvotes: rows.map((m) => m.upvotes), scores: rows.map((m) => m.score) };
      const id = insertQueryList(this.db, l);
      const list: QueryList = { ids: Int32Array.from(l.ids), upvotes: Int32Array.from(l.upvotes), scores: Float64Array.from(l.scores) };
      this.reader?.remember(id, list);
      const runs = this.byQuery.get(qid) ?? [];
      const slots = Int32Array.from(l.ids, (paperId) => {
        let slot = this.slotOf.get(paperId);
        if (slot === undefined) this.slotOf.set(paperId, (slot = this.slotOf.size));
        return slot;
      });
      const run = { id, lo, hi, list, slots };
      runs.push(run);
      this.byQuery.set(qid, runs);
      this.fresh.push({ qid, run });
    }
  }

  /** Distinct papers of `lists` in (from, to]: the row's paper_count. */
  private countPapers(runs: RunList[], from: number, to: number): number {
    if (this.stamp.length < this.slotOf.size) this.stamp = new Int32Array(this.slotOf.size * 2);
    const me = ++this.readerNo;
    let n = 0;
    for (const { list, slots } of runs) {
      for (let i = 0; i < list.ids.length; i++) {
        const id = list.ids[i]!;
        if (id <= from || id > to || this.stamp[slots[i]!] === me) continue;
        this.stamp[slots[i]!] = me;
        n++;
      }
    }
    return n;
  }
}
