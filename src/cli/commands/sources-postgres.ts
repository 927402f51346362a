// `digest sources` with DATABASE_URL=postgres://…: the same lines as on SQLite (cli-commands.ts
// cmdSources), from PostgreSQL's source_days through the operator's read port (report/postgres/reads.ts).
// PostgreSQL out of reach, or refusing us, is one line naming the fault, exit 1.
import type { CliIo } from '../../cli-io.ts';
import type { Config } from '../../config.ts';

export async function sourcesOnPostgres(config: Config, io: CliIo): Promise<number> {
  const { systemClock: clock } = await import('../../clock.ts');
  const { createPool } = await import('../../db/postgres/pool.ts');
  const { pgStorageFault } = await import('../../db/postgres/faults.ts');
  const { postgresOperatorReads } = await import('../../report/postgres/reads.ts');
  const { parseSources } = await import('../../ingest/sources.ts');
  const { cmdSources } = await import('../../cli-commands.ts');
  const pool = createPool(config.DATABASE_URL!, { schema: config.DATABASE_SCHEMA, max: 2 });
  const reads = postgresOperatorReads(pool, clock);
  try {
    return await cmdSources({ config, operator: { sources: () => reads.sources(parseSources(config.SOURCES)) } }, io);
  } catch (e) {
    throw pgStorageFault(e)?.in('DATABASE_URL') ?? e;
  } finally {
    await pool.end();
  }
}
