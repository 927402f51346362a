// `digest import` and the console's Import on PostgreSQL: pass 1 is SQLite's (the whole file checked into a
// private in-memory staging table; a bad row refuses the file with nothing written), then PostgreSQL's own
// check (like: topics are not on PostgreSQL yet: refused by line, still before any write), then the rows
// are written in chunks following consent-rules.ts importRowStep: no email, no opted-out address
// confirmed, made pending again or re-created.
import Database from 'better-sqlite3';
import type pg from 'pg';
import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import { activeOptOuts } from '../../consent/postgres.ts';
import type { Db } from '../../db/open.ts';
import { inTransaction } from '../../db/postgres/pool.ts';
import type { Logger } from '../../log.ts';
import { parseTopic } from '../../match/parse.ts';
import { newSalt } from '../../tokens.ts';
import { importRowStep, keptOptedOutNote } from '../../subscribers/consent-rules.ts';
import { withStagedCsv, type ImportResult } from '../../subscribers/import.ts';
import { ImportRefused, LineReport } from '../../subscribers/import-report.ts';
import type { StagedRow } from '../../subscribers/import-types.ts';
import { addChunk, finishResult, stagedPages, type ChunkOutcome } from '../../subscribers/import-write.ts';
import * as records from '../../subscribers/records/postgres.ts';
import type { SubscriberPrefs } from '../../subscribers/records/repo.ts';

export interface PgImportDeps {
  pool: pg.Pool;
  clock: Clock;
  logger: Logger;
  config: Pick<Config, 'DIGEST_TZ' | 'DIGEST_HOUR'>;
}

/** Rows per write transaction: its addresses' advisory locks stay far below the server's lock table. */
const ROWS_PER_CHUNK = 500;

// Every address of the chunk, in one order (two imports at once wait rather than deadlock), as the door's
// writes take it (subscribers/postgres/common.ts forAddress); then their rows, so a one-click unsubscribe
// or a bounce (which do not take the address lock) waits for the chunk instead of being overwritten.
const SQL_LOCK_ADDRESSES = `
  SELECT pg_advisory_xact_lock(k) FROM (SELECT DISTINCT hashtextextended(lower(e), 0) AS k FROM unnest($1::text[]) e ORDER BY 1) x`;
const SQL_LOCK_ROWS = `
  SELECT id FROM subscribers WHERE lower(email) = ANY (SELECT lower(e) FROM unnest($1::text[]) e) ORDER BY id FOR UPDATE`;

type Staged = StagedRow & { rowid: number };
type Page = (after: number, limit: number) => Staged[];
const topicsOf = (row: StagedRow) => JSON.parse(row.topics) as Array<[text: string, fts: string]>;

export async function importCsvPg(deps: PgImportDeps, path: string, name = path): Promise<ImportResult> {
  // Staging only: never the deployment's data.
  const staging: Db = new Database(':memory:');
  try {
    return await withStagedCsv(staging, deps.logger, path, { name }, (table) => {
      const page = stagedPages(staging, table);
      const read: Page = (after, limit) => page.all(after, limit);
      refuseLikeTopics(read, name);
      return writeStagedPg(deps, read);
    });
  } finally {
    staging.close();
  }
}

/** like: topics need the example index, not on PostgreSQL yet: every such line is named, nothing written. */
function refuseLikeTopics(read: Page, name: string): void {
  const bad = new LineReport();
  for (let rows = read(0, ROWS_PER_CHUNK); rows.length > 0; rows = read(rows[rows.length - 1]!.rowid, ROWS_PER_CHUNK)) {
    for (const row of rows) {
      const like = topicsOf(row).find(([text]) => parseTopic(text).like !== null);
      if (like) bad.add(row.line, `topics: "${like[0]}": like: topics are not available on this PostgreSQL deployment yet; describe the papers with words instead`);
    }
  }
  if (bad.count > 0) throw new ImportRefused(name, bad);
}

async function writeStagedPg(deps: PgImportDeps, read: Page): Promise<ImportResult> {
  const { pool, clock, config } = deps;
  const prefs = { timezone: config.DIGEST_TZ, deliveryHour: config.DIGEST_HOUR, frequency: 'daily' as const };
  const result: ImportResult = { imported: 0, created: 0, updated: 0, keptOptedOut: 0, notes: [], noted: 0 };
  const notes = new LineReport();
  const queryIds = new Map<string, number>();
  for (let rows = read(0, ROWS_PER_CHUNK); rows.length > 0; rows = read(rows[rows.length - 1]!.rowid, ROWS_PER_CHUNK)) {
    // Queries first, each committed alone: a chunk holding address locks then never waits on a query row
    // a door transaction (holding its own address lock) is inserting.
    for (const row of rows) {
      for (const [text, fts] of topicsOf(row)) if (!queryIds.has(fts)) queryIds.set(fts, await records.ensureQuery(pool, parseTopic(text)));
    }
    const chunk = await inTransaction(pool, async (c) => {
      const emails = rows.map((r) => r.email);
      await c.query(SQL_LOCK_ADDRESSES, [emails]);
      await c.query(SQL_LOCK_ROWS, [emails]);
      const out: ChunkOutcome = { created: 0, updated: 0, keptOptedOut: 0, notes: [] };
      const now = clock.now().toISOString();
      for (const row of rows) await writeRowPg(c, row, { now, prefs, queryIds }, out);
      return out;
    });
    addChunk(result, notes, chunk);
  }
  return finishResult(result, notes);
}

interface RowContext {
  now: string;
  prefs: SubscriberPrefs;
  queryIds: Map<string, number>;
}

/** One staged row inside its chunk's transaction (import-write.ts writeRow, on PostgreSQL). */
async function writeRowPg(c: pg.PoolClient, row: StagedRow, ctx: RowContext, chunk: ChunkOutcome): Promise<void> {
  const existing = await records.findSubscriberByEmail(c, row.email);
  const active = await activeOptOuts(c, row.email);
  const step = importRowStep(existing, active, row.confirmed === 1);
  if (step.keptOptedOut) {
    chunk.keptOptedOut++;
    chunk.notes.push({ line: row.line, message: keptOptedOutNote(row.email, existing, active) });
  }
  if (step.write === 'none') return;
  const topics = topicsOf(row).map(([text, fts]) => ({ text, queryId: ctx.queryIds.get(fts)! }));
  let id: number;
  if (existing) {
    id = existing.id;
    chunk.updated++;
  } else {
    id = await records.insertSubscriber(c, { email: row.email, salt: newSalt(), createdAt: ctx.now, ...ctx.prefs });
    chunk.created++;
  }
  await records.replaceTopics(c, id, topics); // keeps the ids (and mute state) of topics that stay
  if (step.confirm) await records.markConfirmed(c, id, ctx.now);
}
