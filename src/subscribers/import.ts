// `digest import <file.csv>`: bulk import of subscribers from another list tool.
//
// CSV with a header row: email,topics[,confirmed] (any order, any case; other columns are ignored).
// Topics are separated by ';'. The file is read twice, as a stream, never held in memory:
//   1. validate every row (email, topics, confirmed) into a per-import TEMP table. Nothing real is
//      written; a bad row is reported as `line N: …` and the import stops with nothing imported.
//   2. write the staged rows in short transactions (about 20 ms each, half the planner's), leaving the write
//      lock free between them: a web write or /health never waits longer than one chunk.
// Both passes give the event loop back every few milliseconds, so the console's import does not freeze
// the pages `digest serve` answers meanwhile. Per-line findings (bad rows, rows kept opted out) go into
// one LineReport each (import-report.ts), which the CLI and the console both read.
// Imported rows never trigger confirmation emails: unconfirmed rows stay pending (no digest goes to
// them until they confirm through a link the operator sends some other way, or a later import confirms
// them). An address with an opt-out in its history (consent/history.ts) is never confirmed nor made pending
// again: an existing row keeps its status, a deleted one is not created; each such row is reported by line.
import { randomBytes } from 'node:crypto';
import { statement } from '../db/statements.ts';
import type { Statement } from 'better-sqlite3';
import { createReadStream } from 'node:fs';
import { access } from 'node:fs/promises';
import { setImmediate as yieldToEventLoop, setTimeout as sleep } from 'node:timers/promises';
import { CsvError, parse } from 'csv-parse';
import type { Config } from '../config.ts';
import type { Db } from '../db/open.ts';
import { retryWhileBusy } from '../db/busy.ts';
import { CHUNK_TARGET_MS } from '../plan/planner.ts';
import { AppError, errorMessage, isAppError } from '../errors.ts';
import type { Clock } from '../clock.ts';
import type { Logger } from '../log.ts';
import { newSalt } from '../tokens.ts';
import { ensureQuery } from '../topics/matcher.ts';
import { parseTopic, parseTopics } from '../topics/parse.ts';
import { normaliseEmail } from './email-address.ts';
import * as repo from './repo.ts';
import { activeOptOuts, describeOptOuts } from '../consent/history.ts';
import { ImportRefused, LineReport, type LineIssue } from './import-report.ts';

export { ImportRefused, MAX_LINES_LISTED, type LineIssue } from './import-report.ts';

export interface ImportResult {
  /** Rows written: created + updated. */
  imported: number;
  created: number;
  updated: number;
  /**
   * Rows of addresses with an opt-out (now, or in their history and not lifted): never confirmed nor made
   * pending again; an existing row keeps its status (its topics are replaced), a deleted one is not created.
   */
  keptOptedOut: number;
  /** What was done differently from what a line asked, by line (the first MAX_LINES_LISTED). */
  notes: LineIssue[];
  /** Lines with a note, listed or not. */
  noted: number;
}

export interface ImportOptions {
  /**
   * Rows per write transaction. Default: sized as the import goes so that each holds the write lock about
   * CHUNK_TARGET_MS (40 ms); a number fixes it (tests).
   */
  rowsPerTransaction?: number;
  /** Bad rows named in the log before the import gives up listing them (default 20). */
  maxErrorsLogged?: number;
  /** How messages name the file (default: its path): the console names an upload as the operator chose it. */
  name?: string | undefined;
}

/** What the importer needs from the app (the CLI passes the whole App). */
export interface ImportApp {
  db: Db;
  clock: Clock;
  logger: Logger;
  config: Pick<Config, 'DIGEST_TZ' | 'DIGEST_HOUR'> & Partial<Pick<Config, 'DB_BUSY_TIMEOUT_MS'>>;
}

const REQUIRED_COLUMNS = ['email', 'topics'] as const;
const HEADER_HINT = 'the first row must be a header naming the columns: email,topics[,confirmed]';
const TRUE_WORDS = new Set(['true', 'yes', 'y', '1']);
const FALSE_WORDS = new Set(['false', 'no', 'n', '0', '']);

/** A validated row, as staged: topics as [text, fts] pairs with duplicates of one query removed. */
interface StagedRow {
  line: number;
  email: string;
  confirmed: number;
  topics: string;
}

interface Columns {
  email: number;
  topics: number;
  confirmed: number | undefined;
  count: number;
}

export async function importSubscribersCsv(app: ImportApp, file: string, options: ImportOptions = {}): Promise<ImportResult> {
  const { db, logger } = app;
  const rowsPerTransaction = options.rowsPerTransaction;
  const name = options.name ?? file;
  try {
    await access(file);
  } catch (cause) {
    throw new AppError('IMPORT_FILE', `${name}: cannot read the file (${errorMessage(cause)})`, { cause });
  }
  // A TEMP table is private to this connection and never touches the database file.
  const table = `temp.import_rows_${randomBytes(6).toString('hex')}`;
  db.exec(CREATE_STAGING(table));
  try {
    const started = Date.now();
    const staged = await validateIntoStaging(db, table, { path: file, name }, options.maxErrorsLogged ?? 20, logger);
    logger.info({ file, rows: staged, ms: Date.now() - started }, 'import: every row is valid');
    const result = await writeStaged(app, table, name, rowsPerTransaction);
    logger.info({ file, ...result, ms: Date.now() - started }, 'import: done');
    return result;
  } finally {
    db.exec(`DROP TABLE IF EXISTS ${table}`);
  }
}

// --- SQL -------------------------------------------------------------------------------------------

// Staging for one import: each valid row in file order. The NOCASE unique email finds an address
// given twice in the file (the subscribers table compares addresses the same way).
const CREATE_STAGING = (table: string) => `
  CREATE TABLE ${table} (
    line      INTEGER NOT NULL,
    email     TEXT NOT NULL COLLATE NOCASE UNIQUE,
    confirmed INTEGER NOT NULL,
    topics    TEXT NOT NULL  -- JSON [[text, fts], …] in the order given
  )`;

// Stage one row; a second row with the same address changes nothing (the caller reports it).
const SQL_INSERT_STAGED = (table: string) => `
  INSERT INTO ${table} (line, email, confirmed, topics) VALUES (@line, @email, @confirmed, @topics)
  ON CONFLICT (email) DO NOTHING`;

// The line where an address was first staged (to name both lines of a duplicate).
const SQL_SELECT_STAGED_LINE = (table: string) => `SELECT line FROM ${table} WHERE email = ?`;

// The next slice of staged rows, in file order (keyset pagination on rowid).
const SQL_SELECT_STAGED_PAGE = (table: string) => `
  SELECT rowid, line, email, confirmed, topics FROM ${table} WHERE rowid > ? ORDER BY rowid LIMIT ?`;

// Id and status of an existing subscriber, by address (the column is COLLATE NOCASE).
const SQL_SELECT_SUBSCRIBER_STATUS = `SELECT id, status FROM subscribers WHERE email = ?`;

// --- pass 1: validate -------------------------------------------------------------------------------

/** Longest stretch pass 1 runs before giving the event loop back (its staged rows are flushed then). */
const SLICE_MS = 10;
/** Bytes read and parsed in one go: csv-parse took 1.1 s for 25k rows read 16 KB at a time (up to 100 ms without a break), 0.24 s at 4 KB. */
const READ_CHUNK = 4 * 1024;

async function validateIntoStaging(
  db: Db,
  table: string,
  file: { path: string; name: string },
  maxErrorsLogged: number,
  logger: ImportApp['logger'],
): Promise<number> {
  // Over this import's own staging table (its name is made per import): prepared here, not by statement().
  const insert = db.prepare<[StagedRow]>(SQL_INSERT_STAGED(table));
  const firstLine = db.prepare<[string], { line: number }>(SQL_SELECT_STAGED_LINE(table));
  const bad = new LineReport();
  let pending: StagedRow[] = [];
  let staged = 0;
  // Only the TEMP table is written (a few milliseconds of rows at a time): the database file's write lock
  // is never taken in this pass.
  const flush = db.transaction((rows: StagedRow[]) => {
    for (const row of rows) {
      if (insert.run(row).changes === 1) {
        staged++;
        continue;
      }
      report(row.line, `email: ${row.email} is already on line ${firstLine.get(row.email)?.line ?? '?'} of this file`);
    }
  });
  const report = (line: number, message: string) => {
    bad.add(line, message);
    if (bad.count <= maxErrorsLogged) logger.warn({ file: file.name, line }, `import: bad row: ${message}`);
  };

  let columns: Columns | undefined;
  const source = createReadStream(file.path, { highWaterMark: READ_CHUNK });
  // relax_quotes: a hand-written `rl;"self-play"` (quotes inside an unquoted field) keeps its quotes as typed.
  const parser = source.pipe(
    parse({ bom: true, trim: true, skip_empty_lines: true, relax_column_count: true, relax_quotes: true, info: true }),
  );
  source.on('error', (e) => parser.destroy(e));
  let slice = performance.now();
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      const line = info.lines;
      if (!columns) {
        columns = readHeader(record, file.name, line);
        continue;
      }
      try {
        pending.push(validateRow(record, columns, line));
      } catch (e) {
        if (!isAppError(e)) throw e;
        report(line, e.message);
      }
      // Parsed records arrive as resolved promises, which never let timers or sockets in by themselves.
      if (performance.now() - slice >= SLICE_MS) {
        flush(pending);
        pending = [];
        await yieldToEventLoop();
        slice = performance.now();
      }
    }
  } catch (e) {
    if (e instanceof CsvError) {
      const line = (e as CsvError & { lines?: number }).lines;
      throw new AppError('IMPORT_INVALID', `${file.name} line ${line ?? '?'}: not valid CSV (${e.message}); nothing was imported`, {
        cause: e,
      });
    }
    throw e;
  } finally {
    source.destroy();
  }
  flush(pending);
  if (!columns) throw new AppError('IMPORT_INVALID', `${file.name}: the file is empty; ${HEADER_HINT}`);
  if (bad.count > 0) throw new ImportRefused(file.name, bad);
  return staged;
}

function readHeader(record: string[], file: string, line: number): Columns {
  const names = record.map((c) => c.trim().toLowerCase());
  const missing = REQUIRED_COLUMNS.filter((c) => !names.includes(c));
  if (missing.length > 0) {
    throw new AppError(
      'IMPORT_INVALID',
      `${file} line ${line}: no ${missing.join(' or ')} column in the header (${HEADER_HINT}); nothing was imported`,
    );
  }
  for (const c of ['email', 'topics', 'confirmed']) {
    if (names.indexOf(c) !== names.lastIndexOf(c)) {
      throw new AppError('IMPORT_INVALID', `${file} line ${line}: the header names the ${c} column twice; nothing was imported`);
    }
  }
  const confirmed = names.indexOf('confirmed');
  return { email: names.indexOf('email'), topics: names.indexOf('topics'), confirmed: confirmed < 0 ? undefined : confirmed, count: names.length };
}

/** Throws AppError with a message naming the field; the caller adds the line. */
function validateRow(record: string[], columns: Columns, line: number): StagedRow {
  if (record.length !== columns.count) {
    throw new AppError('IMPORT_INVALID', `expected ${columns.count} fields like the header, found ${record.length}`);
  }
  const email = normaliseEmail(record[columns.email] ?? '');
  const texts = (record[columns.topics] ?? '')
    .split(';')
    .map((t) => t.trim())
    .filter((t) => t !== '');
  if (texts.length === 0) throw new AppError('TOPIC_REQUIRED', 'topics: at least one topic is required (separate topics with ;)', { where: { field: 'topics' } });
  const pairs: Array<[string, string]> = [];
  const seen = new Set<string>();
  for (const t of parseTopics(texts)) {
    if (seen.has(t.fts)) continue; // the same query twice keeps the first, as preferences do
    seen.add(t.fts);
    pairs.push([t.text, t.fts]);
  }
  let confirmed = 0;
  if (columns.confirmed !== undefined) {
    const v = (record[columns.confirmed] ?? '').trim().toLowerCase();
    if (TRUE_WORDS.has(v)) confirmed = 1;
    else if (!FALSE_WORDS.has(v)) {
      throw new AppError('IMPORT_INVALID', `confirmed: "${v.slice(0, 20)}" is not one of true/false, yes/no, 1/0 (or empty)`);
    }
  }
  return { line, email, confirmed, topics: JSON.stringify(pairs) };
}

// --- pass 2: write ----------------------------------------------------------------------------------

/**
 * Each write chunk is sized from the last one's time to take about this long: half the planner's
 * CHUNK_TARGET_MS, because the console's import runs on the web server's own event loop (a chunk holds the
 * lock and the loop at once), and a loaded machine often makes a chunk twice as long as the last.
 */
const WRITE_TARGET_MS = CHUNK_TARGET_MS / 2;
/** Growth per chunk at most (shrinking is at once): one quick chunk is not a trend. */
const MAX_GROWTH = 1.5;
/** Least pause after a write chunk, with the lock free. */
const IMPORT_GAP_MIN_MS = 10;
/** First write chunk, in rows (about 10 ms on this kind of machine). */
const FIRST_CHUNK = 100;
const CHUNK_MIN = 20;
const CHUNK_MAX = 20_000;

type ChunkCounts = { created: number; updated: number; keptOptedOut: number };

type ChunkOutcome = ChunkCounts & { notes: LineIssue[] };

/** What writing a staged row needs, kept for the whole import (the query ids span chunks). */
interface RowWriter {
  db: Db;
  findStatus: Statement<[string], { id: number; status: string }>;
  queryIds: Map<string, number>;
  prefs: { timezone: string; deliveryHour: number; frequency: 'daily' };
}

function queryIdFor(w: RowWriter, fts: string, text: string): number {
  let id = w.queryIds.get(fts);
  if (id === undefined) {
    // Parsed again from the text: upvotes>= and like: keys are not FTS5 expressions.
    id = ensureQuery(w.db, parseTopic(text));
    w.queryIds.set(fts, id);
  }
  return id;
}

/** One staged row, inside the chunk's transaction: created, updated or kept opted out, counted in `chunk`. */
function writeRow(w: RowWriter, row: StagedRow, now: string, chunk: ChunkOutcome): void {
  const { db } = w;
  const existing = w.findStatus.get(row.email);
  const active = activeOptOuts(db, row.email);
  const left = existing?.status === 'unsubscribed' || existing?.status === 'suppressed';
  if (left || active.length > 0) {
    chunk.keptOptedOut++;
    chunk.notes.push({ line: row.line, message: `${row.email}: opted out (${active.length > 0 ? describeOptOuts(active) : String(existing?.status)}): not confirmed` });
  }
  // An address whose row was deleted after it opted out is not created again.
  if (!existing && active.length > 0) return;
  const topics = (JSON.parse(row.topics) as Array<[string, string]>).map(([text, fts]) => ({ text, queryId: queryIdFor(w, fts, text) }));
  let id: number;
  let status: string;
  if (existing) {
    ({ id, status } = existing);
    repo.replaceTopics(db, id, topics); // keeps the ids (and mute state) of topics that stay
    chunk.updated++;
  } else {
    // A new address is pending like every new subscriber; a confirmed row goes through repo.markConfirmed.
    id = repo.insertSubscriber(db, { email: row.email, salt: newSalt(), createdAt: now, ...w.prefs });
    repo.insertNewTopics(db, id, topics);
    status = 'pending';
    chunk.created++;
  }
  if (row.confirmed === 1 && status === 'pending' && active.length === 0) repo.markConfirmed(db, id, now);
}

/** The staging table's pages and the chunk transaction, for one import. */
function chunkWriter(app: ImportApp, table: string) {
  const { db, clock, config } = app;
  // The staging table's name is per import (see above): prepared here.
  const page = db.prepare<[number, number], StagedRow & { rowid: number }>(SQL_SELECT_STAGED_PAGE(table));
  const w: RowWriter = {
    db,
    findStatus: statement<[string], { id: number; status: string }>(db, SQL_SELECT_SUBSCRIBER_STATUS),
    queryIds: new Map(),
    prefs: { timezone: config.DIGEST_TZ, deliveryHour: config.DIGEST_HOUR, frequency: 'daily' as const },
  };
  // Returns the chunk's counts and notes, added to the result only once the chunk is committed.
  const writeChunk = db.transaction((rows: StagedRow[]) => {
    const now = clock.now().toISOString();
    const chunk: ChunkOutcome = { created: 0, updated: 0, keptOptedOut: 0, notes: [] };
    for (const row of rows) writeRow(w, row, now, chunk);
    return chunk;
  });
  return { page, writeChunk, queryIds: w.queryIds };
}
type ChunkWriter = ReturnType<typeof chunkWriter>;

/** One chunk in its own IMMEDIATE transaction; a failure stops the import with what is already committed. */
async function writeOneChunk(app: ImportApp, writer: ChunkWriter, rows: StagedRow[], name: string, result: ImportResult): Promise<ChunkOutcome> {
  try {
    // Another process's lock (a send run's record, a web write) is waited for without blocking the loop.
    return await retryWhileBusy(() => writer.writeChunk.immediate(rows), app.config.DB_BUSY_TIMEOUT_MS ?? 0);
  } catch (cause) {
    writer.queryIds.clear(); // queries created by the rolled-back chunk are gone with it
    // Earlier chunks are committed; this one rolled back. Importing the same file again finishes the job.
    const done = result.created + result.updated;
    throw new AppError(
      'IMPORT_WRITE_FAILED',
      `${name} line ${rows[0]!.line}: writing stopped (${errorMessage(cause)}); the ${done} rows before it are imported, ` +
        'run the same import again to finish',
      { cause, temporary: true },
    );
  }
}

function addChunk(result: ImportResult, notes: LineReport, chunk: ChunkOutcome): void {
  result.created += chunk.created;
  result.updated += chunk.updated;
  result.keptOptedOut += chunk.keptOptedOut;
  for (const n of chunk.notes) notes.add(n.line, n.message);
}

/** The next chunk's rows from this one's time: toward WRITE_TARGET_MS, growing at most MAX_GROWTH. */
function nextChunkSize(size: number, ms: number): number {
  return Math.round(Math.min(CHUNK_MAX, Math.max(CHUNK_MIN, size * Math.min(MAX_GROWTH, WRITE_TARGET_MS / ms))));
}

function finishResult(result: ImportResult, notes: LineReport): ImportResult {
  result.imported = result.created + result.updated;
  result.notes = notes.lines;
  result.noted = notes.count;
  return result;
}

async function writeStaged(app: ImportApp, table: string, name: string, rowsPerTransaction: number | undefined): Promise<ImportResult> {
  const writer = chunkWriter(app, table);
  const result: ImportResult = { imported: 0, created: 0, updated: 0, keptOptedOut: 0, notes: [], noted: 0 };
  const notes = new LineReport();
  let size = rowsPerTransaction ?? FIRST_CHUNK;
  let after = 0;
  for (;;) {
    const rows = writer.page.all(after, size);
    if (rows.length === 0) break;
    const started = performance.now();
    const chunk = await writeOneChunk(app, writer, rows, name, result);
    const ms = Math.max(performance.now() - started, 1);
    addChunk(result, notes, chunk);
    after = rows[rows.length - 1]!.rowid;
    app.logger.debug({ rows: result.created + result.updated, chunk: rows.length, ms: Math.round(ms) }, 'import: chunk written');
    if (rowsPerTransaction === undefined) size = nextChunkSize(size, ms);
    // The lock stays free a while: a yield alone lets this loop take it straight back. Longer than after a
    // planner chunk (a quarter of its time): an import is no one's deadline, and a web write retrying every
    // few milliseconds (web/lock-retry.ts) must find the gap even when a loaded machine stretched the chunk.
    await sleep(Math.min(50, Math.max(IMPORT_GAP_MIN_MS, ms / 2)));
  }
  return finishResult(result, notes);
}
