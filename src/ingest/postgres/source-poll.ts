// The SQLite pipeline's source poller with PostgreSQL's store and ingest: what `digest plan` and a
// `digest serve` tick on PostgreSQL ask the configured sources (SOURCES) before matching.
import type pg from 'pg';
import type { Clock } from '../../clock.ts';
import type { Logger } from '../../log.ts';
import type { HostSpacer } from '../fetch.ts';
import type { SourceSettings } from '../source-kinds/registry.ts';
import { createSourcePoller, parseSources, type PollReport } from '../sources.ts';
import { ingestBatchPg } from './ingest.ts';
import { postgresSourceStore } from './source-store.ts';

/** One poll of every configured source into PostgreSQL; undefined when SOURCES is empty. `spacer`: serve's, shared with like: lookups. */
export function postgresSourcePoll(
  pool: pg.Pool,
  config: SourceSettings,
  logger: Logger,
  clock: Clock,
  spacer?: HostSpacer,
): (() => Promise<PollReport[]>) | undefined {
  if (parseSources(config.SOURCES).length === 0) return undefined;
  const store = postgresSourceStore(pool);
  const poller = createSourcePoller({ config, clock, logger, spacer, store, ingest: (b) => ingestBatchPg(pool, b, clock) });
  return () => poller.poll();
}
