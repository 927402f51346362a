// Vitest global setup: builds dist/ once when a source is newer (the tests start the built `digest` CLI),
// probes PostgreSQL once per run, tells every test file the verdict (inject 'pgSkipReason') and, when it
// does not answer, says once why its tests are skipped.
import type { TestProject } from 'vitest/node';
import { ensureBuilt } from './build.ts';
import { probePostgres } from './pg-probe.ts';

export default async function setup(project: TestProject): Promise<void> {
  ensureBuilt();
  const reason = await probePostgres();
  project.provide('pgSkipReason', reason);
  if (reason) console.log(`PostgreSQL tests skipped: ${reason}`);
}
