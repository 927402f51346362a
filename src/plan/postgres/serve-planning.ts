// What `digest serve` plans when DATABASE_URL is postgres:// (the seam between the door on PostgreSQL and
// the PostgreSQL planner): each scheduler tick plans the slots that have come, and a confirmation plans
// that reader's first digest at once (their slot now, as the SQLite welcome digest); `digest worker`
// processes send them. SQLite's pipeline is not run beside it: after `digest copy` SQLite's readers are
// PostgreSQL's too, and two planners on two stores would mail them twice.
import type { Clock } from '../../clock.ts';
import { createPool } from '../../db/postgres/pool.ts';
import type { Config } from '../../config.ts';
import type { HostSpacer } from '../../ingest/fetch.ts';
import { postgresSourcePoll } from '../../ingest/postgres/source-poll.ts';
import type { Logger } from '../../log.ts';
import { planEditionPg } from './edition.ts';

export interface ServePlanning {
  /** One tick: fetch the sources, match the new papers, plan the slots due in each reader's own time zone. */
  tick(): Promise<void>;
  /** The first digest right after confirming: this reader's slot now. */
  welcome(subscriberId: number): Promise<void>;
  close(): Promise<void>;
}

export interface ServePlanningOptions {
  clock: Clock;
  logger: Logger;
  spacer?: HostSpacer;
  /** After each tick's planning (the composition root counts the overdue readers there, as SQLite's tick does). */
  afterTick?: () => Promise<unknown>;
}

export function servePlanningOnPostgres(config: Config, opts: ServePlanningOptions): ServePlanning {
  const pool = createPool(config.DATABASE_URL!, { schema: config.DATABASE_SCHEMA, max: 2 });
  const { clock, logger } = opts;
  // Each tick asks the configured sources first, into PostgreSQL, as `digest plan` does.
  const poll = postgresSourcePoll(pool, config, logger, clock, opts.spacer);
  return {
    async tick() {
      await planEditionPg(pool, { clock, mode: 'due', logger, poll, retentionDays: config.DIGEST_RETENTION_DAYS });
      await opts.afterTick?.();
    },
    async welcome(subscriberId) {
      await planEditionPg(pool, { clock, mode: 'now', logger, onlySubscriber: subscriberId });
    },
    close: () => pool.end(),
  };
}
