// The rows one claimed batch reads, copied from PostgreSQL into a worker-private in-memory SQLite that has
// the service's schema (db/migrations), so the SQLite service's loader (render/view.ts DigestLoader) reads
// them unchanged: ONE render path for both engines. Per batch, a few set queries (mirror-sql.ts): the rows,
// their subscribers (read after the claim: the consent check at send time), topics, queries and
// suggestions; then the query lists and papers not yet mirrored, with their batches, matches and topic texts.
// Decision (README, "Running on more than one machine"): a copy into the loader's own schema rather than a
// second fetch path inside DigestLoader.load, the measured hot path of a SQLite send, which stays as it was.
import type pg from 'pg';
import { insertMirrorRows, openSchemaMirror, withMirrorColumns, type SchemaMirror } from '../../db/mirror.ts';
import type { Db } from '../../db/open.ts';
import { statement } from '../../db/statements.ts';
import { decodeList, decodeRefs, eachItem, isRefs, parseTopicIds } from '../../ledger/index.ts';
import { emptyMirror, forgetMirroredRow } from '../../ledger/postgres/mirror-rows.ts';
import type { Links } from '../../links.ts';
import { DigestLoader, type LoadedDigest } from '../../render/view.ts';
import { MIRRORED, PG_MIRROR, PG_MIRROR_PAPERS, type MirroredTable } from './mirror-sql.ts';

/**
 * A mirror starts afresh (its loader's caches go with it) past this many papers (a few editions' worth) or
 * rows read (readers and their topics stay, as the texts naming papers' matched topics: bounded this way).
 */
const MAX_MIRRORED_PAPERS = 20_000;
const MAX_MIRRORED_ROWS = 50_000;

/** A digest row as read from PostgreSQL, the columns the mirror needs to find its papers and lists. */
interface RowShape {
  items: Buffer | null;
  from_paper: number;
  topic_ids: string;
}

export class BatchMirror {
  private mirror!: SchemaMirror;
  private db!: Db;
  private loader!: DigestLoader;
  private columns!: Record<MirroredTable, string[]>;
  private readonly papers = new Set<number>();
  private readonly lists = new Set<number>();
  private rows = 0;

  constructor(
    private readonly pool: pg.Pool,
    private readonly links: Links,
  ) {
    this.fresh();
  }

  /** Copies what the rows `ids` read (rows deleted meanwhile are simply absent: `take` gives undefined). */
  async prepare(ids: readonly number[]): Promise<void> {
    if (ids.length === 0) return;
    if (this.papers.size > MAX_MIRRORED_PAPERS || this.rows > MAX_MIRRORED_ROWS) this.fresh();
    this.rows += ids.length;
    const [digests, subscribers, topics, queries, suggestions] = await this.fetchAll(
      ['digests', 'subscribers', 'topics', 'queries', 'digest_suggestions'],
      PG_MIRROR,
      ids,
    );
    const rows = digests!.map((r) => this.shape(r));
    const subscriberIds = subscribers!.map((r) => r[0] as number);
    const newLists = [...new Set(rows.flatMap((r) => (r.items && isRefs(r.items) ? decodeRefs(r.items).map((x) => x.listId) : [])))].filter(
      (id) => !this.lists.has(id),
    );
    const lists = newLists.length > 0 ? await this.fetch(PG_MIRROR.query_lists, 'query_lists', newLists) : [];
    const wanted = this.paperIds(rows, lists, suggestions!);
    const paperRows = wanted.length > 0 ? await this.paperRows(wanted) : undefined;
    this.db.transaction(() => {
      // A subscriber's topics as they are now (one may be gone since the last batch), then everything else.
      const dropTopics = statement<[number]>(this.db, `DELETE FROM topics WHERE subscriber_id = ?`);
      for (const id of subscriberIds) dropTopics.run(id);
      this.insert('subscribers', subscribers!);
      this.insert('queries', queries!);
      this.insert('topics', topics!);
      this.insert('digests', digests!);
      this.insert('digest_suggestions', suggestions!);
      this.insert('query_lists', lists);
      for (const r of lists) this.lists.add(r[0] as number);
      if (paperRows) {
        for (const t of ['batches', 'papers', 'queries', 'topics', 'query_matches'] as const) this.insert(t, paperRows[t]);
        for (const r of paperRows.papers) this.papers.add(r[0] as number);
      }
    })();
  }

  /** One prepared row for the renderer (render/view.ts), then dropped from the mirror; undefined when gone. */
  take(id: number, papers: number | undefined): LoadedDigest | undefined {
    try {
      return this.loader.load(id, papers === undefined ? {} : { papers });
    } finally {
      forgetMirroredRow(this.db, id);
    }
  }

  close(): void {
    this.db.close();
  }

  /**
   * Every row and cache gone, the schema kept (the web view's pooled mirrors, subscribers/postgres/
   * open-digest.ts): the next prepare copies afresh what it reads, as a new mirror would, without building one.
   */
  empty(): void {
    emptyMirror(this.db, MIRRORED);
    this.loader = new DigestLoader(this.db, this.links);
    this.papers.clear();
    this.lists.clear();
    this.rows = 0;
  }

  /** What the mirror holds in memory, in bytes (its pages, free ones included: SQLite keeps them). */
  bytes(): number {
    return (this.db.pragma('page_count', { simple: true }) as number) * (this.db.pragma('page_size', { simple: true }) as number);
  }

  /** A new, empty mirror and loader (at start, and when it holds many papers). */
  private fresh(): void {
    this.db?.close();
    this.mirror = openSchemaMirror(MIRRORED);
    this.db = this.mirror.db;
    this.columns = this.mirror.columns as Record<MirroredTable, string[]>;
    this.loader = new DigestLoader(this.db, this.links);
    this.papers.clear();
    this.lists.clear();
    this.rows = 0;
  }

  /** One of PG_MIRROR's statements, its rows as arrays in the mirror table's column order. */
  private async fetch(sql: string, table: MirroredTable, ids: readonly number[]): Promise<unknown[][]> {
    const r = await this.pool.query<unknown[]>({ text: withMirrorColumns(this.mirror, table, sql), values: [ids], rowMode: 'array' });
    return r.rows;
  }

  /**
   * Several of these statements in ONE round trip (the simple protocol, `$1` written out as an array literal
   * of integers): one backend wakes once per batch instead of one per statement. Each table's rows as `fetch`.
   */
  private async fetchAll<T extends MirroredTable>(tables: readonly T[], sqls: Record<T, string>, ids: readonly number[]): Promise<unknown[][][]> {
    const literal = `'{${ids.map((id) => integer(id)).join(',')}}'`;
    const text = tables.map((t) => withMirrorColumns(this.mirror, t, sqls[t]).replaceAll('$1', literal)).join(';\n');
    const r = (await this.pool.query<unknown[]>({ text, rowMode: 'array' })) as unknown as pg.QueryResult<unknown[]> | pg.QueryResult<unknown[]>[];
    const results = Array.isArray(r) ? r : [r];
    if (results.length !== tables.length) throw new Error(`mirror read: ${results.length} results for ${tables.length} statements`);
    return results.map((x) => x.rows);
  }

  private insert(table: MirroredTable, rows: unknown[][]): void {
    insertMirrorRows(this.mirror, table, rows);
  }

  private shape(r: unknown[]): RowShape {
    const cols = this.columns.digests;
    return {
      items: r[cols.indexOf('items')] as Buffer | null,
      from_paper: r[cols.indexOf('from_paper')] as number,
      topic_ids: r[cols.indexOf('topic_ids')] as string,
    };
  }

  /**
   * Papers the rows may show and are not mirrored yet: a row's own list, every paper of its query lists (a
   * superset of the row's bounds: lists are shared, so read once), its suggestions and the papers behind them.
   */
  private paperIds(rows: RowShape[], lists: unknown[][], suggestions: unknown[][]): number[] {
    const want = new Set<number>();
    const add = (id: number | null) => {
      if (id !== null && !this.papers.has(id)) want.add(id);
    };
    for (const r of rows) {
      if (r.items && !isRefs(r.items)) eachItem(r.items, r.from_paper, parseTopicIds(r.topic_ids).length, (id) => add(id));
    }
    const itemsAt = this.columns.query_lists.indexOf('items');
    for (const l of lists) for (const id of decodeList(l[itemsAt] as Buffer).ids) add(id);
    const s = this.columns.digest_suggestions;
    for (const x of suggestions) {
      add(x[s.indexOf('paper_id')] as number);
      add(x[s.indexOf('reason_paper')] as number | null);
    }
    return [...want];
  }

  /** The papers, and what the loader reads with each: its batch (day), its matches, their queries and topic texts. */
  private async paperRows(ids: number[]) {
    const [batches, papers, queries, topics, matches] = await this.fetchAll(
      ['batches', 'papers', 'queries', 'topics', 'query_matches'],
      PG_MIRROR_PAPERS,
      ids,
    );
    return { batches: batches!, papers: papers!, queries: queries!, topics: topics!, query_matches: matches! };
  }
}

/** An id as written into a statement's text: an integer, or the statement is never sent. */
function integer(id: number): string {
  if (!Number.isSafeInteger(id)) throw new Error(`mirror read: not an id: ${String(id)}`);
  return String(id);
}
