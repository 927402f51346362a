// Vitest global setup: probes PostgreSQL once per run, tells every test file the verdict (inject
// 'pgSkipReason') and, when it does not answer, says once why its tests are skipped.
import type { TestProject } from 'vitest/node';
import { probePostgres } from './pg-probe.ts';

export default async function setup(project: TestProject): Promise<void> {
  const reason = await probePostgres();
  project.provide('pgSkipReason', reason);
  if (reason) console.log(`PostgreSQL tests skipped: ${reason}`);
}
