// `digest run` with DATABASE_URL=postgres://…: one tick in this process (pipeline-postgres.ts), printed as
// on SQLite (cli-commands.ts reportRun), with the same exit codes. The mailer is the app's (SMTP_URL, or
// the local catcher as on SQLite); confirmation emails go through PostgreSQL's door. A lost PostgreSQL is
// one line naming DATABASE_URL, exit 1.
import { stopSendsOnSignal, type CliIo } from '../../cli-io.ts';
import type { App } from '../../main.ts';

export interface RunOptions {
  dryRun: boolean;
  due: boolean;
  fetch: boolean;
}

export async function runOnPostgres(app: App, io: CliIo, o: RunOptions): Promise<number> {
  const [{ openPostgresDoor }, { createPool }, { pgStorageFault }, { runPipelinePg }, { reportRun }] = await Promise.all([
    import('../../main.ts'),
    import('../../db/postgres/pool.ts'),
    import('../../db/postgres/faults.ts'),
    import('../../pipeline-postgres.ts'),
    import('../../cli-commands.ts'),
  ]);
  const { config, clock, logger, mailer, spacer, renderer } = app;
  // Refuses a schema `digest migrate` has not made, naming the fix, before anything runs.
  const handle = (await openPostgresDoor(app))!;
  const controller = new AbortController();
  const offSignals = stopSendsOnSignal(io, controller);
  // Claims, their batch's reads, records and the liveness check may run at once (as `digest worker`).
  const pool = createPool(config.DATABASE_URL!, { schema: config.DATABASE_SCHEMA, max: 4 });
  try {
    const r = await runPipelinePg(
      { pool, config, clock, logger, mailer, notices: handle.door.notices, spacer, renderer },
      { mode: o.due ? 'due' : 'now', dryRun: o.dryRun, fetch: o.fetch, signal: controller.signal },
    );
    if (!r.planRan) io.out('planning: another process was planning this tick; its digests are sent by whichever sender claims them');
    return reportRun(io, r, o.dryRun);
  } catch (e) {
    throw pgStorageFault(e)?.in('DATABASE_URL') ?? e;
  } finally {
    offSignals();
    await pool.end();
    await handle.close();
  }
}
