// Vitest global setup: builds dist/ once when a source is newer (the tests start the built `digest` CLI),
// probes PostgreSQL once per run, tells every test file the verdict (inject 'pgSkipReason') and says in
// one line what runs where (tests/engines.ts), or why the PostgreSQL tests are skipped.
import type { TestProject } from 'vitest/node';
import { engineCounts } from '../engines.ts';
import { ensureBuilt } from './build.ts';
import { PG_TEST_URL, probePostgres } from './pg-probe.ts';

export default async function setup(project: TestProject): Promise<void> {
  ensureBuilt();
  const reason = await probePostgres();
  // CI (.ci/run) runs both engines: there a PostgreSQL that does not answer fails the run, rather than
  // passing with the PostgreSQL half skipped.
  if (reason && process.env.TEST_REQUIRE_POSTGRES === '1') throw new Error(`TEST_REQUIRE_POSTGRES=1: PostgreSQL must answer, but ${reason}`);
  project.provide('pgSkipReason', reason);
  // The workers drop DATABASE_URL from their environment (tests/helpers/worker-env.ts): they learn the address here.
  project.provide('pgTestUrl', PG_TEST_URL);
  const n = engineCounts();
  const where = `${n.both} files on both engines, ${n.postgres} PostgreSQL only, ${n.sqlite} SQLite only, ${n.none} without a store`;
  if (reason) console.log(`PostgreSQL tests skipped: ${reason} (tests/engines.ts: ${where}; here the ${n.both} run on SQLite alone)`);
  else console.log(`PostgreSQL: ${PG_TEST_URL.replace(/:[^:@/]*@/, ':***@')} answered (tests/engines.ts: ${where})`);
}
