// The composition, as an operator runs it: two real `digest serve` processes (the built bin/digest.js),
// DATABASE_URL=postgres://… on one schema, each with its own SQLite file and port and no SECRET_KEY, a
// real SMTP server. A subscribe on one and the click on the other land in PostgreSQL, not in either
// SQLite file. Skipped, said once, when PostgreSQL is unreachable.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migratePostgres } from '../../src/db/postgres/migrate.ts';
import { ensureBuilt } from '../helpers/build.ts';
import { REPO_ROOT } from '../helpers/delivery-setup.ts';
import { freePort } from '../helpers/ports.ts';
import { postgresForTests, type TestSchema } from '../helpers/postgres.ts';
import { startSmtpCapture, type SmtpCapture } from '../helpers/smtp-capture.ts';
import { jsonPost, linkIn } from '../helpers/web-harness.ts';

const pg = await postgresForTests();

interface Serve {
  child: ChildProcess;
  base: string;
  db: string;
  output: () => string;
}

async function startServe(s: TestSchema, smtp: SmtpCapture, dir: string, name: string): Promise<Serve> {
  const port = await freePort();
  const db = join(dir, `${name}.sqlite`);
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    SOURCES: '',
    DATABASE_URL: s.url,
    DATABASE_SCHEMA: s.name,
    DATABASE_PATH: db,
    SMTP_URL: smtp.url,
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: 'https://digest.example.org',
    LOG_LEVEL: 'warn',
  };
  const child = spawn(process.execPath, [join(REPO_ROOT, 'bin/digest.js'), 'serve'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const started = Date.now();
  while (!out.includes('paper digest at')) {
    if (child.exitCode !== null || Date.now() - started > 30_000) throw new Error(`digest serve did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, base: `http://127.0.0.1:${port}`, db, output: () => out };
}

async function stop(s: Serve): Promise<number | null> {
  if (s.child.exitCode !== null) return s.child.exitCode;
  const exited = new Promise<number | null>((r) => s.child.once('exit', (code) => r(code)));
  s.child.kill('SIGTERM');
  return exited;
}

describe.skipIf(!pg.reachable)('`digest serve` with DATABASE_URL=postgres://…', () => {
  let s: TestSchema;
  let smtp: SmtpCapture;
  let dir: string;
  const serves: Serve[] = [];

  beforeAll(async () => {
    ensureBuilt();
    s = await pg.schema();
    await migratePostgres(s.pool);
    smtp = await startSmtpCapture();
    dir = mkdtempSync(join(tmpdir(), 'pg-door-serve-'));
    serves.push(await startServe(s, smtp, dir, 'a'), await startServe(s, smtp, dir, 'b'));
  }, 180_000);

  afterAll(async () => {
    for (const x of serves) await stop(x);
    await smtp?.close();
    await s?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('subscribes on one process and confirms on the other, in PostgreSQL; both stop cleanly', async () => {
    const [a, b] = serves as [Serve, Serve];
    const res = await fetch(`${a.base}/subscribe`, jsonPost({ email: 'ops@example.com', topics: ['speculative decoding'] }));
    expect(res.status).toBe(202);
    const mail = await smtp.waitFor('ops@example.com', 1, 10_000);
    const page = await fetch(`${b.base}${new URL(linkIn(mail.text, '/confirm/')).pathname}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<li>speculative decoding</li>');
    const row = await s.pool.query<{ status: string }>(`SELECT status FROM subscribers WHERE email = 'ops@example.com'`);
    expect(row.rows.map((r) => r.status)).toEqual(['confirmed']);
    const secret = await s.pool.query(`SELECT 1 FROM settings WHERE key = 'secret_key'`);
    expect(secret.rowCount).toBe(1);
    for (const x of [a, b]) {
      const local = new Database(x.db, { readonly: true });
      expect((local.prepare('SELECT count(*) AS n FROM subscribers').get() as { n: number }).n).toBe(0);
      local.close();
    }
    expect(await stop(a)).toBe(0);
    expect(await stop(b)).toBe(0);
    expect(a.output() + b.output()).not.toMatch(/"level":50/);
  });
});
