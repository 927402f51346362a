// The operator's CLI as they meet it, the real `digest` command in a child process (bin/digest.js, built):
// settings that check themselves (misspelled names, `digest config`), production that never falls back
// to the local catcher, sources that fail loudly and fast, and a command that behaves in a pipe and on a
// terminal. Children, not runCli: each story is the process's own start-up, stderr, exit code, .env in
// its working directory, pipe or terminal. On both engines: with DATABASE_URL on the file's one schema
// (migrated once), emptied (or refilled from the story's SQLite file) at the start of each story.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migratePostgres } from '../../src/db/postgres/migrate.ts';
import { openDatabase, type Db } from '../../src/db/open.ts';
import { refillSchema } from '../helpers/engine-run.ts';
import { forEachEngine } from '../helpers/on-engines.ts';
import { createTestSchema, type TestSchema } from '../helpers/postgres.ts';
import { REPO_ROOT } from '../helpers/delivery-setup.ts';
import { json, startFeedServer, type FeedServer } from '../helpers/feed-server.ts';
import { freePort } from '../helpers/ports.ts';
import { runNodeChild } from '../helpers/run-child.ts';
import { seedSubscribers, tempDatabase } from '../helpers/seed.ts';
import { DIGEST_BIN } from '../helpers/build.ts';

const BIN = DIGEST_BIN;
const SECRET = 'operating-cli-secret-0123456789abcdef0123';
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'digest-operating-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a CLI that knows its version', () => {
  it('--version prints the version of package.json', async () => {
    const version = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    for (const flag of ['--version', '-V']) {
      const r = await runNodeChild([BIN, flag], { LOG_LEVEL: 'silent' }, dir);
      expect(r.code).toBe(0);
      expect(r.stdout.trim()).toBe(version);
    }
    // The other tests start the built command; this keeps `npm run digest:dev` (the sources via tsx) proven.
    const dev = await runNodeChild([join(REPO_ROOT, 'bin', 'digest-dev.js'), '--version'], { LOG_LEVEL: 'silent' }, dir);
    expect(dev.code).toBe(0);
    expect(dev.stdout.trim()).toBe(version);
  });
});

forEachEngine('the operator meets the CLI', (engine) => {
  let schema: TestSchema | undefined;
  beforeAll(async () => {
    if (engine === 'postgres') await migratePostgres((schema = await createTestSchema()).pool);
  }, 60_000);
  afterAll(async () => {
    await schema?.drop();
  });

  /** A fresh folder with its own database path (and .env, when given): the child's working directory. */
  async function workdir(name: string, dotEnv?: string, seed?: (db: Db) => void): Promise<{ cwd: string; db: string }> {
    const cwd = mkdtempSync(join(dir, `${name}-`));
    if (dotEnv !== undefined) writeFileSync(join(cwd, '.env'), dotEnv);
    const path = join(cwd, 'digest.sqlite');
    // The story's rows: in its SQLite file; on PostgreSQL in the schema (refilled with them, else emptied),
    // the SQLite file beside it left empty so that only PostgreSQL's rows can answer.
    if (schema) {
      const t = tempDatabase();
      try {
        seed?.(t.db);
        await refillSchema(t.db, schema);
      } finally {
        t.cleanup();
      }
    } else if (seed) {
      const db = openDatabase(path);
      try {
        seed(db);
      } finally {
        db.close();
      }
    }
    return { cwd, db: path };
  }

  /** The child's store on this engine: DATABASE_URL and DATABASE_SCHEMA for the file's schema on PostgreSQL. */
  const onPg = (): Record<string, string> => (schema ? { DATABASE_URL: schema.url, DATABASE_SCHEMA: schema.name } : {});
  const digest = (args: string[], env: Record<string, string>, cwd: string) => runNodeChild([BIN, ...args], { LOG_LEVEL: 'silent', ...env, ...onPg() }, cwd);

  describe('settings that check themselves', () => {
    it('names a misspelled setting from .env or the environment, with the likely one, at start-up of every command', async () => {
      const w = await workdir('typo', 'SMPT_URL=smtp://digest:secret@relay.example.org:587\nMAIL_FROM=Digest <d@example.org>\n');
      const env = { DATABASE_PATH: w.db, DIGEST_CRONE: '0 7 * * *', SMTP_POOL: '4', UNRELATED_TOOL_SETTING: 'x' };
      for (const args of [['status'], ['subscribers']]) {
        const r = await digest(args, env, w.cwd);
        expect(r.code).toBe(0);
        const warnings = r.stderr.trim().split('\n');
        expect(warnings).toEqual([
          'warning: DIGEST_CRONE (in the environment) is not a setting; did you mean DIGEST_CRON? (ignored)',
          'warning: SMPT_URL (in .env) is not a setting; did you mean SMTP_URL? (ignored)',
          'warning: SMTP_POOL (in the environment) is not a setting; see .env.example for the settings (ignored)',
        ]);
      }
    });

    it('digest config shows every effective value, secrets masked, with where it came from', async () => {
      const w = await workdir('config', `SECRET_KEY=${SECRET}\nDIGEST_HOUR=6\nPORT=4000\n`);
      const r = await digest(['config'], { DATABASE_PATH: w.db, SMTP_URL: 'smtp://digest:hunter2pass@relay.example.org:587', PORT: '3100' }, w.cwd);
      expect(r.code).toBe(0);
      const line = (name: string) => r.stdout.split('\n').find((l) => l.startsWith(`${name} `))?.replace(/\s+/g, ' ');
      expect(line('SMTP_URL')).toBe('SMTP_URL smtp://digest:********@relay.example.org:587 environment');
      expect(line('SECRET_KEY')).toBe(`SECRET_KEY ******** (${SECRET.length} characters) .env`);
      expect(line('DIGEST_HOUR')).toBe('DIGEST_HOUR 6 .env');
      // The environment wins over .env.
      expect(line('PORT')).toBe('PORT 3100 environment');
      expect(line('DIGEST_CRON')).toBe('DIGEST_CRON 0 * * * * default');
      expect(line('PUBLIC_URL')).toBe('PUBLIC_URL http://localhost:3100 default');
      expect(r.stdout).not.toContain('hunter2pass');
      expect(r.stdout).not.toContain(SECRET);
    });

    it('digest config says in one line why the configuration would not load, and exits 1', async () => {
      const w = await workdir('config-bad');
      const r = await digest(['config'], { DATABASE_PATH: w.db, DIGEST_HOUR: '25' }, w.cwd);
      expect(r.code).toBe(1);
      expect(r.stdout).toMatch(/^DIGEST_HOUR\s+25\s+environment$/m);
      expect(r.stderr.trim()).toBe('error: Invalid configuration: DIGEST_HOUR: must be a whole number from 0 to 23');
    });
  });

  describe('production never falls back to the local catcher', () => {
    const refusal = /^error: Invalid configuration: SMTP_URL is not set and .+: mail would go to the built-in local catcher, not to readers; set SMTP_URL \(or LOCAL_MAIL=true for a demo\)$/;

    it('a misspelled SMPT_URL in .env with an https PUBLIC_URL stops start-up, naming SMTP_URL', async () => {
      const w = await workdir('prod-typo', 'SMPT_URL=smtp://relay.example.org:587\nPUBLIC_URL=https://digest.example.org\nSOURCES=hf\n');
      for (const args of [['serve'], ['run'], ['status']]) {
        const r = await digest(args, { DATABASE_PATH: w.db, PORT: String(await freePort()) }, w.cwd);
        expect(r.code).toBe(1);
        const lines = r.stderr.trim().split('\n');
        expect(lines[0]).toBe('warning: SMPT_URL (in .env) is not a setting; did you mean SMTP_URL? (ignored)');
        expect(lines.slice(1)).toEqual([expect.stringMatching(refusal)]);
        expect(lines[1]).toContain('PUBLIC_URL is https://digest.example.org');
      }
      expect(existsSync(join(w.cwd, 'inbox'))).toBe(false);
    });

    it('NODE_ENV=production without SMTP_URL stops start-up; LOCAL_MAIL=true allows it for a demo', async () => {
      const w = await workdir('prod-env');
      const refused = await digest(['status'], { DATABASE_PATH: w.db, NODE_ENV: 'production' }, w.cwd);
      expect(refused.code).toBe(1);
      expect(refused.stderr.trim()).toMatch(refusal);
      expect(refused.stderr).toContain('NODE_ENV=production');
      const demo = await digest(['status'], { DATABASE_PATH: w.db, NODE_ENV: 'production', LOCAL_MAIL: 'true' }, w.cwd);
      expect(demo.stderr).toBe('');
      expect(demo.code).toBe(0);
    });
  });

  describe('sources that fail are loud and fast', () => {
    let feeds: FeedServer;
    beforeAll(async () => {
      feeds = await startFeedServer();
      feeds.route('/api/daily_papers', json([]));
    });
    afterAll(() => feeds.close());

    it('every source down (refused, unknown host): exit 1 naming each, in about a second, not after half a minute of retries', async () => {
      const w = await workdir('sources-down');
      const refusedPort = await freePort();
      const r = await digest(
        ['run'],
        {
          DATABASE_PATH: w.db,
          SMTP_URL: 'smtp://127.0.0.1:9',
          SOURCES: 'hf,arxiv:cs.LG',
          HF_API_URL: `http://127.0.0.1:${refusedPort}/api/daily_papers`,
          ARXIV_RSS_URL: 'http://feeds.nonexistent.invalid/rss',
          LOG_LEVEL: 'info',
        },
        w.cwd,
      );
      expect(r.code).toBe(1);
      // With the default FETCH_RETRIES=3 it took 24-30 s of backoff waits; now each host is tried once.
      // Counted, not timed: no backoff wait was logged.
      const logged = r.stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { time: number; msg: string });
      const failures = logged.filter((l) => l.msg === 'source day failed; nothing ingested');
      expect(failures.length).toBe(5); // hf: today and the 3 look-back days; arXiv: the latest listing
      expect(logged.filter((l) => l.msg === 'fetch failed; retrying')).toEqual([]);
      const error = r.stderr.split('\n').find((l) => l.startsWith('error: '))!;
      expect(error).toMatch(/^error: every paper source failed, nothing fetched: hf \(GET http:\/\/127\.0\.0\.1:\d+\/api\/daily_papers\?date=\S+: connection failed: ECONNREFUSED/);
      expect(error).toMatch(/; arxiv:cs\.LG \(GET http:\/\/feeds\.nonexistent\.invalid\/rss\/cs\.LG: connection failed: (ENOTFOUND|EAI_AGAIN)/);
      expect(r.stdout).toMatch(/^source hf 4 days, \S+ to \S+: error \(GET .*ECONNREFUSED/m);
    });

    it('some sources down: exit 0, and stderr says which failed', async () => {
      const w = await workdir('sources-some');
      const r = await digest(
        ['run'],
        {
          DATABASE_PATH: w.db,
          SMTP_URL: 'smtp://127.0.0.1:9',
          SOURCES: 'hf,arxiv:cs.LG',
          HF_API_URL: `${feeds.url}/api/daily_papers`,
          ARXIV_RSS_URL: `http://127.0.0.1:${await freePort()}/rss`,
        },
        w.cwd,
      );
      expect(r.code).toBe(0);
      expect(r.stderr.trim()).toMatch(/^warning: 1 paper source failed: arxiv:cs\.LG \(GET http:\/\/127\.0\.0\.1:\d+\/rss\/cs\.LG: connection failed: ECONNREFUSED/);
      expect(r.stdout).toMatch(/^source hf \S+: empty/m);
    });

    it('run --no-fetch leaves the sources alone', async () => {
      const w = await workdir('no-fetch');
      const before = feeds.requests.length;
      const r = await digest(['run', '--no-fetch'], { DATABASE_PATH: w.db, SMTP_URL: 'smtp://127.0.0.1:9', SOURCES: 'hf', HF_API_URL: `${feeds.url}/api/daily_papers` }, w.cwd);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout.trim()).toBe('slots 0: planned 0, sent 0, skipped 0, failed 0');
      expect(feeds.requests.length).toBe(before);
    });
  });

  describe('a CLI that behaves in a pipe and on a terminal', () => {
    it('digest subscribers | head -1 ends quietly when head stops reading (EPIPE)', async () => {
      const w = await workdir('epipe', undefined, (db) =>
        void seedSubscribers(db, Array.from({ length: 3000 }, (_, i) => ({ email: `reader${i}@example.com`, topics: ['diffusion models', 'speculative decoding'] }))),
      );
      const cmd = `"${process.execPath}" "${BIN}" subscribers | head -1; echo "exit \${PIPESTATUS[0]}" >&2`;
      const child = spawn('bash', ['-c', cmd], {
        cwd: w.cwd,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATABASE_PATH: w.db, SMTP_URL: 'smtp://127.0.0.1:9', LOG_LEVEL: 'silent', SOURCES: '', ...onPg() },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      await new Promise((resolve) => child.on('close', resolve));
      expect(stdout.trim().split('\n')).toHaveLength(1);
      expect(stdout).toMatch(/^reader\d+@example\.com\tconfirmed/);
      expect(stderr.trim()).toBe('exit 0');
    });

    const hasScript = spawnSync('script', ['--version']).status === 0;
    it.skipIf(!hasScript)('a no-op digest run on a terminal prints a few lines; its log goes to digest.log, or to the terminal with --verbose', async () => {
      if (!hasScript) console.warn('skipped: `script` (util-linux) is not installed: no pseudo-terminal to run the command on');
      const w = await workdir('tty');
      const pgEnv = Object.entries(onPg()).map(([k, v]) => ` ${k}="${v}"`).join('');
      const env = `env -i PATH="${process.env.PATH}" HOME="${process.env.HOME}" DATABASE_PATH="${w.db}"${pgEnv} LOG_LEVEL=info SOURCES=hf HF_API_URL=http://127.0.0.1:${await freePort()}/api`;
      const onTerminal = (args: string) =>
        spawnSync('script', ['-qec', `${env} "${process.execPath}" "${BIN}" run ${args}`, '/dev/null'], { cwd: w.cwd, encoding: 'utf8', timeout: 30_000 });
      const quiet = onTerminal('');
      const lines = quiet.stdout.replace(/\r/g, '').trim().split('\n');
      expect(lines.length).toBeLessThanOrEqual(4);
      expect(lines).toContainEqual(expect.stringMatching(/^slots 0: planned 0, sent 0, skipped 0, failed 0$/));
      expect(lines.at(-1)).toMatch(/^\d+ warnings? logged to .*digest\.log \(--verbose shows the log here\)$/);
      const log = readFileSync(join(w.cwd, 'digest.log'), 'utf8').trim().split('\n');
      expect(log.length).toBeGreaterThan(2);
      for (const l of log) expect(() => JSON.parse(l)).not.toThrow();
      expect(log.some((l) => (JSON.parse(l) as { msg: string }).msg === 'planned')).toBe(true);

      const verbose = onTerminal('--verbose');
      expect(verbose.stdout).toMatch(/INFO.*planned/);
      expect(verbose.stdout).not.toMatch(/logged to .*digest\.log/);
    });
  });
});
