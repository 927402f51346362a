// The CLI when the deployment's store is PostgreSQL (DATABASE_URL=postgres://…): `digest unsubscribe`
// acts there (the reader stops getting mail; the opt-out history has the row), and a command that still
// acted on the SQLite file alone used to stop here; every command now acts on PostgreSQL there (run, status
// <email>: pg-run-status.test.ts; sources, preview, backup, restore: pg-operating-cli.test.ts).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliIo } from '../../src/cli.ts';
import { migratePostgres } from '../../src/db/postgres/migrate.ts';
import { insertSubscriber, markConfirmed } from '../../src/subscribers/records/postgres.ts';
import { postgresForTests, type TestSchema } from '../helpers/postgres.ts';
import { tempDatabase, type TempDb } from '../helpers/seed.ts';

const pg = await postgresForTests();

describe.skipIf(!pg.reachable)('the CLI on PostgreSQL', () => {
  let s: TestSchema;
  let sqlite: TempDb;
  const saved = { ...process.env };

  async function digest(args: string[]) {
    Object.assign(process.env, { SOURCES: '', LOG_LEVEL: 'silent', DATABASE_PATH: sqlite.path, DATABASE_URL: s.url, DATABASE_SCHEMA: s.name });
    const out: string[] = [];
    const err: string[] = [];
    const io: CliIo = { out: (l) => out.push(l), err: (l) => err.push(l), isTTY: false };
    const code = await runCli(['node', 'digest', ...args], io);
    return { code, out, err };
  }

  beforeAll(async () => {
    s = await pg.schema();
    await migratePostgres(s.pool);
    sqlite = tempDatabase();
    const c = s.pool;
    const id = await insertSubscriber(c, { email: 'reader@example.org', salt: 'salt-1', createdAt: '2026-11-01T00:00:00Z', timezone: 'UTC', deliveryHour: 8, frequency: 'daily' });
    await markConfirmed(c, id, '2026-11-01T00:05:00Z');
  });
  afterEach(() => {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  });
  afterAll(async () => {
    await s?.drop();
    sqlite?.cleanup();
  });

  it('digest unsubscribe <email> unsubscribes the reader in PostgreSQL, with its opt-out history; an unknown address is named', async () => {
    const r = await digest(['unsubscribe', 'Reader@Example.org']);
    expect(r.err).toEqual([]);
    expect(r).toMatchObject({ code: 0, out: ['Reader@Example.org: unsubscribed'] });
    const row = (await s.pool.query(`SELECT status FROM subscribers WHERE email = 'reader@example.org'`)).rows[0];
    expect(row.status).toBe('unsubscribed');
    const events = (await s.pool.query(`SELECT kind, detail FROM consent_events WHERE email = 'reader@example.org' ORDER BY id`)).rows;
    expect(events).toEqual([{ kind: 'unsubscribe', detail: 'by the operator (digest unsubscribe)' }]);
    // The SQLite file holds no reader and was not written to.
    expect(sqlite.db.prepare('SELECT count(*) AS n FROM subscribers').get()).toEqual({ n: 0 });

    const unknown = await digest(['unsubscribe', 'nobody@example.org']);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toEqual(['error: no subscriber with address nobody@example.org']);
  });
});
