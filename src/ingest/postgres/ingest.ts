// Ingesting a batch into PostgreSQL: the same checks, normalisation, merge rules and dedupe as the SQLite
// store (ingest.ts: prepareBatch, mergePaper), in ONE transaction, whole or nothing. Set-based: the batch's
// known papers are read with one statement, new ones inserted with one (in batch order, so they get the
// same growing ids SQLite gives them), changed ones updated with one.
// Ingesters queue on a transaction advisory lock: two processes ingesting the same content at once then
// see one batch and one duplicate (as SQLite's IMMEDIATE transaction does), never a unique-key failure;
// and paper ids commit in the order they were drawn, so a matcher's max(id) never passes over a paper that
// a slower ingest would commit later with a lower id (matching and planning rely on ids growing).
import type pg from 'pg';
import type { Clock } from '../../clock.ts';
import { pgStorageFault } from '../../db/postgres/faults.ts';
import { inTransaction } from '../../db/postgres/pool.ts';
import type { IncomingBatch, IncomingPaper } from '../../types.ts';
import { mergePaper, prepareBatch, rowOf, sameRow, type IngestResult, type Row } from '../ingest.ts';
import { readPostedBatch, type PostBatchResult, type PostedBatch } from '../post-batch.ts';

/** First half of the two-int advisory lock key of ingesting ("ingt"). */
const INGEST_LOCK_CLASS = 0x696e6774;
const SQL_INGEST_LOCK = `SELECT pg_advisory_xact_lock(${INGEST_LOCK_CLASS}, hashtext(current_schema()))`;

// Whether anything was ever ingested (a fresh store gets the sample batch in local mode: serve.ts).
const SQL_ANY_BATCH = `SELECT 1 FROM batches LIMIT 1`;

export async function hasAnyBatchPg(pool: pg.Pool): Promise<boolean> {
  return ((await pool.query(SQL_ANY_BATCH)).rowCount ?? 0) > 0;
}

const SQL_FIND_DUPLICATE_BATCH = `SELECT id FROM batches WHERE source = $1 AND date = $2 AND content_hash = $3`;

const SQL_INSERT_BATCH = `
  INSERT INTO batches (source, date, content_hash, paper_count, new_paper_count, ingested_at)
  VALUES ($1, $2, $3, $4, 0, $5) RETURNING id`;

const SQL_SET_BATCH_NEW_COUNT = `UPDATE batches SET new_paper_count = $1 WHERE id = $2`;

/** The batch's known papers, by their normalised keys, with what the merge needs. */
const SQL_FIND_PAPERS_BY_KEY = `
  SELECT id, paper_key AS key, title, abstract, authors, url, published_at AS "publishedAt", upvotes, categories,
         code_url AS "codeUrl"
  FROM papers WHERE paper_key = ANY($1::text[])`;

/** New papers, in batch order (ORDER BY ord): identity values are drawn in that order, as SQLite's AUTOINCREMENT. */
const SQL_INSERT_PAPERS = `
  INSERT INTO papers (paper_key, title, abstract, authors, url, published_at, upvotes, categories, code_url,
                      first_batch_id, created_at, updated_at)
  SELECT p.key, p.title, p.abstract, p.authors, p.url, p.published_at, p.upvotes, p.categories, p.code_url, $10, $11, $11
  FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::text[], $9::text[])
       WITH ORDINALITY AS p (key, title, abstract, authors, url, published_at, upvotes, categories, code_url, ord)
  ORDER BY p.ord
  RETURNING id, paper_key AS key`;

/** Known papers whose merged metadata changed, in place (ids kept). */
const SQL_UPDATE_PAPERS = `
  UPDATE papers SET title = u.title, abstract = u.abstract, authors = u.authors, url = u.url,
         published_at = u.published_at, upvotes = u.upvotes, categories = u.categories, code_url = u.code_url,
         updated_at = $10
  FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::text[], $9::text[])
       AS u (id, title, abstract, authors, url, published_at, upvotes, categories, code_url)
  WHERE papers.id = u.id`;

const SQL_INSERT_BATCH_PAPERS = `
  INSERT INTO batch_papers (batch_id, paper_id) SELECT $1, unnest($2::bigint[]) ON CONFLICT DO NOTHING`;

type StoredPaper = Row & { id: number; key: string };

/** The columns of SQL_INSERT_PAPERS / SQL_UPDATE_PAPERS ($2…$9), one array per column. */
function columns(rows: readonly Row[]): unknown[] {
  return [
    rows.map((r) => r.title),
    rows.map((r) => r.abstract),
    rows.map((r) => r.authors),
    rows.map((r) => r.url),
    rows.map((r) => r.publishedAt),
    rows.map((r) => r.upvotes),
    rows.map((r) => r.categories),
    rows.map((r) => r.codeUrl),
  ];
}

/**
 * ingestBatch (ingest.ts) on PostgreSQL: the same result for the same batch. A bad or empty batch is
 * refused before anything is written (prepareBatch); a failure mid-way rolls the whole batch back.
 */
export async function ingestBatchPg(pool: pg.Pool, batch: IncomingBatch, clock: Clock): Promise<IngestResult> {
  const { papers, source, hash } = prepareBatch(batch, clock);
  const now = clock.now().toISOString();
  return inTransaction(pool, async (c) => {
    await c.query(SQL_INGEST_LOCK);
    const dup = (await c.query<{ id: number }>(SQL_FIND_DUPLICATE_BATCH, [source, batch.date, hash])).rows[0];
    if (dup) return { batchId: dup.id, papers: papers.length, newPapers: 0, updatedPapers: 0, duplicate: true };
    const batchId = (await c.query<{ id: number }>(SQL_INSERT_BATCH, [source, batch.date, hash, papers.length, now])).rows[0]!.id;
    const known = new Map<string, StoredPaper>();
    for (const r of (await c.query<StoredPaper>(SQL_FIND_PAPERS_BY_KEY, [papers.map((p) => p.key)])).rows) known.set(r.key, r);

    const fresh: IncomingPaper[] = papers.filter((p) => !known.has(p.key));
    const changed: Array<Row & { id: number }> = [];
    for (const p of papers) {
      const stored = known.get(p.key);
      if (!stored) continue;
      const merged = mergePaper(stored, p);
      if (!sameRow(merged, stored)) changed.push({ ...merged, id: stored.id });
    }
    const ids = new Map<string, number>([...known.values()].map((p) => [p.key, p.id]));
    if (fresh.length > 0) {
      const inserted = await c.query<{ id: number; key: string }>(SQL_INSERT_PAPERS, [
        fresh.map((p) => p.key),
        ...columns(fresh.map(rowOf)),
        batchId,
        now,
      ]);
      for (const r of inserted.rows) ids.set(r.key, r.id);
    }
    if (changed.length > 0) await c.query(SQL_UPDATE_PAPERS, [changed.map((r) => r.id), ...columns(changed), now]);
    await c.query(SQL_INSERT_BATCH_PAPERS, [batchId, papers.map((p) => ids.get(p.key)!)]);
    await c.query(SQL_SET_BATCH_NEW_COUNT, [fresh.length, batchId]);
    return { batchId, papers: papers.length, newPapers: fresh.length, updatedPapers: changed.length, duplicate: false };
  });
}

/** POST /api/batches into PostgreSQL: the same reading and answers as SQLite's (post-batch.ts), whole or nothing. */
export async function postBatchPg(pool: pg.Pool, clock: Clock, posted: PostedBatch): Promise<PostBatchResult> {
  const batch = readPostedBatch(posted);
  try {
    return { ...(await ingestBatchPg(pool, batch, clock)), source: batch.source, date: batch.date };
  } catch (e) {
    // PostgreSQL out of reach answers 503 + Retry-After, as a locked or full SQLite file does.
    throw pgStorageFault(e) ?? e;
  }
}
