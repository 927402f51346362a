// The importer's shared shapes: what it returns, what it needs from the app, and a row as staged.
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/open.ts';
import type { Logger } from '../log.ts';
import type { LineIssue } from './import-report.ts';

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

/** What the importer needs from the app. */
export interface ImportApp {
  db: Db;
  clock: Clock;
  logger: Logger;
  config: Pick<Config, 'DIGEST_TZ' | 'DIGEST_HOUR'> & Partial<Pick<Config, 'DB_BUSY_TIMEOUT_MS'>>;
}

/** A validated row, as staged: topics as [text, fts] pairs with duplicates of one query removed. */
export interface StagedRow {
  line: number;
  email: string;
  confirmed: number;
  topics: string;
}
