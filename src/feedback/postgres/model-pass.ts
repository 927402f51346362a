// The reader models' pass on PostgreSQL: the same pass as SQLite's (../model-pass.ts: order, trim,
// suggestions with their reasons) and the same training (../training.ts), run unchanged over a private
// in-memory SQLite mirror of the rows and readers it reads (db/mirror.ts, as the worker renders:
// send/postgres/batch-mirror.ts), so both engines give a reader the same order and the same suggestions.
// Per batch of PASS_BATCH rows a few set queries copy what the pass reads (the rows, their readers'
// topics, votes and models, the newest shown digests of the readers it retrains, their query lists and
// paper vectors), and three set statements write back what it changed (rows through the ledger,
// suggestions, models): never a round trip per reader. The run's papers and their vectors are copied once.
// Training: a reader whose model is older than their newest vote (or who voted and has none) is trained
// here, at plan time: SQLite trains at the vote, which does not reach this process on PostgreSQL.
import type pg from 'pg';
import { insertMirrorRows, openSchemaMirror, withMirrorColumns, type SchemaMirror } from '../../db/mirror.ts';
import { statement } from '../../db/statements.ts';
import { decodeRefs, eachItem, isRefs, parseTopicIds, plainItems } from '../../ledger/index.ts';
import { forgetMirroredRows } from '../../ledger/postgres/mirror-rows.ts';
import { rewriteRowsPg, type RewrittenRow } from '../../ledger/postgres/model-rows.ts';
import { createModelPass, type ModelPass, type ModelPassResult } from '../model-pass.ts';
import { MAX_INDEXED_PAPERS } from '../paper-index.ts';
import { trainReaderModel } from '../training.ts';
import * as sql from './model-pass-sql.ts';

/** Rows (one reader each) per batch: bounds the mirror and each set query. */
export const PASS_BATCH = 2_000;

interface PassRow {
  id: number;
  sid: number;
  fromPaper: number;
  toPaper: number;
}

interface MirroredModel {
  sid: number;
  bias: number;
  a: number;
  b: number;
  weights: string;
  positives: number;
  negatives: number;
  context: number;
  at: string;
}

/** Orders, trims and completes with suggestions the rows planned after `before` (inside the planner's transaction). */
export async function applyModelPassPg(c: pg.PoolClient, before: number, now: Date): Promise<ModelPassResult & { paperDelta: number }> {
  const result = { reranked: 0, suggested: 0, trained: 0, paperDelta: 0 };
  const rows = (await c.query<PassRow>(sql.SQL_PASS_ROWS, [before])).rows;
  if (rows.length === 0) return result;
  const mirror = openSchemaMirror(sql.PASS_MIRRORED);
  try {
    const run = new PassRun(c, mirror, before, now);
    await run.loadRange(rows);
    for (let i = 0; i < rows.length; i += PASS_BATCH) {
      const r = await run.batch(rows.slice(i, i + PASS_BATCH));
      result.reranked += r.reranked;
      result.suggested += r.suggested;
      result.trained += r.trained;
      result.paperDelta += r.paperDelta;
    }
    return result;
  } finally {
    mirror.db.close();
  }
}

class PassRun {
  private readonly pass: ModelPass;
  private readonly lists = new Set<number>();
  private readonly termsHeld = new Set<number>();
  private range = { lo: 0, hi: 0 };

  constructor(
    private readonly c: pg.PoolClient,
    private readonly m: SchemaMirror,
    private readonly before: number,
    private readonly now: Date,
  ) {
    this.pass = createModelPass(m.db, now);
  }

  /** The run's papers (the newest the pass's paper index holds) and their vectors, once. */
  async loadRange(rows: readonly PassRow[]): Promise<void> {
    const hi = Math.max(...rows.map((r) => r.toPaper));
    const lo = Math.max(Math.min(...rows.map((r) => r.fromPaper)), hi - MAX_INDEXED_PAPERS);
    this.range = { lo, hi };
    // One client: its statements run one after the other (pg queues them; awaiting each says so).
    const papers = await this.fetch('papers', sql.SQL_RANGE_PAPERS, [lo, hi]);
    const terms = await this.fetch('paper_terms', sql.SQL_RANGE_TERMS, [lo, hi]);
    this.m.db.transaction(() => {
      insertMirrorRows(this.m, 'papers', papers);
      insertMirrorRows(this.m, 'paper_terms', terms);
    })();
  }

  async batch(rows: readonly PassRow[]): Promise<ModelPassResult & { paperDelta: number }> {
    const sids = rows.map((r) => r.sid);
    const stale = (await this.c.query<{ sid: number }>(sql.SQL_STALE_READERS, [sids])).rows.map((r) => r.sid);
    await this.copyIn(rows, sids, stale);
    this.m.db.transaction(() => {
      for (const sid of stale) trainReaderModel(this.m.db, sid, this.now);
    })();
    const original = new Map(this.mirroredRows().map((r) => [r.id, r]));
    const r = this.m.db.transaction(() => this.pass.apply(this.before))();
    const paperDelta = await this.writeBack(original, stale);
    forgetMirroredRows(this.m.db);
    for (const s of sql.MIRROR_FORGET_READERS) statement(this.m.db, s).run();
    return { ...r, trained: r.trained + stale.length, paperDelta };
  }

  /** What the pass and training read of these rows and readers, into the mirror. */
  private async copyIn(rows: readonly PassRow[], sids: number[], stale: number[]): Promise<void> {
    const ids = rows.map((r) => r.id);
    const readers: Array<[string, unknown[][]]> = [];
    for (const t of ['subscribers', 'topics', 'feedback', 'reader_models'] as const) readers.push([t, await this.fetch(t, sql.PG_READERS[t], [sids])]);
    const feedback = readers[2]![1];
    const fresh = await this.fetch('digests', sql.SQL_NEW_ROWS, [ids]);
    const context = stale.length > 0 ? await this.fetch('digests', sql.SQL_CONTEXT_ROWS, [stale]) : [];
    const matches = await this.fetch('query_matches', sql.SQL_MATCHES, [sids, this.range.lo, this.range.hi]);
    const col = (t: string, name: string) => this.m.columns[t]!.indexOf(name);
    const itemsAt = col('digests', 'items');
    const listIds = new Set<number>();
    for (const d of [...fresh, ...context]) {
      const items = d[itemsAt] as Buffer | null;
      if (items && isRefs(items)) for (const ref of decodeRefs(items)) if (!this.lists.has(ref.listId)) listIds.add(ref.listId);
    }
    const contextIds = context.map((d) => d[col('digests', 'id')] as number);
    const lists = listIds.size > 0 ? await this.fetch('query_lists', sql.SQL_LISTS, [[...listIds]]) : [];
    const suggestions = contextIds.length > 0 ? await this.fetch('digest_suggestions', sql.SQL_SUGGESTIONS_OF, [contextIds]) : [];
    const copies: Array<[string, unknown[][]]> = [...readers, ['digests', [...fresh, ...context]], ['query_lists', lists], ['digest_suggestions', suggestions], ['query_matches', matches]];
    this.m.db.transaction(() => {
      for (const [t, r] of copies) insertMirrorRows(this.m, t, r);
    })();
    for (const l of lists) this.lists.add(l[col('query_lists', 'id')] as number);
    // Vectors of the papers training and the liked-paper neighbours read beyond the run's own.
    const wanted = new Set<number>(feedback.map((f) => f[col('feedback', 'paper_id')] as number));
    for (const d of context) {
      const from = d[col('digests', 'from_paper')] as number;
      const plain = plainItems(this.m.db, d[itemsAt] as Buffer, from, d[col('digests', 'to_paper')] as number);
      eachItem(plain, from, parseTopicIds(d[col('digests', 'topic_ids')] as string).length, (id) => wanted.add(id));
    }
    for (const s of suggestions) wanted.add(s[col('digest_suggestions', 'paper_id')] as number);
    const missing = [...wanted].filter((id) => !this.termsHeld.has(id) && (id <= this.range.lo || id > this.range.hi));
    if (missing.length === 0) return;
    const terms = await this.fetch('paper_terms', sql.SQL_TERMS_OF, [missing]);
    this.m.db.transaction(() => insertMirrorRows(this.m, 'paper_terms', terms))();
    for (const id of missing) this.termsHeld.add(id);
  }

  /** The batch's rows in the mirror (the only ones after `before`: the mirror forgets each batch's). */
  private mirroredRows(): RewrittenRow[] {
    return statement<[number], RewrittenRow>(this.m.db, sql.MIRROR_ROWS_AFTER).all(this.before);
  }

  /** The rows the pass rewrote, the suggestions it wrote, the models trained: to PostgreSQL. Returns the change in papers listed. */
  private async writeBack(original: Map<number, RewrittenRow>, stale: number[]): Promise<number> {
    const changed = this.mirroredRows().filter((r) => !original.get(r.id)?.items.equals(r.items) || original.get(r.id)?.paperCount !== r.paperCount);
    await rewriteRowsPg(this.c, changed);
    const s = statement<[number], { digestId: number; paperId: number; score: number; reason: number | null }>(this.m.db, sql.MIRROR_SUGGESTIONS_AFTER).all(this.before);
    if (s.length > 0) await this.c.query(sql.SQL_INSERT_SUGGESTIONS, [s.map((x) => x.digestId), s.map((x) => x.paperId), s.map((x) => x.score), s.map((x) => x.reason)]);
    if (stale.length > 0) await this.saveModels(stale);
    return changed.reduce((n, r) => n + r.paperCount - original.get(r.id)!.paperCount, 0);
  }

  private async saveModels(sids: number[]): Promise<void> {
    const kept = statement<[string], MirroredModel>(this.m.db, sql.MIRROR_MODELS).all(JSON.stringify(sids));
    const keptIds = new Set(kept.map((k) => k.sid));
    const dropped = sids.filter((sid) => !keptIds.has(sid));
    if (dropped.length > 0) await this.c.query(sql.SQL_DROP_MODELS, [dropped]);
    if (kept.length === 0) return;
    const fields = ['sid', 'bias', 'a', 'b', 'weights', 'positives', 'negatives', 'context', 'at'] as const;
    await this.c.query(sql.SQL_SAVE_MODELS, fields.map((f) => kept.map((k) => k[f])));
  }

  /** A PostgreSQL statement's rows as arrays in the mirror table's column order. */
  private async fetch(table: string, text: string, values: unknown[]): Promise<unknown[][]> {
    return (await this.c.query<unknown[]>({ text: withMirrorColumns(this.m, table, text), values, rowMode: 'array' })).rows;
  }
}
