// The topic builder's live preview (GET /api/topics/preview, the confirmation page's recent papers) on
// PostgreSQL's papers. The preview's statements are SQLite's FTS5 ones, so PostgreSQL's papers, batches
// and like: examples are mirrored into one private in-memory SQLite database (as matching does for a
// run: match-in-memory.ts) and previewIn() runs there: the same answers as SQLite for the same papers.
// The whole corpus is mirrored while it fits in PREVIEW_MIRROR_MB (bm25's idf and like:'s terms come from
// it: SQLite's answers to the bit); past that, the newest batch days that fit (a paper counts in the newest
// day of its batches, as the preview's "since" reads it; at least the newest day), older papers evicted at
// each refresh, and an answer whose days reach before the mirror's first day says from which day it counts.
//
// Built on the first preview, refreshed when PostgreSQL's papers change. Every change to papers comes
// with a new batch row (ingest writes and updates only that batch's papers), and like: examples are only
// ever added, so (max batch id, example count) tells a stale mirror, in one indexed query per preview,
// and the refresh reads only the new batches' papers. Memory: one mirror of the corpus, plus one
// refresh's rows while they are read; one build or refresh at a time.
import type pg from 'pg';
import type { Clock } from '../../clock.ts';
import { DEFAULT_PREVIEW_MIRROR_MB } from '../../config.ts';
import { openDatabase, type Db } from '../../db/open.ts';
import { pgStorageFault } from '../../db/postgres/faults.ts';
import { previewIn, type TopicPreview, type TopicPreviewService } from '../preview-service.ts';

/** A paper in a batch dated `from` or later (its first batch, or any it came back in); '' is every paper. */
function inWindow(paper: string, from: string): string {
  return `(${from} = '' OR EXISTS (SELECT 1 FROM papers w JOIN batches b ON b.id = w.first_batch_id WHERE w.id = ${paper} AND b.date >= ${from})
    OR EXISTS (SELECT 1 FROM batch_papers wb JOIN batches b ON b.id = wb.batch_id WHERE wb.paper_id = ${paper} AND b.date >= ${from}))`;
}

/**
 * Each batch day's papers (a paper in the newest day of its batches) and their text bytes, newest first:
 * what the mirror's window is chosen from.
 */
export const SQL_DAY_SIZES = `
  SELECT day, count(*)::int AS papers, sum(bytes)::float8 AS bytes FROM (
    SELECT p.id, max(b.date) AS day,
           octet_length(p.title) + octet_length(p.abstract) + octet_length(p.authors) + octet_length(p.categories) + octet_length(p.url) AS bytes
    FROM papers p
    JOIN (SELECT id AS paper_id, first_batch_id AS batch_id FROM papers UNION ALL SELECT paper_id, batch_id FROM batch_papers) pb ON pb.paper_id = p.id
    JOIN batches b ON b.id = pb.batch_id
    GROUP BY p.id) x
  GROUP BY day ORDER BY day DESC`;

/**
 * Bytes a mirrored paper takes in this process, from its text bytes (the row, its FTS5 index and SQLite's
 * pages): fitted on bench/pg-topic-preview.ts's corpus (BENCHMARKS.md "The preview's memory budget").
 */
export const mirrorBytes = (papers: number, textBytes: number) => PAPER_OVERHEAD * papers + TEXT_FACTOR * textBytes;
const PAPER_OVERHEAD = 600;
const TEXT_FACTOR = 2.6;

/** The first day of the newest days whose papers fit in `budget` bytes ('' when all fit; at least the newest day). */
export function windowFrom(days: ReadonlyArray<{ day: string; papers: number; bytes: number }>, budget: number): string {
  let used = 0;
  for (let i = 0; i < days.length; i++) {
    used += mirrorBytes(days[i]!.papers, days[i]!.bytes);
    if (used > budget) return i === 0 ? days[0]!.day : days[i - 1]!.day;
  }
  return '';
}

const SQL_VERSION = `
  SELECT (SELECT coalesce(max(id), 0) FROM batches) AS batch, (SELECT count(*) FROM like_examples) AS examples`;

const SQL_BATCHES = `
  SELECT id, source, date, content_hash AS "contentHash", paper_count AS "paperCount",
         new_paper_count AS "newPaperCount", ingested_at AS "ingestedAt"
  FROM batches WHERE id > $1 ORDER BY id`;
/**
 * Papers new since the mirror's newest ($2), or in a batch since its newest ($3): an ingest updates only
 * papers of the batch it writes. A page at a time (keyset on id).
 */
const SQL_PAPERS_PAGE = `
  SELECT id, paper_key AS "paperKey", title, abstract, authors, url, published_at AS "publishedAt", upvotes,
         categories, first_batch_id AS "firstBatchId", created_at AS "createdAt", updated_at AS "updatedAt",
         code_url AS "codeUrl"
  FROM papers p
  WHERE id > $1 AND (id > $2 OR id IN (SELECT paper_id FROM batch_papers WHERE batch_id > $3)) AND ${inWindow('p.id', '$5')}
  ORDER BY id LIMIT $4`;
const SQL_BATCH_PAPERS_PAGE = `
  SELECT o.batch_id AS "batchId", o.paper_id AS "paperId" FROM batch_papers o
  WHERE o.batch_id > $1 AND (o.batch_id, o.paper_id) > ($2, $3) AND ${inWindow('o.paper_id', '$5')}
  ORDER BY o.batch_id, o.paper_id LIMIT $4`;
const SQL_EXAMPLES = `SELECT paper_key AS "paperKey", title, abstract, fetched_at AS "fetchedAt" FROM like_examples`;
const SQL_MAX_PAPER = `SELECT coalesce(max(id), 0) AS id FROM papers`;
const PAGE = 5_000;

const SQL_INSERT_BATCH = `
  INSERT INTO batches (id, source, date, content_hash, paper_count, new_paper_count, ingested_at)
  VALUES (@id, @source, @date, @contentHash, @paperCount, @newPaperCount, @ingestedAt)`;
/** A known paper is updated in place (papers_fts_update re-indexes it). */
const SQL_UPSERT_PAPER = `
  INSERT INTO papers (id, paper_key, title, abstract, authors, url, published_at, upvotes, categories,
                      first_batch_id, created_at, updated_at, code_url)
  VALUES (@id, @paperKey, @title, @abstract, @authors, @url, @publishedAt, @upvotes, @categories,
          @firstBatchId, @createdAt, @updatedAt, @codeUrl)
  ON CONFLICT (id) DO UPDATE SET title = excluded.title, abstract = excluded.abstract, authors = excluded.authors,
    url = excluded.url, published_at = excluded.published_at, upvotes = excluded.upvotes,
    categories = excluded.categories, updated_at = excluded.updated_at, code_url = excluded.code_url`;
const SQL_INSERT_BATCH_PAPER = `INSERT OR IGNORE INTO batch_papers (batch_id, paper_id) VALUES (@batchId, @paperId)`;
const SQL_INSERT_EXAMPLE = `
  INSERT OR IGNORE INTO like_examples (paper_key, title, abstract, fetched_at) VALUES (@paperKey, @title, @abstract, @fetchedAt)`;

interface Version {
  batch: number;
  examples: number;
}

interface Mirror {
  db: Db;
  version: Version;
  /** The newest paper id it holds. */
  maxPaper: number;
  /** The first batch day whose papers it holds ('' : every paper). */
  from: string;
}

/** Papers of the mirror no batch dated `from` or later holds (a window that moved on), and their batch rows. */
const SQL_EVICT_BATCH_PAPERS = `
  DELETE FROM batch_papers WHERE paper_id IN (SELECT id FROM papers p WHERE NOT (${inWindow('p.id', '@from')}))`;
const SQL_EVICT_PAPERS = `DELETE FROM papers WHERE NOT (${inWindow('papers.id', '@from')})`;

const covers = (have: Version, want: Version) => have.batch >= want.batch && have.examples >= want.examples;

async function readVersion(c: pg.Pool | pg.PoolClient): Promise<Version> {
  const r = (await c.query<{ batch: string | number; examples: string | number }>(SQL_VERSION)).rows[0]!;
  return { batch: Number(r.batch), examples: Number(r.examples) };
}

/** Rows for the mirror: [statement, rows], applied in order. */
type Changes = Array<[string, object[]]>;

function apply(db: Db, changes: Changes): void {
  db.transaction(() => {
    for (const [sql, rows] of changes) {
      const run = db.prepare(sql);
      for (const r of rows) run.run(r);
    }
  })();
}

/**
 * What PostgreSQL holds beyond `from` (nothing mirrored yet: everything), read in one snapshot. Each page
 * goes to `sink` as it comes: a new mirror takes them at once (nobody reads it yet), a live one collects
 * them to apply in one transaction, so a preview never reads a half-refreshed mirror.
 */
async function readChanges(pool: pg.Pool, from: Mirror | null, budget: number, sink: (changes: Changes) => void): Promise<{ version: Version; maxPaper: number; from: string }> {
  const batchFrom = from?.version.batch ?? 0;
  const paperFrom = from?.maxPaper ?? 0;
  const c = await pool.connect();
  try {
    await c.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const version = await readVersion(c);
    const maxPaper = Number((await c.query<{ id: number }>(SQL_MAX_PAPER)).rows[0]!.id);
    const day = windowFrom((await c.query<{ day: string; papers: number; bytes: number }>(SQL_DAY_SIZES)).rows, budget);
    // Every batch row (a few per day): a mirrored paper's first batch may be older than the window.
    sink([[SQL_INSERT_BATCH, (await c.query(SQL_BATCHES, [batchFrom])).rows]]);
    for (let after = 0; ; ) {
      const page = (await c.query<{ id: number }>(SQL_PAPERS_PAGE, [after, paperFrom, batchFrom, PAGE, day])).rows;
      if (page.length === 0) break;
      sink([[SQL_UPSERT_PAPER, page]]);
      after = Number(page[page.length - 1]!.id);
    }
    for (let after = [0, 0]; ; ) {
      const page = (await c.query<{ batchId: number; paperId: number }>(SQL_BATCH_PAPERS_PAGE, [batchFrom, ...after, PAGE, day])).rows;
      if (page.length === 0) break;
      sink([[SQL_INSERT_BATCH_PAPER, page]]);
      const last = page[page.length - 1]!;
      after = [Number(last.batchId), Number(last.paperId)];
    }
    // like: examples are few and only ever added: all of them, the known ones ignored.
    if (from === null || version.examples > from.version.examples) sink([[SQL_INSERT_EXAMPLE, (await c.query(SQL_EXAMPLES)).rows]]);
    if (from !== null && day > from.from) sink([[SQL_EVICT_BATCH_PAPERS, [{ from: day }]], [SQL_EVICT_PAPERS, [{ from: day }]]]);
    await c.query('COMMIT');
    return { version, maxPaper, from: day };
  } catch (e) {
    await c.query('ROLLBACK').catch(() => {});
    throw e;
  } finally {
    c.release();
  }
}

/** A new mirror of PostgreSQL's papers. */
async function buildMirror(pool: pg.Pool, budget: number): Promise<Mirror> {
  const db = openDatabase(':memory:', { checkWritable: false });
  try {
    return { db, ...(await readChanges(pool, null, budget, (changes) => apply(db, changes))) };
  } catch (e) {
    db.close();
    throw e;
  }
}

/** Brings a live mirror up to PostgreSQL: only what came since (the new batches' papers), applied at once. */
async function refreshMirror(pool: pg.Pool, mirror: Mirror, budget: number): Promise<void> {
  const collected: Changes = [];
  const read = await readChanges(pool, mirror, budget, (changes) => collected.push(...changes));
  if (!mirror.db.open) return; // closed meanwhile (shutdown)
  apply(mirror.db, collected);
  mirror.version = read.version;
  mirror.maxPaper = read.maxPaper;
  // A window that widened again (less came than went) is not refilled with older papers: rebuilt at restart.
  if (read.from > mirror.from) mirror.from = read.from;
}

export interface PostgresTopicPreview extends TopicPreviewService {
  preview(query: string, opts?: { days?: number }): Promise<TopicPreview>;
  /** What the mirror holds now (undefined before the first preview): papers, its first day ('' : all), SQLite's page bytes. */
  stats(): { papers: number; from: string; bytes: number } | undefined;
  /** Closes the mirror (the pool is the caller's). */
  close(): void;
}

export function createPostgresTopicPreview(deps: { pool: pg.Pool; clock: Clock; budgetMb?: number }): PostgresTopicPreview {
  const { pool, clock } = deps;
  const budget = (deps.budgetMb ?? DEFAULT_PREVIEW_MIRROR_MB) * 1024 * 1024;
  let mirror: Mirror | null = null;
  let building: Promise<void> | null = null;
  let closed = false;

  const rebuild = async () => {
    if (mirror) return refreshMirror(pool, mirror, budget);
    const next = await buildMirror(pool, budget);
    if (closed) next.db.close();
    else mirror = next;
  };

  /** Until the mirror holds at least `want` (a build already under way may predate it: then one more). */
  const fresh = async (want: Version) => {
    while (!mirror || !covers(mirror.version, want)) {
      if (closed) throw new Error('the topic preview is closed');
      building ??= rebuild().finally(() => (building = null));
      await building;
    }
  };

  return {
    async preview(query, opts) {
      if (query.trim() === '') return { ok: true, total: 0, papers: [] };
      try {
        await fresh(await readVersion(pool));
      } catch (e) {
        // PostgreSQL out of reach answers 503 + Retry-After, as its other routes do.
        throw pgStorageFault(e) ?? e;
      }
      // Synchronous from here: no rebuild can close this mirror while it is read.
      return previewIn(mirror!.db, clock, query, { ...opts, ...(mirror!.from === '' ? {} : { coveredFrom: mirror!.from }) });
    },
    stats() {
      if (!mirror) return undefined;
      const pages = Number(mirror.db.pragma('page_count', { simple: true })) * Number(mirror.db.pragma('page_size', { simple: true }));
      return { papers: Number((mirror.db.prepare('SELECT count(*) AS n FROM papers').get() as { n: number }).n), from: mirror.from, bytes: pages };
    },
    close() {
      closed = true;
      mirror?.db.close();
      mirror = null;
    },
  };
}
