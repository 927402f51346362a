// The topic builder's live preview (GET /api/topics/preview, the confirmation page's recent papers) on
// PostgreSQL's papers. The preview's statements are SQLite's FTS5 ones, so PostgreSQL's papers, batches
// and like: examples are mirrored into one private in-memory SQLite database (as matching does for a
// run: match-in-memory.ts) and previewIn() runs there: the same answers as SQLite for the same papers.
// The whole corpus is mirrored, not only recent papers: bm25's idf and like:'s terms come from it.
//
// Built on the first preview, rebuilt when PostgreSQL's papers change. Every change to papers comes
// with a new batch row (ingest), and like: examples are only ever added, so (max batch id, example
// count) tells a stale mirror, in one indexed query per preview. Memory: one mirror, plus the next one
// while it is built (the old one is closed when the new one takes over); one build at a time.
import type pg from 'pg';
import type { Clock } from '../../clock.ts';
import { openDatabase, type Db } from '../../db/open.ts';
import { pgStorageFault } from '../../db/postgres/faults.ts';
import { previewIn, type TopicPreview, type TopicPreviewService } from '../preview-service.ts';

const SQL_VERSION = `
  SELECT (SELECT coalesce(max(id), 0) FROM batches) AS batch, (SELECT count(*) FROM like_examples) AS examples`;

const SQL_BATCHES = `
  SELECT id, source, date, content_hash AS "contentHash", paper_count AS "paperCount",
         new_paper_count AS "newPaperCount", ingested_at AS "ingestedAt"
  FROM batches ORDER BY id`;
/** Papers and batch_papers a page at a time (keyset): one page is in JS memory at once. */
const SQL_PAPERS_PAGE = `
  SELECT id, paper_key AS "paperKey", title, abstract, authors, url, published_at AS "publishedAt", upvotes,
         categories, first_batch_id AS "firstBatchId", created_at AS "createdAt", updated_at AS "updatedAt",
         code_url AS "codeUrl"
  FROM papers WHERE id > $1 ORDER BY id LIMIT $2`;
const SQL_BATCH_PAPERS_PAGE = `
  SELECT batch_id AS "batchId", paper_id AS "paperId" FROM batch_papers
  WHERE (batch_id, paper_id) > ($1, $2) ORDER BY batch_id, paper_id LIMIT $3`;
const SQL_EXAMPLES = `SELECT paper_key AS "paperKey", title, abstract, fetched_at AS "fetchedAt" FROM like_examples`;
const PAGE = 5_000;

const SQL_INSERT_BATCH = `
  INSERT INTO batches (id, source, date, content_hash, paper_count, new_paper_count, ingested_at)
  VALUES (@id, @source, @date, @contentHash, @paperCount, @newPaperCount, @ingestedAt)`;
const SQL_INSERT_PAPER = `
  INSERT INTO papers (id, paper_key, title, abstract, authors, url, published_at, upvotes, categories,
                      first_batch_id, created_at, updated_at, code_url)
  VALUES (@id, @paperKey, @title, @abstract, @authors, @url, @publishedAt, @upvotes, @categories,
          @firstBatchId, @createdAt, @updatedAt, @codeUrl)`;
const SQL_INSERT_BATCH_PAPER = `INSERT INTO batch_papers (batch_id, paper_id) VALUES (@batchId, @paperId)`;
const SQL_INSERT_EXAMPLE = `
  INSERT INTO like_examples (paper_key, title, abstract, fetched_at) VALUES (@paperKey, @title, @abstract, @fetchedAt)`;

interface Version {
  batch: number;
  examples: number;
}

const covers = (have: Version, want: Version) => have.batch >= want.batch && have.examples >= want.examples;

async function readVersion(c: pg.Pool | pg.PoolClient): Promise<Version> {
  const r = (await c.query<{ batch: string | number; examples: string | number }>(SQL_VERSION)).rows[0]!;
  return { batch: Number(r.batch), examples: Number(r.examples) };
}

/** Inserts `rows` into the mirror in one transaction. */
function insertAll(db: Db, sql: string, rows: readonly object[]): void {
  const insert = db.prepare(sql);
  db.transaction(() => rows.forEach((r) => insert.run(r)))();
}

/** A fresh mirror of PostgreSQL's papers, read in one snapshot, and the version it holds. */
async function buildMirror(pool: pg.Pool): Promise<{ version: Version; db: Db }> {
  const c = await pool.connect();
  const db = openDatabase(':memory:', { checkWritable: false });
  try {
    await c.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const version = await readVersion(c);
    insertAll(db, SQL_INSERT_BATCH, (await c.query(SQL_BATCHES)).rows);
    for (let after = 0; ; ) {
      const page = (await c.query<{ id: number }>(SQL_PAPERS_PAGE, [after, PAGE])).rows;
      if (page.length === 0) break;
      insertAll(db, SQL_INSERT_PAPER, page);
      after = Number(page[page.length - 1]!.id);
    }
    for (let after = [0, 0]; ; ) {
      const page = (await c.query<{ batchId: number; paperId: number }>(SQL_BATCH_PAPERS_PAGE, [...after, PAGE])).rows;
      if (page.length === 0) break;
      insertAll(db, SQL_INSERT_BATCH_PAPER, page);
      const last = page[page.length - 1]!;
      after = [Number(last.batchId), Number(last.paperId)];
    }
    insertAll(db, SQL_INSERT_EXAMPLE, (await c.query(SQL_EXAMPLES)).rows);
    await c.query('COMMIT');
    return { version, db };
  } catch (e) {
    db.close();
    await c.query('ROLLBACK').catch(() => {});
    throw e;
  } finally {
    c.release();
  }
}

export interface PostgresTopicPreview extends TopicPreviewService {
  preview(query: string, opts?: { days?: number }): Promise<TopicPreview>;
  /** Closes the mirror (the pool is the caller's). */
  close(): void;
}

export function createPostgresTopicPreview(deps: { pool: pg.Pool; clock: Clock }): PostgresTopicPreview {
  const { pool, clock } = deps;
  let mirror: { version: Version; db: Db } | null = null;
  let building: Promise<void> | null = null;
  let closed = false;

  const rebuild = async () => {
    const next = await buildMirror(pool);
    if (closed) {
      next.db.close();
      return;
    }
    mirror?.db.close();
    mirror = next;
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
      return previewIn(mirror!.db, clock, query, opts);
    },
    close() {
      closed = true;
      mirror?.db.close();
      mirror = null;
    },
  };
}
