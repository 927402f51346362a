// The settings that put a process's store on PostgreSQL (src/config.ts). A developer's shell may set
// them (DATABASE_URL to a PostgreSQL that is down, say): the SQLite half of a test must not inherit them,
// neither in this process (runCli, loadConfig read process.env) nor in the children it starts (they inherit
// process.env unless given their own). tests/helpers/worker-env.ts strips them from every test worker
// before a test file loads; the PostgreSQL halves name their schema themselves (DATABASE_URL and
// DATABASE_SCHEMA from engine-store, pg-children, pg-story…), and the address the PostgreSQL tests use
// reaches them from the global setup (inject 'pgTestUrl', tests/helpers/postgres.ts).
// No vitest import: tests/unit/store-free-env.test.ts checks this on a plain object.

export const STORE_SETTINGS = ['DATABASE_URL', 'DATABASE_SCHEMA'] as const;

/** Deletes the store settings from `env` (this process's environment by default); returns the names it removed. */
export function stripStoreSettings(env: NodeJS.ProcessEnv = process.env): string[] {
  const removed = STORE_SETTINGS.filter((name) => name in env);
  for (const name of removed) delete env[name];
  return removed;
}
