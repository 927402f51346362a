// `digest import <file.csv>`: bulk import of subscribers from another list tool.
//
// CSV with a header row: email,topics[,confirmed] (any order, any case; other columns are ignored).
// Topics are separated by ';'. The file is read twice, as a stream, never held in memory:
//   1. validate every row (email, topics, confirmed) into a per-import TEMP table. Nothing real is
//      written; a bad row is reported as `line N: …` and the import stops with nothing imported.
//   2. write the staged rows (import-write.ts) in short transactions (about 20 ms each, half the planner's), leaving the write
//      lock free between them: a web write or /health never waits longer than one chunk.
// Both passes give the event loop back every few milliseconds, so the console's import does not freeze
// the pages `digest serve` answers meanwhile. Per-line findings (bad rows, rows kept opted out) go into
// one LineReport each (import-report.ts), which the CLI and the console both read.
// Imported rows never trigger confirmation emails: unconfirmed rows stay pending (no digest goes to
// them until they confirm through a link the operator sends some other way, or a later import confirms
// them). An address with an opt-out in its history (consent/history.ts) is never confirmed nor made pending
// again: an existing row keeps its status, a deleted one is not created; each such row is reported by line.
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { access } from 'node:fs/promises';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { CsvError, parse } from 'csv-parse';
import type { Db } from '../db/open.ts';
import { AppError, errorMessage, isAppError } from '../errors.ts';
import { parseTopics } from '../match/parse.ts';
import { normaliseEmail } from './records/email-address.ts';
import { ImportRefused, LineReport } from './import-report.ts';

import type { ImportApp, ImportResult, StagedRow } from './import-types.ts';
import { writeStaged } from './import-write.ts';
export { ImportRefused, MAX_LINES_LISTED, type LineIssue } from './import-report.ts';

export type { ImportApp, ImportResult } from './import-types.ts';

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

const REQUIRED_COLUMNS = ['email', 'topics'] as const;
const HEADER_HINT = 'the first row must be a header naming the columns: email,topics[,confirmed]';
const TRUE_WORDS = new Set(['true', 'yes', 'y', '1']);
const FALSE_WORDS = new Set(['false', 'no', 'n', '0', '']);

interface Columns {
  email: number;
  topics: number;
  confirmed: number | undefined;
  count: number;
}

export async function importSubscribersCsv(app: ImportApp, file: string, options: ImportOptions = {}): Promise<ImportResult> {
  const name = options.name ?? file;
  return withStagedCsv(app.db, app.logger, file, options, (table) => writeStaged(app, table, name, options.rowsPerTransaction));
}

/**
 * Pass 1 into a TEMP staging table of `db` (whole file checked; a bad row refuses it with nothing written),
 * then `write` reads the staged rows (pass 2) into whichever store; the table is dropped after.
 */
export async function withStagedCsv(
  db: Db,
  logger: ImportApp['logger'],
  file: string,
  options: Pick<ImportOptions, 'maxErrorsLogged' | 'name'>,
  write: (table: string) => Promise<ImportResult>,
): Promise<ImportResult> {
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
    const result = await write(table);
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

