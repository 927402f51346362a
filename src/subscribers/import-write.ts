// Pass 2 of a CSV import (import.ts): the staged rows are written in short transactions, each sized to hold
// the write lock about WRITE_TARGET_MS, with the lock left free between them.

import { statement } from '../db/statements.ts';
import type { Statement } from 'better-sqlite3';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from '../db/open.ts';
import { retryWhileBusy } from '../db/busy.ts';
import { CHUNK_TARGET_MS } from '../plan/planner.ts';
import { AppError, errorMessage } from '../errors.ts';
import { newSalt } from '../tokens.ts';
import { ensureQuery } from '../match/matcher.ts';
import { parseTopic } from '../match/parse.ts';
import { missingExamples } from '../match/like/like.ts';
import { refuseUnknownExamples, stagedChunks } from './import-examples.ts';
import * as repo from './records/repo.ts';
import { activeOptOuts } from '../consent/history.ts';
import { importRowStep, keptOptedOutNote } from './consent-rules.ts';
import type { SubscriberStatus } from '../types.ts';
import { LineReport, type LineIssue } from './import-report.ts';

import type { ImportApp, ImportResult, StagedRow } from './import-types.ts';

// The next slice of staged rows, in file order (keyset pagination on rowid).
const SQL_SELECT_STAGED_PAGE = (table: string) => `
  SELECT rowid, line, email, confirmed, topics FROM ${table} WHERE rowid > ? ORDER BY rowid LIMIT ?`;

// Id and status of an existing subscriber, by address (the column is COLLATE NOCASE).
const SQL_SELECT_SUBSCRIBER_STATUS = `SELECT id, status FROM subscribers WHERE email = ?`;

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

export type ChunkOutcome = ChunkCounts & { notes: LineIssue[] };

// A query id cached by an earlier chunk, still there?
const SQL_QUERY_EXISTS = `SELECT 1 AS ok FROM queries WHERE id = ?`;

/** What writing a staged row needs, kept for the whole import (the query ids span chunks). */
interface RowWriter {
  db: Db;
  findStatus: Statement<[string], { id: number; status: SubscriberStatus }>;
  queryIds: Map<string, number>;
  /** The cached queries this chunk found still there (cleared at each chunk). */
  checked: Set<string>;
  prefs: { timezone: string; deliveryHour: number; frequency: 'daily' };
}

function queryIdFor(w: RowWriter, fts: string, text: string): number {
  let id = w.queryIds.get(fts);
  // Between chunks the lock is free: the readers of a query an earlier chunk saved may have left it, and the
  // pipeline's upkeep removed it as unused (removeUnusedQueries). Checked once a chunk, in its transaction.
  if (id !== undefined && !w.checked.has(fts) && !statement<[number], { ok: 1 }>(w.db, SQL_QUERY_EXISTS).get(id)) id = undefined;
  w.checked.add(fts);
  if (id === undefined) {
    // Parsed again from the text: upvotes>= and like: keys are not FTS5 expressions.
    id = ensureQuery(w.db, parseTopic(text));
    w.queryIds.set(fts, id);
  }
  return id;
}

/** The staged rows after a rowid, in file order (the staging table's name is per import: prepared here). */
export function stagedPages(db: Db, table: string): Statement<[number, number], StagedRow & { rowid: number }> {
  return db.prepare<[number, number], StagedRow & { rowid: number }>(SQL_SELECT_STAGED_PAGE(table));
}

/** One staged row, inside the chunk's transaction: created, updated or kept opted out, counted in `chunk`. */
function writeRow(w: RowWriter, row: StagedRow, now: string, chunk: ChunkOutcome): void {
  const { db } = w;
  const existing = w.findStatus.get(row.email);
  const active = activeOptOuts(db, row.email);
  const step = importRowStep(existing, active, row.confirmed === 1);
  if (step.keptOptedOut) {
    chunk.keptOptedOut++;
    chunk.notes.push({ line: row.line, message: keptOptedOutNote(row.email, existing, active) });
  }
  if (step.write === 'none') return;
  const topics = (JSON.parse(row.topics) as Array<[string, string]>).map(([text, fts]) => ({ text, queryId: queryIdFor(w, fts, text) }));
  let id: number;
  if (existing) {
    id = existing.id;
    repo.replaceTopics(db, id, topics); // keeps the ids (and mute state) of topics that stay
    chunk.updated++;
  } else {
    // A new address is pending like every new subscriber; a confirmed row goes through repo.markConfirmed.
    id = repo.insertSubscriber(db, { email: row.email, salt: newSalt(), createdAt: now, ...w.prefs });
    repo.insertNewTopics(db, id, topics);
    chunk.created++;
  }
  if (step.confirm) repo.markConfirmed(db, id, now);
}

/** The staging table's pages and the chunk transaction, for one import. */
function chunkWriter(app: ImportApp, table: string) {
  const { db, clock, config } = app;
  const page = stagedPages(db, table);
  const w: RowWriter = {
    db,
    findStatus: statement<[string], { id: number; status: SubscriberStatus }>(db, SQL_SELECT_SUBSCRIBER_STATUS),
    queryIds: new Map(),
    checked: new Set(),
    prefs: { timezone: config.DIGEST_TZ, deliveryHour: config.DIGEST_HOUR, frequency: 'daily' as const },
  };
  // Returns the chunk's counts and notes, added to the result only once the chunk is committed.
  const writeChunk = db.transaction((rows: StagedRow[]) => {
    const now = clock.now().toISOString();
    const chunk: ChunkOutcome = { created: 0, updated: 0, keptOptedOut: 0, notes: [] };
    w.checked.clear();
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

export function addChunk(result: ImportResult, notes: LineReport, chunk: ChunkOutcome): void {
  result.created += chunk.created;
  result.updated += chunk.updated;
  result.keptOptedOut += chunk.keptOptedOut;
  for (const n of chunk.notes) notes.add(n.line, n.message);
}

/** The next chunk's rows from this one's time: toward WRITE_TARGET_MS, growing at most MAX_GROWTH. */
function nextChunkSize(size: number, ms: number): number {
  return Math.round(Math.min(CHUNK_MAX, Math.max(CHUNK_MIN, size * Math.min(MAX_GROWTH, WRITE_TARGET_MS / ms))));
}

export function finishResult(result: ImportResult, notes: LineReport): ImportResult {
  result.imported = result.created + result.updated;
  result.notes = notes.lines;
  result.noted = notes.count;
  return result;
}

export async function writeStaged(app: ImportApp, table: string, name: string, rowsPerTransaction: number | undefined): Promise<ImportResult> {
  const writer = chunkWriter(app, table);
  await refuseUnknownExamples(stagedChunks((after, limit) => writer.page.all(after, limit), CHUNK_MAX), (ids) => missingExamples(app.db, ids), name);
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
