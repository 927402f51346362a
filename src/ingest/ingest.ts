// The ingest service: one batch in, in ONE transaction: the batch row, papers upserted by their
// normalised key with the merge rules, and the batch's paper list. Identical content again writes nothing.
import { createHash } from 'node:crypto';
import { statement } from '../db/statements.ts';
import { utcDate, type Clock } from '../clock.ts';
import { parseStringArray } from '../db/json-columns.ts';
import { rowFromPaper, type PaperRow } from '../db/paper-row.ts';
import type { Db } from '../db/open.ts';
import { AppError } from '../errors.ts';
import type { IncomingBatch, IncomingPaper } from '../types.ts';
import { isHttpUrl, LIMITS } from './batch-schema.ts';
import { isCalendarDate, paperKey, withoutControls } from './normalize.ts';
import { plural } from '../words.ts';

export interface IngestResult {
  batchId: number;
  /** Papers in the batch. */
  papers: number;
  /** Papers seen for the first time (they get new, growing ids). */
  newPapers: number;
  /** Papers already known whose stored metadata changed by the merge. */
  updatedPapers: number;
  /** True when this exact content was already ingested for this source and day: nothing was written. */
  duplicate: boolean;
}

/** "25 papers, 3 new, 0 updated": what `digest ingest`, `digest run` and the console say a batch brought. */
export function ingestCounts(r: Pick<IngestResult, 'papers' | 'newPapers' | 'updatedPapers'>): string {
  return `${plural(r.papers, 'paper', 'papers')}, ${r.newPapers} new, ${r.updatedPapers} updated`;
}

/** An earlier batch with the same source, day and content. */
const SQL_FIND_DUPLICATE_BATCH = `
  SELECT id FROM batches WHERE source = ? AND date = ? AND content_hash = ?`;

/** The batch row; counts are filled in once the papers are written. */
const SQL_INSERT_BATCH = `
  INSERT INTO batches (source, date, content_hash, paper_count, new_paper_count, ingested_at)
  VALUES (@source, @date, @hash, @paperCount, 0, @now)`;

const SQL_SET_BATCH_NEW_COUNT = `
  UPDATE batches SET new_paper_count = ? WHERE id = ?`;

/** A known paper, by its normalised key, with what the merge needs. */
const SQL_FIND_PAPER_BY_KEY = `
  SELECT id, title, abstract, authors, url, published_at AS publishedAt, upvotes, categories, code_url AS codeUrl
  FROM papers WHERE paper_key = ?`;

/** A paper seen for the first time: it gets the next id (AUTOINCREMENT, never reused). */
const SQL_INSERT_PAPER = `
  INSERT INTO papers (paper_key, title, abstract, authors, url, published_at, upvotes, categories, code_url,
                      first_batch_id, created_at, updated_at)
  VALUES (@key, @title, @abstract, @authors, @url, @publishedAt, @upvotes, @categories, @codeUrl, @batchId, @now, @now)`;

/** A known paper's merged metadata, in place: its id (and so its place in digests' id ranges) is kept. */
const SQL_UPDATE_PAPER = `
  UPDATE papers
  SET title = @title, abstract = @abstract, authors = @authors, url = @url, published_at = @publishedAt,
      upvotes = @upvotes, categories = @categories, code_url = @codeUrl, updated_at = @now
  WHERE id = @id`;

const SQL_INSERT_BATCH_PAPER = `
  INSERT OR IGNORE INTO batch_papers (batch_id, paper_id) VALUES (?, ?)`;

/** The metadata the merge rules decide (the key and id never change), in its stored form (db/paper-row.ts). */
export type Row = PaperRow<'title' | 'abstract' | 'authors' | 'url' | 'publishedAt' | 'upvotes' | 'categories' | 'codeUrl'>;

type StoredPaper = Row & { id: number };

/** Every field of Row (the Record type makes a missing or unknown one a compile error), for sameRow(). */
const ROW_FIELDS = Object.keys({
  title: true,
  abstract: true,
  authors: true,
  url: true,
  publishedAt: true,
  upvotes: true,
  categories: true,
  codeUrl: true,
} satisfies Record<keyof Row, true>) as Array<keyof Row>;

/**
 * The merge rules when a known paper arrives again (from another source or another day):
 * title, url and publication date stay as first seen (filled in when missing); the longer abstract
 * and the longer author list win; upvotes keep the highest count (Hugging Face's; arXiv has none);
 * categories are the union, first seen first (arXiv's; Hugging Face has none).
 */
export function mergePaper(stored: Row, incoming: IncomingPaper): Row {
  const storedAuthors = parseStringArray(stored.authors);
  const categories = [...new Set([...parseStringArray(stored.categories), ...incoming.categories])].slice(0, LIMITS.categories);
  return {
    title: stored.title.trim() === '' ? incoming.title : stored.title,
    abstract: incoming.abstract.length > stored.abstract.length ? incoming.abstract : stored.abstract,
    authors: incoming.authors.length > storedAuthors.length ? JSON.stringify(incoming.authors) : stored.authors,
    url: stored.url,
    publishedAt: stored.publishedAt ?? incoming.publishedAt,
    upvotes: Math.max(stored.upvotes, incoming.upvotes),
    categories: JSON.stringify(categories),
    // A code link, once known, stays; a source that names one fills it in.
    codeUrl: stored.codeUrl ?? incoming.codeUrl ?? null,
  };
}

export function rowOf(p: IncomingPaper): Row {
  const { title, abstract, authors, url, publishedAt, upvotes, categories } = p;
  return rowFromPaper({ title, abstract, authors, url, publishedAt, upvotes, categories, codeUrl: p.codeUrl ?? null });
}

export function sameRow(a: Row, b: Row): boolean {
  return ROW_FIELDS.every((field) => a[field] === b[field]);
}

/** sha256 over the normalised papers, in key order: the same content in another order is the same batch. */
export function contentHash(papers: readonly IncomingPaper[]): string {
  const canonical = [...papers]
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    // The code link joins the hash only when present, so batches ingested before it existed keep their hash.
    .map((p) => {
      const fields: unknown[] = [p.key, p.title, p.abstract, p.authors, p.url, p.publishedAt, p.upvotes, p.categories];
      if (p.codeUrl) fields.push(p.codeUrl);
      return fields;
    });
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
}

/**
 * A batch dated more than one day after today (UTC) is refused whole: no feed publishes tomorrow's
 * papers the day before, so such a date is a mistake (a typo, a wrong clock, a bad export). The date is
 * only metadata now, but an impossible one would still be shown in emails and the console.
 */
function checkNotFuture(batch: IncomingBatch, clock: Clock): void {
  const latest = utcDate(new Date(clock.now().getTime() + 86_400_000));
  if (batch.date > latest) {
    throw new AppError(
      'BATCH_FUTURE_DATE',
      `Refused: batch date ${batch.date} is more than one day after today (${utcDate(clock.now())} UTC); nothing was ingested`,
    );
  }
}

/** Checks what the readers guarantee, for batches built elsewhere; normalises keys. */
function checkBatch(batch: IncomingBatch): IncomingPaper[] {
  const bad = (detail: string) => new AppError('BATCH_INVALID', `Invalid batch: ${detail}`);
  if (typeof batch.source !== 'string' || batch.source.trim() === '' || batch.source.length > LIMITS.source) {
    throw bad('source: required');
  }
  if (!isCalendarDate(batch.date)) throw bad('date: must be a date written YYYY-MM-DD');
  if (batch.papers.length === 0) {
    throw new AppError('BATCH_EMPTY', `Empty batch: ${batch.source} ${batch.date} has no papers; nothing to ingest`);
  }
  if (batch.papers.length > LIMITS.papers) throw bad(`papers: too many items (at most ${LIMITS.papers})`);
  const seen = new Map<string, number>();
  return batch.papers.map((given, i) => {
    // Whatever reader or API brought it, no control character reaches the database (nor so the email or the web).
    const p = cleanPaperText(given);
    const key = paperKey(p.key ?? '');
    if (key === '') throw bad(`papers[${i}].id: required`);
    if (!p.title || p.title.trim() === '') throw bad(`papers[${i}].title: required`);
    if (!isHttpUrl(p.url)) throw bad(`papers[${i}].url: must be an http(s) URL`);
    if (!Number.isInteger(p.upvotes) || p.upvotes < 0) throw bad(`papers[${i}].upvotes: must be a whole number >= 0`);
    if (p.codeUrl != null && !isHttpUrl(p.codeUrl)) throw bad(`papers[${i}].codeUrl: must be an http(s) URL`);
    const first = seen.get(key);
    if (first !== undefined) throw bad(`papers[${i}].id: ${key} is already papers[${first}]`);
    seen.set(key, i);
    return key === p.key ? p : { ...p, key };
  });
}

/** Every text field of a paper without control characters (normalize.ts withoutControls); a batch posted as JSON may hold anything. */
function cleanPaperText(p: IncomingPaper): IncomingPaper {
  const text = <T>(v: T): T => (typeof v === 'string' ? (withoutControls(v) as T) : v);
  const list = <T>(v: T): T => (Array.isArray(v) ? (v.map(text) as T) : v);
  return {
    ...p,
    key: text(p.key),
    title: text(p.title),
    abstract: text(p.abstract),
    authors: list(p.authors),
    categories: list(p.categories),
    url: text(p.url),
    codeUrl: text(p.codeUrl),
    publishedAt: text(p.publishedAt),
  };
}

/** A batch checked and normalised (keys, text), with its source name and content hash: what both stores write. */
export interface PreparedBatch {
  papers: IncomingPaper[];
  source: string;
  hash: string;
}

/** The checks and normalisation shared by the SQLite and the PostgreSQL store; throws before anything is written. */
export function prepareBatch(batch: IncomingBatch, clock: Clock): PreparedBatch {
  const papers = checkBatch(batch);
  checkNotFuture(batch, clock);
  return { papers, source: withoutControls(batch.source).trim(), hash: contentHash(papers) };
}

// Whether anything was ever ingested (a fresh database gets the sample batch in local mode).
const SQL_ANY_BATCH = `SELECT 1 FROM batches LIMIT 1`;

export function hasAnyBatch(db: Db): boolean {
  return statement(db, SQL_ANY_BATCH).get() !== undefined;
}

/**
 * Ingests one batch in one transaction. Re-ingesting the same content for the same source and day
 * writes nothing and answers duplicate: true with the earlier batch id. A paper already known keeps
 * its id; its metadata merges (see mergePaper). An empty batch is refused (BATCH_EMPTY); a bad one
 * (BATCH_INVALID) writes nothing.
 */
export function ingestBatch(db: Db, batch: IncomingBatch, clock: Clock): IngestResult {
  const { papers, source, hash } = prepareBatch(batch, clock);
  // Named statements, prepared once per connection (db/statements.ts).
  const s = {
    findDuplicate: statement(db, SQL_FIND_DUPLICATE_BATCH),
    insertBatch: statement(db, SQL_INSERT_BATCH),
    setBatchNewCount: statement(db, SQL_SET_BATCH_NEW_COUNT),
    findPaper: statement(db, SQL_FIND_PAPER_BY_KEY),
    insertPaper: statement(db, SQL_INSERT_PAPER),
    updatePaper: statement(db, SQL_UPDATE_PAPER),
    insertBatchPaper: statement(db, SQL_INSERT_BATCH_PAPER),
  };
  const now = clock.now().toISOString();

  const run = db.transaction((): IngestResult => {
    const dup = s.findDuplicate.get(source, batch.date, hash) as { id: number } | undefined;
    if (dup) return { batchId: dup.id, papers: papers.length, newPapers: 0, updatedPapers: 0, duplicate: true };

    const batchId = Number(
      s.insertBatch.run({ source, date: batch.date, hash, paperCount: papers.length, now }).lastInsertRowid,
    );
    let newPapers = 0;
    let updatedPapers = 0;
    for (const p of papers) {
      const stored = s.findPaper.get(p.key) as StoredPaper | undefined;
      let paperId: number;
      if (!stored) {
        paperId = Number(s.insertPaper.run({ key: p.key, ...rowOf(p), batchId, now }).lastInsertRowid);
        newPapers++;
      } else {
        paperId = stored.id;
        const merged = mergePaper(stored, p);
        if (!sameRow(merged, stored)) {
          s.updatePaper.run({ id: stored.id, ...merged, now });
          updatedPapers++;
        }
      }
      s.insertBatchPaper.run(batchId, paperId);
    }
    s.setBatchNewCount.run(newPapers, batchId);
    return { batchId, papers: papers.length, newPapers, updatedPapers, duplicate: false };
  });
  // IMMEDIATE: take the write lock first, so two processes ingesting together queue instead of failing.
  return run.immediate();
}
