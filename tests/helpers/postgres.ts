// PostgreSQL for tests: where to find it, whether it answers, and a fresh schema per test file.
// The address is DATABASE_URL when it names PostgreSQL, else the local server of our machines. When it
// does not answer, the PostgreSQL tests are skipped (describe.skipIf(!pg.reachable)); the global setup
// (tests/helpers/global-setup.ts) probes once per run and prints why, once.
//
//   const pg = await postgresForTests();
//   describe.skipIf(!pg.reachable)('…', () => { let s: TestSchema; beforeAll(async () => (s = await pg.schema())); … });
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { createPool } from '../../src/db/postgres/pool.ts';
import { PG_TEST_URL as PROBED_URL, probePostgres } from './pg-probe.ts';

export { probePostgres } from './pg-probe.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Why the PostgreSQL tests are skipped this run; '' when PostgreSQL answered. */
    pgSkipReason: string;
    /** Where the PostgreSQL tests find their server (DATABASE_URL of vitest's own environment, else the local one). */
    pgTestUrl: string;
  }
}

/**
 * The PostgreSQL the tests use: the global setup's (test workers have no DATABASE_URL of their own:
 * tests/helpers/worker-env.ts), else, outside vitest (bench/), this process's DATABASE_URL or the local one.
 */
export const PG_TEST_URL: string = (() => {
  try {
    return inject('pgTestUrl') ?? PROBED_URL;
  } catch {
    return PROBED_URL;
  }
})();

export interface TestSchema {
  url: string;
  /** pd_<random>: give it to child processes as DATABASE_SCHEMA. */
  name: string;
  pool: pg.Pool;
  /** Closes the pool and drops the schema. */
  drop(): Promise<void>;
}

/** A fresh, empty schema, and a pool whose connections all use it. */
export async function createTestSchema(url = PG_TEST_URL): Promise<TestSchema> {
  const name = `pd_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${name}`);
  await admin.end();
  const pool = createPool(url, { schema: name, max: 4 });
  return {
    url,
    name,
    pool,
    async drop() {
      await pool.end().catch(() => {});
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      await c.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
      await c.end();
    },
  };
}

/** The schema's sessions now (this file's own pool, before a child process starts): for settledAfterKill. */
export async function sessionsOf(s: TestSchema): Promise<number[]> {
  const { rows } = await s.pool.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name = $1`, [`paper-digest:${s.name}`]);
  return rows.map((r) => r.pid);
}

/**
 * Waits until the sessions of a killed process (the schema's sessions that are not in `ours`) are gone.
 * After a kill -9 the server still reads what the process had sent (a record's UPDATE, say) and runs it, or
 * rolls back what it left open, before it sees the end of the connection: the ledger is what it stays only then.
 */
export async function settledAfterKill(s: TestSchema, ours: readonly number[], timeoutMs = 15_000): Promise<void> {
  const theirs = `SELECT count(*)::int AS n FROM pg_stat_activity
                  WHERE application_name = $1 AND pid <> pg_backend_pid() AND pid <> ALL ($2::int[])`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await s.pool.query<{ n: number }>(theirs, [`paper-digest:${s.name}`, ours]);
    if (rows[0]!.n === 0) return;
    if (Date.now() > deadline) throw new Error(`${rows[0]!.n} sessions of the killed process on ${s.name} still open ${timeoutMs} ms after the kill`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface PostgresForTests {
  reachable: boolean;
  reason: string;
  schema(): Promise<TestSchema>;
}

/** The run's verdict (from the global setup when it ran, else one probe of this file's own). */
export async function postgresForTests(): Promise<PostgresForTests> {
  let reason: string | undefined;
  try {
    reason = inject('pgSkipReason');
  } catch {
    reason = undefined;
  }
  if (reason === undefined) reason = await probePostgres(PG_TEST_URL);
  return { reachable: reason === '', reason, schema: () => createTestSchema() };
}
