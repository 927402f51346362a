// The operator's read port: the figures `digest status`, GET /metrics and the console show, as both
// engines answer them. SQLite's adapter is below (synchronous better-sqlite3 inside, answered at once);
// PostgreSQL's is report/postgres/reads.ts. Each engine keeps its own SQL; what is made of the rows
// (sums, rates, the top failure reasons) is shared (figures.ts combineFigures, status.ts editionsWithReasons).
import type { Clock } from '../clock.ts';
import type { Db } from '../db/open.ts';
import { failedDay, recentDays, sourceErrors, type SourceDay } from '../ingest/source-days.ts';
import { listSources, type SourceListing, type SourceSpec } from '../ingest/sources.ts';
import { lastNoticeFailures, type Notice } from '../notices/repo.ts';
import { operatorFigures, type FigureWindows, type OperatorFigures } from './figures.ts';
import { editionStatus, type EditionStatus } from './status.ts';

/** A configured source's unresolved failed days, newest first (what `digest status` lists). */
export interface SourceFailures {
  source: string;
  errors: Array<ReturnType<typeof failedDay>>;
}

export interface OperatorReads {
  /** The figures a view asks for, over its windows (FigureWindows). */
  figures(w: FigureWindows): Promise<OperatorFigures>;
  /** The most recent editions by state, with their top failure reasons. */
  editions(limit: number): Promise<EditionStatus[]>;
  /** The last confirmation emails that failed or wait for a retry, newest first. */
  lastNoticeFailures(limit: number): Promise<Notice[]>;
  /** Each named source's unresolved failed days. */
  sourceFailures(sources: readonly string[]): Promise<SourceFailures[]>;
  /** Each configured source with its last day ingested and unresolved errors (`digest sources`, the console). */
  sources(specs: readonly SourceSpec[]): Promise<SourceListing[]>;
  /** One source's newest recorded days (the console's sources page). */
  recentDays(source: string, limit: number): Promise<SourceDay[]>;
}

export function sqliteOperatorReads(db: Db, clock: Clock): OperatorReads {
  return {
    figures: async (w) => operatorFigures(db, clock, w),
    editions: async (limit) => editionStatus(db, { limit }),
    lastNoticeFailures: async (limit) => lastNoticeFailures(db, limit),
    sourceFailures: async (sources) => sources.map((source) => ({ source, errors: sourceErrors(db, source).map(failedDay) })),
    sources: async (specs) => listSources(db, specs),
    recentDays: async (source, limit) => recentDays(db, source, limit),
  };
}
