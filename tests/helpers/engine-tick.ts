// One tick in this process on the app's store, as `digest run` does: runPipeline on SQLite, and with
// DATABASE_URL=postgres://… runPipelinePg (src/pipeline-postgres.ts) over the test's pool, with PostgreSQL's
// confirmation emails (the door's sender). Both answer with a PipelineReport.
import type pg from 'pg';
import type { PostgresDoorHandle } from '../../src/main.ts';
import type { AppWithDb } from './test-app.ts';
import type { WebHarness } from './web-harness.ts';
import { createPool } from '../../src/db/postgres/pool.ts';
import { matchNew, plan, runPipeline, send, type PipelineReport } from '../../src/pipeline.ts';
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

/**
 * The due digests of a web harness sent in this process: on SQLite the pipeline's match -> plan -> send (as
 * tests/helpers/engine-send.ts), on PostgreSQL `digest run`'s tick over a pool on the harness's schema
 * (cheaper than engine-send.ts's `digest plan` and `digest worker` children). Returns the digests sent.
 */
export async function sendDueInProcess(h: WebHarness): Promise<number> {
  if (h.engine === 'sqlite') {
    matchNew(h.core.db);
    await plan(h.core, 'now');
    return (await send(h.core))?.sent ?? 0;
  }
  const pool = createPool(h.config.DATABASE_URL!, { schema: h.config.DATABASE_SCHEMA, max: 4 });
  try {
    return (await runTick(h.core, { pool, pg: h.pg })).send?.sent ?? 0;
  } finally {
    await pool.end();
  }
}
