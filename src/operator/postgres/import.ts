// `digest import` and the console's Import on PostgreSQL: pass 1 is SQLite's (the whole file checked into a
// private in-memory staging table; a bad row refuses the file with nothing written), then PostgreSQL's own
// check (a like: topic's examples must be papers or looked-up examples PostgreSQL holds: else refused by
// line, still before any write), then the rows are written in chunks, set-based (import-chunk.ts), following
// consent-rules.ts importRowStep: no email, no opted-out address confirmed, made pending again or re-created.
import Database from 'better-sqlite3';
import type pg from 'pg';
import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import type { Db } from '../../db/open.ts';
import { inTransaction } from '../../db/postgres/pool.ts';
import type { Logger } from '../../log.ts';
import { parseTopic } from '../../match/parse.ts';
import { missingExamplesPg } from '../../match/postgres/like-examples.ts';
import { withStagedCsv, type ImportResult } from '../../subscribers/import.ts';
import { refuseUnknownExamples, stagedChunks, stagedTopics } from '../../subscribers/import-examples.ts';
import { LineReport } from '../../subscribers/import-report.ts';
import type { StagedRow } from '../../subscribers/import-types.ts';
import { addChunk, finishResult, stagedPages, type ChunkOutcome } from '../../subscribers/import-write.ts';
import * as records from '../../subscribers/records/postgres.ts';
import { writeChunkPg, type ChunkContext } from './import-chunk.ts';

export interface PgImportDeps {
  pool: pg.Pool;
  clock: Clock;
  logger: Logger;
  config: Pick<Config, 'DIGEST_TZ' | 'DIGEST_HOUR'>;
}

/**
 * Rows per write transaction: its addresses' advisory locks stay far below the server's lock table
 * (max_locks_per_transaction 64 x 100 connections by default, shared by every session), and a one-click
 * unsubscribe waits at most one chunk. Measured: BENCHMARKS.md § The operator's import on PostgreSQL.
 */
const ROWS_PER_CHUNK = 500;

type Staged = StagedRow & { rowid: number };
type Page = (after: number, limit: number) => Staged[];
const pages = (read: Page) => stagedChunks(read, ROWS_PER_CHUNK);

export async function importCsvPg(deps: PgImportDeps, path: string, name = path): Promise<ImportResult> {
  // Staging only: never the deployment's data.
  const staging: Db = new Database(':memory:');
  try {
    return await withStagedCsv(staging, deps.logger, path, { name }, async (table) => {
      const page = stagedPages(staging, table);
      const read: Page = (after, limit) => page.all(after, limit);
      await refuseUnknownExamples(pages(read), (ids) => missingExamplesPg(deps.pool, ids), name);
      return writeStagedPg(deps, read);
    });
  } finally {
    staging.close();
  }
}

async function writeStagedPg(deps: PgImportDeps, read: Page): Promise<ImportResult> {
  const { pool, clock, config } = deps;
  const prefs = { timezone: config.DIGEST_TZ, deliveryHour: config.DIGEST_HOUR, frequency: 'daily' as const };
  const result: ImportResult = { imported: 0, created: 0, updated: 0, keptOptedOut: 0, notes: [], noted: 0 };
  const notes = new LineReport();
  const queryIds = new Map<string, number>();
  for (const rows of pages(read)) addChunk(result, notes, await writeChunkKeepingQueries(pool, rows, { now: clock.now().toISOString(), prefs, queryIds }));
  return finishResult(result, notes);
}

/**
 * One chunk. Its new queries first, committed alone: a chunk holding address locks then never waits on a
 * query row a door transaction (holding its own address lock) is inserting. Then the chunk's transaction
 * holds every query id it names FOR KEY SHARE before writing: the upkeep (plan/postgres/upkeep.ts) may have
 * removed one as unused in between (saved just now, or by an earlier chunk whose readers left it since), and
 * a topic naming it would break the chunk; such a query is saved again and the chunk tried again.
 */
async function writeChunkKeepingQueries(pool: pg.Pool, rows: readonly Staged[], ctx: ChunkContext): Promise<ChunkOutcome> {
  const { queryIds } = ctx;
  for (;;) {
    const wanted = new Map<string, string>();
    for (const row of rows) for (const [text, fts] of stagedTopics(row)) if (!queryIds.has(fts)) wanted.set(fts, text);
    // Parsed again from the text: upvotes>= and like: keys are not the expressions themselves.
    const parsed = [...wanted].map(([fts, text]) => ({ fts, q: parseTopic(text) }));
    const ids = await records.ensureQueries(pool, parsed.map((p) => p.q));
    for (const p of parsed) queryIds.set(p.fts, ids.get(p.q.fts)!);
    const named = new Map(rows.flatMap((row) => stagedTopics(row).map(([, fts]) => [fts, queryIds.get(fts)!] as const)));
    const outcome = await inTransaction(pool, async (c) => {
      const kept = await records.keepQueries(c, [...new Set(named.values())]);
      const gone = [...named].filter(([, id]) => !kept.has(id));
      for (const [fts] of gone) queryIds.delete(fts);
      return gone.length > 0 ? undefined : writeChunkPg(c, rows, ctx);
    });
    if (outcome) return outcome;
  }
}
