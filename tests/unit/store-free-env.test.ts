// A developer's DATABASE_URL (a PostgreSQL that is down, say) must not reach the SQLite half of a test:
// not its in-process runCli/loadConfig (they read process.env) nor the children it starts (they inherit
// process.env unless given their own). Every worker strips the store settings before a test file loads
// (tests/helpers/worker-env.ts); the PostgreSQL halves name their schema themselves.
import { describe, expect, inject, it } from 'vitest';
import config from '../../vitest.config.ts';
import { loadConfig } from '../../src/config.ts';
import { STORE_SETTINGS, stripStoreSettings } from '../helpers/store-env.ts';

describe("a test's environment names no PostgreSQL of the developer's", () => {
  it('every test worker strips DATABASE_URL and DATABASE_SCHEMA before a test file loads', () => {
    expect(config.test?.setupFiles).toContain('tests/helpers/worker-env.ts');
    expect(STORE_SETTINGS).toEqual(['DATABASE_URL', 'DATABASE_SCHEMA']);
    for (const name of STORE_SETTINGS) expect(process.env[name], name).toBeUndefined();
  });

  it('removes only the store settings, from the environment it is given', () => {
    const env: NodeJS.ProcessEnv = { PATH: '/usr/bin', DATABASE_PATH: 'db/digest.sqlite', DATABASE_URL: 'postgres://root@127.0.0.1:1/test', DATABASE_SCHEMA: 'pd_x', SMTP_URL: 'smtp://127.0.0.1:25' };
    expect(stripStoreSettings(env)).toEqual(['DATABASE_URL', 'DATABASE_SCHEMA']);
    expect(env).toEqual({ PATH: '/usr/bin', DATABASE_PATH: 'db/digest.sqlite', SMTP_URL: 'smtp://127.0.0.1:25' });
    expect(stripStoreSettings(env)).toEqual([]);
  });

  it("a config loaded from this process's environment stores in SQLite, while the PostgreSQL tests still know their server", () => {
    const c = loadConfig({ ...process.env, SOURCES: '' });
    expect(c.DATABASE_URL).toBeUndefined();
    expect(c.DATABASE_SCHEMA).toBeUndefined();
    expect(inject('pgTestUrl'), 'the global setup gives the workers the address (tests/helpers/postgres.ts)').toMatch(/^postgres(ql)?:\/\//);
  });
});
