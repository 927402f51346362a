// Defects found walking the README as an operator (a QA pass), each as the operator meets it:
// the real `digest` command in this process (runCli, the code bin/digest.js runs) on real SQLite files,
// and the same commands with DATABASE_URL on one PostgreSQL schema for the file (migrated once). `digest
// backup` copies the SQLite file (SQLite's own mechanism: on PostgreSQL the README sends to pg_dump).
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliIo } from '../../src/cli.ts';
import { openDatabase } from '../../src/db/open.ts';
import { migratePostgres } from '../../src/db/postgres/migrate.ts';
import { forEachEngine, postgresSql, sqliteSql, type EngineSql } from '../helpers/on-engines.ts';
import { createTestSchema, type TestSchema } from '../helpers/postgres.ts';

const V1_DB = fileURLToPath(new URL('../fixtures/db/v1-digest.sqlite', import.meta.url));

let dir: string;
const savedEnv = { ...process.env };

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'digest-qa-cli-'));
});
afterEach(() => {
  process.env = { ...savedEnv };
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function digest(env: Record<string, string>, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (l) => out.push(l), err: (l) => err.push(l), isTTY: false };
  process.env = { ...savedEnv, SOURCES: '', SMTP_URL: 'smtp://127.0.0.1:9', LOG_LEVEL: 'silent', ...env };
  const code = await runCli(['node', 'digest', ...args], io);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('digest backup', () => {
  it("copies the previous release's database (no bounce_events table yet) and leaves only the copy", async () => {
    const sub = mkdtempSync(join(dir, 'v1-'));
    const live = join(sub, 'old.sqlite');
    copyFileSync(V1_DB, live);
    const file = join(sub, 'before-upgrade.sqlite');
    const r = await digest({ DATABASE_PATH: live }, 'backup', file);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/integrity ok, schema 1; \d+ subscribers, \d+ digests, \d+ papers, 0 bounce reports$/);
    // No <file>.partial, .partial-wal or .partial-shm beside it (a nightly cron would pile them up).
    expect(readdirSync(sub).filter((f) => f.startsWith('before-upgrade')).sort()).toEqual(['before-upgrade.sqlite']);
  });

  it('refuses a DATABASE_PATH with no database, naming it, and creates nothing', async () => {
    const missing = join(dir, 'typo', 'digest.sqlite');
    const file = join(dir, 'never.sqlite');
    const r = await digest({ DATABASE_PATH: missing }, 'backup', file);
    expect(r.code).toBe(1);
    expect(r.err).toBe(`error: DATABASE_PATH: no database at ${missing}: nothing to back up`);
    expect(existsSync(join(dir, 'typo'))).toBe(false);
    expect(readdirSync(dir).filter((f) => f.startsWith('never'))).toEqual([]);
  });
});

forEachEngine('the operator meets the CLI', (engine) => {
  let schema: TestSchema | undefined;
  beforeAll(async () => {
    if (engine === 'postgres') await migratePostgres((schema = await createTestSchema()).pool);
  });
  afterAll(async () => {
    await schema?.drop();
  });
  /** The command's store: a SQLite file of its own, or with DATABASE_URL the file's one schema (its SQLite file unused). */
  const store = (name: string): Record<string, string> =>
    schema ? { DATABASE_PATH: join(dir, `pg-${name}`), DATABASE_URL: schema.url, DATABASE_SCHEMA: schema.name } : { DATABASE_PATH: join(dir, name) };
  const onStore = async (env: Record<string, string>, act: (sql: EngineSql) => Promise<void>) => {
    if (schema) return act(postgresSql(schema.pool));
    const db = openDatabase(env.DATABASE_PATH!);
    try {
      await act(sqliteSql(db));
    } finally {
      db.close();
    }
  };

  describe('digest status --limit', () => {
    it('refuses a limit that is not a whole number with a usage error, not an SQLite one', async () => {
      const r = await digest(store('status.sqlite'), 'status', '--limit', 'abc');
      expect(r.code).toBe(2);
      expect(r.err).toContain("option '--limit <n>' argument 'abc' is invalid. must be a whole number from 1 up");
      expect(r.err).not.toContain('datatype mismatch');
    });
  });

  describe('digest ingest --source --date', () => {
    it('fills in a batch file that names neither, as --help says', async () => {
      const file = join(dir, 'papers-only.json');
      writeFileSync(
        file,
        JSON.stringify({
          papers: [{ id: '2511.99999', title: 'Diffusion in a test', abstract: 'We study diffusion.', authors: ['A. Author'], url: 'https://arxiv.org/abs/2511.99999' }],
        }),
      );
      const env = store('ingest.sqlite');
      const bare = await digest(env, 'ingest', file);
      expect(bare.code).toBe(1);
      expect(bare.err).toBe('error: Invalid batch: source: required (and 1 more problem)');

      const r = await digest(env, 'ingest', file, '--source', 'manual', '--date', '2026-11-23');
      expect(r.err).toBe('');
      expect(r.code).toBe(0);
      expect(r.out).toBe('batch 1 (manual 2026-11-23): 1 paper, 1 new, 0 updated');
      // In the engine's own store (with DATABASE_URL, PostgreSQL's schema, not the SQLite file beside it).
      await onStore(env, async (sql) => expect(await sql.all("SELECT title FROM papers WHERE paper_key = '2511.99999'")).toEqual([{ title: 'Diffusion in a test' }]));

      // Counts of one read in the singular everywhere the CLI prints them.
      expect((await digest(env, 'subscribe', 'one@example.org', '--topic', 'diffusion', '--confirmed')).code).toBe(0);
      const dry = await digest(env, 'run', '--dry-run');
      expect(dry.err).toBe('');
      expect(dry.out).toBe('dry run: 1 slot due, would plan 1 digest (nothing written, nothing sent)');
      const csv = join(dir, 'one.csv');
      writeFileSync(csv, 'email,topics\ntwo@example.org,diffusion\n');
      expect((await digest(env, 'import', csv)).out).toBe(`imported 1 subscriber (1 new, 0 updated) from ${csv}`);
      await onStore(env, async (sql) => expect(await sql.all('SELECT email FROM subscribers ORDER BY id')).toEqual([{ email: 'one@example.org' }, { email: 'two@example.org' }]));
    });

    it('names a missing paper id as "required", not "Invalid input"', async () => {
      const file = join(dir, 'no-ids.json');
      writeFileSync(file, JSON.stringify({ source: 'page', date: '2026-11-23', papers: [{ title: 'T', abstract: 'A', authors: [], url: 'https://example.org/' }] }));
      const r = await digest(store('ingest2.sqlite'), 'ingest', file);
      expect(r.code).toBe(1);
      expect(r.err).toBe('error: Invalid batch: papers[0].id: required');
    });
  });

  describe('a bad number in the environment', () => {
    it('names the variable and the range in plain words', async () => {
      for (const [env, msg] of [
        [{ PORT: 'abc' }, 'PORT: must be a whole number from 0 to 65535'],
        [{ DIGEST_HOUR: '24' }, 'DIGEST_HOUR: must be a whole number from 0 to 23'],
        [{ SMTP_POOL_SIZE: '2.5' }, 'SMTP_POOL_SIZE: must be a whole number from 1 to 100'],
      ] as const) {
        const r = await digest({ ...store('env.sqlite'), ...env }, 'status');
        expect(r.code).toBe(1);
        expect(r.err).toBe(`error: Invalid configuration: ${msg}`);
      }
    });
  });

  describe('digest subscribers', () => {
    it('shows a pause the subscriber set, with its end date', async () => {
      const env = store('pause.sqlite');
      expect((await digest(env, 'subscribe', 'p@example.org', '--topic', 'diffusion', '--confirmed')).code).toBe(0);
      await onStore(env, (sql) => sql.run(`UPDATE subscribers SET paused_until = ? WHERE email = 'p@example.org'`, '2999-01-05T00:00:00.000Z'));
      const r = await digest(env, 'subscribers');
      expect(r.code).toBe(0);
      expect(r.out).toMatch(/^p@example\.org\tconfirmed \(paused until 2999-01-05\)\tdaily/m);
    });
  });
});
