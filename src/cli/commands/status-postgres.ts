// `digest status` with DATABASE_URL=postgres://…: the same lines and exit codes as on SQLite
// (cli-commands.ts cmdStatus), read from PostgreSQL through the operator's read port
// (report/postgres/reads.ts); with an email, that reader's lines from its rows there (cmdSubscriberStatus's
// port over the PostgreSQL reads: subscriber, why-no-email, notices, opt-out history). PostgreSQL out of reach, or refusing us, is one line naming the fault, exit 1.
import type { CliIo } from '../../cli-io.ts';
import type { Config } from '../../config.ts';
import type { Clock } from '../../clock.ts';
import type { StatusSource, SubscriberStatusSource } from '../../cli-commands.ts';
import type { OperatorReads } from '../../report/reads.ts';
import { recentWindows } from '../../report/figures.ts';
import { parseSources } from '../../ingest/sources.ts';
import type { Pg } from '../../db/postgres/pool.ts';

export async function statusOnPostgres(config: Config, io: CliIo, email: string | undefined, limit: number, given?: Clock): Promise<number> {
  const clock = given ?? (await import('../../clock.ts')).systemClock;
  const { createPool } = await import('../../db/postgres/pool.ts');
  const { pgStorageFault } = await import('../../db/postgres/faults.ts');
  const { postgresOperatorReads } = await import('../../report/postgres/reads.ts');
  const { cmdStatus } = await import('../../cli-commands.ts');
  const pool = createPool(config.DATABASE_URL!, { schema: config.DATABASE_SCHEMA, max: 2 });
  const reads = postgresOperatorReads(pool, clock);
  try {
    if (email !== undefined) return await (await import('../../cli-commands.ts')).cmdSubscriberStatus(await subscriberStatusPg(pool, clock), io, email);
    return await cmdStatus({ operator: postgresStatusSource(reads, config, clock) }, io, limit);
  } catch (e) {
    throw pgStorageFault(e)?.in('DATABASE_URL') ?? e;
  } finally {
    await pool.end();
  }
}

/** What `digest status` reads on PostgreSQL (the tests give it their clock; the command the system's). */
export function postgresStatusSource(reads: OperatorReads, config: Pick<Config, 'SOURCES'>, clock: Clock): StatusSource {
  return {
    figures: () => reads.figures(recentWindows(clock)),
    editions: (n) => reads.editions(n),
    lastNoticeFailure: async () => (await reads.lastNoticeFailures(1))[0],
    sources: () => reads.sourceFailures(parseSources(config.SOURCES).map((s) => s.name)),
  };
}

/** `digest status <email>`'s reads on PostgreSQL (each in its stage's postgres/ folder). */
export async function subscriberStatusPg(c: Pg, clock: Clock): Promise<SubscriberStatusSource> {
  const [{ findSubscriberByEmail }, { lastSlotReportPg }, { lastNoticePg }, { consentHistory }] = await Promise.all([
    import('../../subscribers/records/postgres.ts'),
    import('../../report/postgres/why-no-email.ts'),
    import('../../notices/postgres-store.ts'),
    import('../../consent/postgres.ts'),
  ]);
  return {
    findByEmail: (email) => findSubscriberByEmail(c, email),
    lastSlot: (id) => lastSlotReportPg(c, id, clock.now()),
    lastNotice: (id) => lastNoticePg(c, id),
    consentHistory: (email, limit) => consentHistory(c, email, limit),
  };
}
