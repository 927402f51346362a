import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two files at once on a 2-core machine (vitest's default leaves one core idle): the suite's own
    // processes wait on I/O and child processes much of the time.
    maxWorkers: 2,
    // Builds dist/ once (tests start the built CLI) and probes PostgreSQL once: its tests run where it
    // answers, else are skipped with one line saying why.
    globalSetup: ['tests/helpers/global-setup.ts'],
    // Each worker drops DATABASE_URL and DATABASE_SCHEMA before a test file loads: a SQLite half never
    // inherits the developer's PostgreSQL (the PostgreSQL halves name their schema: tests/helpers/store-env.ts).
    setupFiles: ['tests/helpers/worker-env.ts'],
    env: { LOG_LEVEL: 'silent' },
  },
});
