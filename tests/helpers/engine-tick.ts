// One tick in this process on the app's store, as `digest run` does: runPipeline on SQLite, and with
// DATABASE_URL=postgres://… runPipelinePg (src/pipeline-postgres.ts) over the test's pool, with PostgreSQL's
// confirmation emails (the door's sender). Both answer with a PipelineReport.
import type pg from 'pg';
import type { PostgresDoorHandle } from '../../src/main.ts';
import type { AppWithDb } from './test-app.ts';
import { runPipeline, type PipelineReport } from '../../src/pipeline.ts';
import { runPipelinePg } from '../../src/pipeline-postgres.ts';

export interface TickStore {
  /** PostgreSQL's pool and the door's handle, when the app's store is PostgreSQL. */
  pool?: pg.Pool;
  pg?: PostgresDoorHandle;
}

export async function runTick(app: AppWithDb, store: TickStore, mode: 'now' | 'due' = 'now'): Promise<PipelineReport> {
  if (!store.pool || !store.pg) return runPipeline(app, { mode });
  const { config, clock, logger, mailer, spacer } = app;
  return runPipelinePg({ pool: store.pool, config, clock, logger, mailer, notices: store.pg.door.notices, spacer }, { mode });
}
