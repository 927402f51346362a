import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Probes PostgreSQL once: its tests run where it answers, else are skipped with one line saying why.
    globalSetup: ['tests/helpers/pg-global-setup.ts'],
    env: { LOG_LEVEL: 'silent' },
  },
});
