// `digest status` with DATABASE_URL=postgres://…: the same lines and exit codes as on SQLite
// (cli-commands.ts cmdStatus), read from PostgreSQL through the operator's read port
// (report/postgres/reads.ts). PostgreSQL out of reach, or refusing us, is one line naming the fault, exit 1.
import type { CliIo } from '../../cli-io.ts';
import type { Config } from '../../config.ts';
import { AppError } from '../../errors.ts';

export async function statusOnPostgres(config: Config, io: CliIo, email: string | undefined, limit: number): Promise<number> {
  if (email !== undefined) {
    throw new AppError(
      'SQLITE_ONLY_COMMAND',
      '`digest status <email>` reads one subscriber\'s last slot from the SQLite file (DATABASE_PATH), but DATABASE_URL points at PostgreSQL, where this deployment\'s readers are; instead: `digest status` (the figures), or PostgreSQL\'s digests table for that reader',
    );
  }
  const { systemClock: clock } = await import('../../clock.ts');
  const { createPool } = await import('../../db/postgres/pool.ts');
  const { pgStorageFault } = await import('../../db/postgres/faults.ts');
  const { postgresOperatorReads } = await import('../../report/postgres/reads.ts');
  const { recentWindows } = await import('../../report/figures.ts');
  const { parseSources } = await import('../../ingest/sources.ts');
  const { cmdStatus } = await import('../../cli-commands.ts');
  const pool = createPool(config.DATABASE_URL!, { schema: config.DATABASE_SCHEMA, max: 2 });
  const reads = postgresOperatorReads(pool, clock);
  try {
    return await cmdStatus(
      {
        operator: {
          figures: () => reads.figures(recentWindows(clock)),
          editions: (n) => reads.editions(n),
          lastNoticeFailure: async () => (await reads.lastNoticeFailures(1))[0],
          sources: () => reads.sourceFailures(parseSources(config.SOURCES).map((s) => s.name)),
        },
      },
      io,
      limit,
    );
  } catch (e) {
    throw pgStorageFault(e)?.in('DATABASE_URL') ?? e;
  } finally {
    await pool.end();
  }
}
