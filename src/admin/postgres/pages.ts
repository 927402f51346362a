// The console's pages that read or fill the deployment's store, on PostgreSQL: overview, deliveries,
// confirmation emails and sources through the read ports (console.ts consoleReadPages), and "fetch now"
// polling the configured sources into PostgreSQL (where `digest plan` matches), as a serve tick does there;
// and the console's sessions (sessions.ts), which every instance shares.
import type pg from 'pg';
import type { Clock } from '../../clock.ts';
import type { HostSpacer } from '../../ingest/fetch.ts';
import { postgresSourcePoll } from '../../ingest/postgres/source-poll.ts';
import type { SourceSettings } from '../../ingest/source-kinds/registry.ts';
import { parseSources } from '../../ingest/sources.ts';
import type { Logger } from '../../log.ts';
import type { OperatorReads } from '../../report/reads.ts';
import { consoleReadPages, type ConsoleService } from '../console.ts';
import { postgresConsoleSessions } from './sessions.ts';
import { postgresConsoleViews } from './views.ts';

export type StorePages = Pick<ConsoleService, 'overview' | 'deliveries' | 'notices' | 'sources' | 'fetchSources' | 'sessions'>;

export interface PostgresConsoleDeps {
  /** Where "fetch now" ingests, and where the console's sessions live (every instance shares them). */
  pool: pg.Pool;
  /** The small pool the pages read from (they answer while the door's pool is busy). */
  readPool: pg.Pool;
  reads: OperatorReads;
  config: SourceSettings;
  clock: Clock;
  logger: Logger;
  spacer?: HostSpacer;
}

export function postgresConsolePages(d: PostgresConsoleDeps): StorePages {
  let specs: ReturnType<typeof parseSources> | undefined;
  const configured = () => (specs ??= parseSources(d.config.SOURCES));
  const poll = postgresSourcePoll(d.pool, d.config, d.logger, d.clock, d.spacer);
  return {
    ...consoleReadPages({ views: postgresConsoleViews(d.readPool), figures: d.reads }, d.clock, configured),
    fetchSources: async () => (poll ? poll() : []),
    // Sessions every instance shares: a login behind one instance holds at the others, a logout ends it everywhere.
    sessions: postgresConsoleSessions(d.pool, d.clock),
  };
}
