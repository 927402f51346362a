// PostgreSQL migrations: a fresh schema gets every table of the SQLite schema (but the FTS5 ones) and its
// own (PG_ONLY_TABLES), and two sessions migrating at once apply each file once (the advisory lock). An
// operator's fresh DATABASE_SCHEMA (or `digest copy --schema`) need not exist: migrating makes it, and a
// command before that says to migrate.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/db/open.ts';
import { PG_ONLY_TABLES } from '../../src/db/postgres/copy.ts';
import { listPgMigrations, migratePostgres, pgSchemaVersion } from '../../src/db/postgres/migrate.ts';
import { createPool } from '../../src/db/postgres/pool.ts';
import { startDigest } from '../helpers/digest-cli.ts';
import { postgresForTests, type TestSchema } from '../helpers/postgres.ts';

const pg = await postgresForTests();

/** Tables of a freshly migrated SQLite database, without FTS5's own and SQLite's. */
function sqliteTables(): { tables: string[]; version: number } {
  const db = new Database(':memory:');
  migrate(db);
  const tables = (db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table'").all() as { name: string; sql: string }[])
    .filter((t) => !t.name.startsWith('sqlite_') && !t.name.startsWith('papers_fts') && !/VIRTUAL TABLE/i.test(t.sql))
    .map((t) => t.name)
    .sort();
  const version = db.pragma('user_version', { simple: true }) as number;
  db.close();
  return { tables, version };
}

describe.skipIf(!pg.reachable)('PostgreSQL migrations', () => {
  let s: TestSchema;
  beforeAll(async () => {
    s = await pg.schema();
  });
  afterAll(async () => s?.drop());

  it('two sessions migrating at once: each file applied once, one schema at the latest version', async () => {
    const other = createPool(s.url, { schema: s.name });
    try {
      const [a, b] = await Promise.all([migratePostgres(s.pool), migratePostgres(other)]);
      const names = listPgMigrations().map((m) => m.name);
      expect([...a, ...b].sort()).toEqual(names.sort());
      expect(a.length === 0 || b.length === 0).toBe(true);
      expect(await migratePostgres(other)).toEqual([]);
      const versions = await s.pool.query('SELECT version FROM schema_migrations ORDER BY version');
      expect(versions.rows.map((r) => r.version)).toEqual(listPgMigrations().map((m) => m.version));
    } finally {
      await other.end();
    }
  });

  it('has every table of the SQLite schema at the same version (FTS5 tables excepted)', async () => {
    await migratePostgres(s.pool);
    const { tables, version } = sqliteTables();
    const r = await s.pool.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_name <> 'schema_migrations'`,
      [s.name],
    );
    const pgTables = r.rows.map((x) => x.table_name).sort();
    expect(pgTables.filter((t) => !(PG_ONLY_TABLES as readonly string[]).includes(t))).toEqual(tables);
    expect(pgTables).toEqual(expect.arrayContaining([...PG_ONLY_TABLES]));
    expect(await pgSchemaVersion(s.pool)).toBe(version);
  });

  it('keeps the opt-out history: an unsubscribe writes a consent event (PL/pgSQL trigger)', async () => {
    await migratePostgres(s.pool);
    await s.pool.query(
      `INSERT INTO subscribers (email, status, token_salt, timezone, created_at) VALUES ('A@x.org', 'confirmed', 's', 'UTC', '2026-01-01T00:00:00.000Z')`,
    );
    await s.pool.query(`UPDATE subscribers SET status = 'unsubscribed', unsubscribed_at = '2026-02-01T00:00:00.000Z' WHERE lower(email) = 'a@x.org'`);
    const ev = await s.pool.query('SELECT email, kind, status, at FROM consent_events');
    expect(ev.rows).toEqual([{ email: 'A@x.org', kind: 'unsubscribe', status: 'unsubscribed', at: '2026-02-01T00:00:00.000Z' }]);
    await expect(
      s.pool.query(`INSERT INTO subscribers (email, token_salt, timezone, created_at) VALUES ('a@X.org', 's', 'UTC', 'now')`),
    ).rejects.toThrow(/subscribers_email/);
  });

  it('makes a schema DATABASE_SCHEMA names that does not exist yet; before that, a command and `digest doctor` say to migrate', async () => {
    const fresh = `${s.name}_new`;
    const copied = `${s.name}_copy`;
    const dir = mkdtempSync(join(tmpdir(), 'digest-copy-'));
    const cli = async (args: string[], schema = fresh) => {
      const run = startDigest(args, { DATABASE_URL: s.url, DATABASE_SCHEMA: schema });
      return { code: await run.code, out: run.out(), err: run.err() };
    };
    try {
      const before = await cli(['status']);
      expect(before.code).toBe(1);
      expect(before.err).toMatch(/^error: DATABASE_URL: the PostgreSQL schema is not ready \(.*\); run `digest migrate` first\n$/);
      // `digest doctor` checks PostgreSQL, the deployment's store, not the SQLite file beside it.
      const databaseLine = async () => (await cli(['doctor', '--timeout', '1000'])).out.split('\n').find((l) => l.includes(' database: '));
      expect(await databaseLine()).toMatch(new RegExp(`^FAIL  database: PostgreSQL .* schema ${fresh}: .* — fix: run \`digest migrate\``));
      const migrated = await cli(['migrate']);
      expect(migrated).toMatchObject({ code: 0, out: expect.stringMatching(/^applied 014_init\.sql, .* \(PostgreSQL, version \d+\)\n$/) });
      expect(await cli(['status'])).toMatchObject({ code: 0, out: expect.stringContaining('no editions yet') });
      expect(await databaseLine()).toMatch(new RegExp(`^ok    database: PostgreSQL .* schema ${fresh} takes writes \\(schema \\d+\\)$`));
      // `digest copy --to … --schema <new>`: a SQLite deployment (empty here) into a schema made for it.
      const lite = { DATABASE_PATH: join(dir, 'digest.sqlite') };
      expect(await startDigest(['migrate'], lite).code).toBe(0);
      const copy = startDigest(['copy', '--to', s.url, '--schema', copied], lite);
      expect({ code: await copy.code, err: copy.err() }).toEqual({ code: 0, err: '' });
      expect(copy.out()).toContain('copied: every table has the same rows on both sides');
    } finally {
      await s.pool.query(`DROP SCHEMA IF EXISTS ${fresh} CASCADE; DROP SCHEMA IF EXISTS ${copied} CASCADE`);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
