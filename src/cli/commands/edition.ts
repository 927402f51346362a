// `digest plan` (PostgreSQL): one planning tick - fetch the sources, match the new papers, plan the slots that have come -
// leaving sending to `digest worker` processes; and `digest ingest` into PostgreSQL.
import type { Command } from 'commander';
import type { CliIo } from '../../cli-io.ts';
import type { Config } from '../../config.ts';
import { AppError } from '../../errors.ts';
import type { Logger } from '../../log.ts';
import type { CliContext } from '../context.ts';

const ON_SQLITE = 'on SQLite (DATABASE_PATH) `digest run` fetches, matches, plans and sends in one tick';

export function registerPlan(program: Command, { io, setup }: CliContext): void {
  program
    .command('plan')
    .description(
      'PostgreSQL only (DATABASE_URL=postgres://…): match the papers ingested since the last tick and plan every slot that has come ' +
        '(--now: every subscriber\'s slot is now, as `digest run` without --due); sends nothing: `digest worker` processes send. ' +
        'First asks the configured sources (SOURCES) for their missing days, into PostgreSQL, unless --no-fetch. ' +
        'Any number may run at once: one plans, the others say so; ' + ON_SQLITE,
    )
    .option('--now', 'treat now as every subscriber\'s delivery time (default: only the slots due in their own time zone)')
    .option('--no-fetch', 'do not ask the paper sources (SOURCES); match and plan what is already ingested')
    .action(async (o: { now?: boolean; fetch: boolean }) => {
      const { config, logger } = await setup();
      const url = needPostgres(config, 'plan');
      const { createPool } = await import('../../db/postgres/pool.ts');
      const { planEditionPg, describeEdition } = await import('../../plan/postgres/edition.ts');
      const { systemClock: clock } = await import('../../clock.ts');
      const pool = createPool(url, { schema: config.DATABASE_SCHEMA, max: 2 });
      // arXiv's spacing is booked in PostgreSQL's shared_limits, so planners on several machines ask one at a time.
      const { createPostgresLimits } = await import('../../db/postgres/shared-limits.ts');
      const { sourceSpacer } = await import('../../ingest/sources.ts');
      const limits = createPostgresLimits({ url, schema: config.DATABASE_SCHEMA });
      try {
        const { postgresSourcePoll } = await import('../../ingest/postgres/source-poll.ts');
        const poll = o.fetch ? postgresSourcePoll(pool, config, logger, clock, sourceSpacer(config, limits)) : undefined;
        io.out(describeEdition(await planEditionPg(pool, { clock, mode: o.now ? 'now' : 'due', logger, poll, retentionDays: config.DIGEST_RETENTION_DAYS })));
        // As every tick does: count the overdue readers, stored for /metrics, warned about in the log.
        const { postgresOperatorReads } = await import('../../report/postgres/reads.ts');
        const { warnIfOverdue } = await import('../../pipeline.ts');
        warnIfOverdue(logger, (await postgresOperatorReads(pool, clock).figures({ overdue: 'count' })).overdue);
      } finally {
        await limits.close();
        await pool.end();
      }
    });
}

function needPostgres(config: Config, command: string): string {
  if (!config.DATABASE_URL) {
    throw new AppError('PLAN_NEEDS_POSTGRES', `DATABASE_URL is not a postgres:// URL: \`digest ${command}\` is for PostgreSQL; ${ON_SQLITE}`);
  }
  return config.DATABASE_URL;
}

export interface IngestOptions {
  format: 'auto' | 'batch' | 'hf' | 'arxiv';
  source?: string;
  date?: string;
}

/** `digest ingest` when DATABASE_URL is postgres://: the same input, checks and output line, into PostgreSQL. */
export async function ingestIntoPostgres(config: Config, logger: Logger, io: CliIo, input: string, o: IngestOptions): Promise<number> {
  const url = needPostgres(config, 'ingest');
  const { systemClock } = await import('../../clock.ts');
  const { loadInput } = await import('../../ingest/load.ts');
  const { ingestCounts } = await import('../../ingest/ingest.ts');
  const { ingestBatchPg } = await import('../../ingest/postgres/ingest.ts');
  const { createPool } = await import('../../db/postgres/pool.ts');
  const batch = await loadInput(input, o.format, { config, logger, clock: systemClock, source: o.source, date: o.date });
  const pool = createPool(url, { schema: config.DATABASE_SCHEMA, max: 1 });
  try {
    const r = await ingestBatchPg(pool, batch, systemClock);
    io.out(
      r.duplicate
        ? `batch ${r.batchId} (${batch.source} ${batch.date}) already ingested: nothing changed`
        : `batch ${r.batchId} (${batch.source} ${batch.date}): ${ingestCounts(r)}`,
    );
    return 0;
  } finally {
    await pool.end();
  }
}
