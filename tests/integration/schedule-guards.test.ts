// What must never stop or spoil the mail, each through the public surface: a batch dated years ahead
// (CLI and HTTP), demo papers in a database that sends real mail, a blackout nobody notices, a manual
// run after the morning email, and kill -9 in the middle of planning. On both engines: with DATABASE_URL
// the same commands, server and runs on the file's one PostgreSQL schema (migrated once), each story
// refilling it from its own SQLite file; `digest serve` and the killed planner are real processes.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/db/open.ts';
import { migratePostgres } from '../../src/db/postgres/migrate.ts';
import { planDigestsPg } from '../../src/plan/postgres/plan.ts';
import { PLAN_LOCK_CLASS } from '../../src/plan/postgres/plan-sql.ts';
import { planDigests } from '../../src/plan/planner.ts';
import { matchPending } from '../../src/match/matcher.ts';
import { createTestApp } from '../helpers/test-app.ts';
import { digestInProcess } from '../helpers/cli-in-process.ts';
import { deliveryEnvVars } from '../helpers/delivery-setup.ts';
import { refillSchema, startEngineRunOn, type EngineRun } from '../helpers/engine-run.ts';
import { serveApp } from '../helpers/engine-store.ts';
import { forEachEngine, postgresSql, sqliteSql, type EngineSql } from '../helpers/on-engines.ts';
import { createTestSchema, type TestSchema } from '../helpers/postgres.ts';
import { freePort } from '../helpers/ports.ts';
import { seedBatch, seedSubscribers, tempDatabase, tempDatabaseDir, type TempDb } from '../helpers/seed.ts';
import { perAddress, reject, SmtpSink } from '../helpers/smtp-sink.ts';
import { DIGEST_BIN } from '../helpers/build.ts';

const BIN = DIGEST_BIN;
const PLAN_CHILD = fileURLToPath(new URL('../helpers/plan-child.ts', import.meta.url));

const batchFile = (dir: string, date: string) => {
  const file = join(dir, `batch-${date}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      source: 'manual',
      date,
      papers: [{ id: '2511.09999', title: 'Decoding from a wrong clock', abstract: 'x', authors: ['A'], url: 'https://arxiv.org/abs/2511.09999' }],
    }),
  );
  return file;
};

/** The built command in a child process (the stories about `digest serve` and a planner killed are about processes). */
function spawnDigest(args: string[], env: Record<string, string>, cwd?: string): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, [BIN, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'silent', SOURCES: '', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

forEachEngine('schedule guards', (engine) => {
  let schema: TestSchema | undefined;
  const cleanups: Array<() => unknown> = [];
  beforeAll(async () => {
    if (engine === 'postgres') await migratePostgres((schema = await createTestSchema()).pool);
  }, 60_000);
  afterAll(async () => {
    await schema?.drop();
  });
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  /** On PostgreSQL: DATABASE_URL and DATABASE_SCHEMA for the file's schema. */
  const onPg = (): Record<string, string> => (schema ? { DATABASE_URL: schema.url, DATABASE_SCHEMA: schema.name } : {});
  /** The story's own SQLite file; on PostgreSQL the schema refilled with its rows (the story starts from them). */
  async function storyDb(prefix: string): Promise<{ t: TempDb; sql: EngineSql }> {
    const t = tempDatabase(prefix);
    cleanups.push(() => t.cleanup());
    if (schema) await refillSchema(t.db, schema);
    return { t, sql: schema ? postgresSql(schema.pool) : sqliteSql(t.db) };
  }
  const count = async (sql: EngineSql, query: string) => Number((await sql.get<{ n: number | string }>(query))!.n);
  async function story(env: Record<string, string>, seed: (db: TempDb['db']) => void, now: string): Promise<EngineRun> {
    const e = await startEngineRunOn(schema, env, seed, now);
    cleanups.push(() => e.close());
    return e;
  }

  it('a batch dated more than one day ahead is refused whole by `digest ingest` and by POST /api/batches, naming the date', async () => {
    const { t, sql } = await storyDb('digest-future-');
    const env = { DATABASE_PATH: t.path, LOG_LEVEL: 'silent', SECRET_KEY: 'future-test-secret-0123456789abcdef', SOURCES: '', ...onPg() };
    const r = await digestInProcess(['ingest', batchFile(t.dir, '2030-01-01')], env);
    expect(r.code).not.toBe(0);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/2030-01-01 is more than one day after today/);
    expect(await count(sql, 'SELECT count(*) AS n FROM papers')).toBe(0);
    // Tomorrow (UTC) is fine: a listing can be dated ahead of a time zone's day.
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    expect((await digestInProcess(['ingest', batchFile(t.dir, tomorrow)], env)).code).toBe(0);
    expect(await count(sql, "SELECT count(*) AS n FROM papers WHERE paper_key = '2511.09999'")).toBe(1);

    const config = loadConfig({ ...env, API_TOKEN: 'api-token-0123456789abcdef', PUBLIC_URL: 'http://127.0.0.1' });
    const app = await createTestApp(config, { logger: pino({ level: 'silent' }) });
    cleanups.push(() => app.close());
    const served = await serveApp(app, 0);
    cleanups.push(() => served.close());
    const res = await served.web.inject({
      method: 'POST',
      url: '/api/batches',
      headers: { authorization: 'Bearer api-token-0123456789abcdef', 'content-type': 'application/json' },
      payload: JSON.stringify({
        source: 'api',
        date: '2031-05-05',
        papers: [{ id: '2511.08888', title: 'Ahead', abstract: 'x', authors: ['A'], url: 'https://arxiv.org/abs/2511.08888' }],
      }),
    });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('2031-05-05 is more than one day after today');
    expect(await count(sql, "SELECT count(*) AS n FROM papers WHERE paper_key = '2511.08888'")).toBe(0);
  });

  async function serveOnce(env: Record<string, string>, cwd: string): Promise<string> {
    const port = await freePort();
    const child = spawnDigest(['serve'], { PORT: String(port), HOST: '127.0.0.1', MAIL_CATCHER_PORT: '0', ...env, ...onPg() }, cwd);
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    await new Promise<void>((resolve, rejectStart) => {
      const timer = setTimeout(() => rejectStart(new Error(`serve did not start: ${out}`)), 20_000);
      child.stdout.on('data', () => {
        if (out.includes('paper digest at')) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    child.kill('SIGTERM');
    await new Promise((r) => child.on('close', r));
    return out;
  }

  /** Papers in the store `digest serve` ran on: the SQLite file at `path`, or the schema. */
  async function papersIn(path: string): Promise<number> {
    if (schema) return count(postgresSql(schema.pool), 'SELECT count(*) AS n FROM papers');
    const db = openDatabase(path);
    try {
      return (db.prepare('SELECT count(*) AS n FROM papers').get() as { n: number }).n;
    } finally {
      db.close();
    }
  }

  it('sample papers are loaded only in local mode: a database that sends real mail starts with no papers', async () => {
    const sink = await SmtpSink.start();
    cleanups.push(() => sink.close());
    await storyDb('digest-prod-empty-');
    const prod = tempDatabaseDir('digest-prod-');
    cleanups.push(() => prod.remove());
    const out = await serveOnce({ DATABASE_PATH: prod.path, SMTP_URL: sink.url, SECRET_KEY: 'prod-test-secret-0123456789abcdef' }, prod.dir);
    expect(out).not.toContain('sample batch');
    expect(await papersIn(prod.path)).toBe(0);

    await storyDb('digest-local-empty-');
    const local = tempDatabaseDir('digest-local-');
    cleanups.push(() => local.remove());
    expect(await serveOnce({ DATABASE_PATH: local.path }, local.dir)).toContain('ingested the sample batch');
    expect(await papersIn(local.path)).toBeGreaterThan(50);
  }, 60_000);

  it('a blackout cannot be silent: subscribers whose matched papers wait past their schedule are counted in status, /metrics and a warning', async () => {
    // The relay refuses one address every time (a full mailbox answered with 5xx, say).
    const sink = await SmtpSink.start({ script: perAddress({ 'stuck@example.org': Array(10).fill(reject(552)) }) });
    cleanups.push(() => sink.close());
    const lines: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (l: string) => void lines.push(l) });
    const { DATABASE_PATH: _path, ...delivery } = deliveryEnvVars({ path: '' } as TempDb, sink, { HARD_FAILURES_TO_SUPPRESS: '100' });
    const e = await story(
      delivery,
      (db) => {
        seedSubscribers(db, [
          { email: 'stuck@example.org', topics: ['decoding'] },
          { email: 'fine@example.org', topics: ['decoding'] },
        ]);
        seedBatch(db, '2025-11-24', [{ title: 'Speculative decoding' }], 'hf', '2025-11-24T05:00:00.000Z');
      },
      '2025-11-24T08:00:00Z',
    );

    for (const day of ['2025-11-24', '2025-11-25']) {
      e.t.clock.set(`${day}T08:00:00Z`);
      const r = await e.run({ mode: 'due', logger });
      expect(r.overdue?.subscribers).toBe(0); // 27 h at most: still within a daily schedule
    }
    expect(lines.join('')).not.toContain('waiting longer than their schedule');
    e.t.clock.set('2025-11-25T18:00:00Z'); // 37 h after the paper came in
    const late = await e.run({ mode: 'due', logger });
    expect(late.overdue).toEqual({ subscribers: 1, at: '2025-11-25T18:00:00.000Z' });
    expect(lines.join('')).toContain('waiting longer than their schedule allows');
    expect(await e.metrics()).toMatch(/^digest_overdue_subscribers 1$/m);
    const status = await digestInProcess(['status'], { ...delivery, DATABASE_PATH: e.t.tmp.path, ...onPg() });
    expect(status.stdout).toMatch(/^overdue: 1 subscriber has matched papers waiting/m);
    expect(sink.countsByAddress().get('fine@example.org')).toBe(1);
  });

  it('a manual run after the morning email sends nothing more that day; the next morning brings what came in since', async () => {
    const sink = await SmtpSink.start();
    cleanups.push(() => sink.close());
    const { DATABASE_PATH: _path, ...delivery } = deliveryEnvVars({ path: '' } as TempDb, sink);
    const e = await story(
      delivery,
      (db) => {
        seedSubscribers(db, [{ email: 'morning@example.org', topics: ['decoding'], deliveryHour: 7 }]);
        seedBatch(db, '2025-11-25', [{ title: 'Speculative decoding' }], 'hf', '2025-11-25T05:00:00.000Z');
      },
      '2025-11-25T07:00:00Z',
    );
    expect((await e.run({ mode: 'due' })).send?.sent).toBe(1);
    e.t.clock.set('2025-11-25T15:00:00Z');
    await e.ingest('2025-11-25', [{ title: 'Guided decoding' }], 'hf-late');
    expect((await e.run({ mode: 'now' })).send?.sent).toBe(0);
    e.t.clock.set('2025-11-26T07:00:00Z');
    expect((await e.run({ mode: 'due' })).send?.sent).toBe(1);
    expect(sink.countsByAddress().get('morning@example.org')).toBe(2);
    // The second email is dated the reader's day; the batch day is only shown, as metadata.
    const second = await sink.messages[1]!.parse();
    expect(second.subject).toContain('2025-11-26');
    expect(second.text).toContain('1 new paper matched your topics (papers of 25 Nov).');
  });

  it('kill -9 during planning loses no subscriber and plans none twice: the next plan finishes what was left', async () => {
    const n = 20_000;
    const t = tempDatabase('digest-plan-kill-');
    cleanups.push(() => t.cleanup());
    seedBatch(t.db, '2025-11-25', [{ title: 'Speculative decoding' }, { title: 'Decoding with drafts' }]);
    seedSubscribers(t.db, Array.from({ length: n }, (_, i) => ({ email: `s${i}@example.org`, topics: ['decoding'] })));
    matchPending(t.db);
    if (schema) await refillSchema(t.db, schema);
    const sql = schema ? postgresSql(schema.pool) : sqliteSql(t.db);

    const { child, planning, lockHeld } = startPlanner(t);
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const ran = () => count(sql, 'SELECT count(*) AS n FROM subscribers WHERE last_slot IS NOT NULL');
    const deadline = Date.now() + 30_000;
    while (!(await planning()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    child.kill('SIGKILL');
    await new Promise((r) => child.on('close', r));
    const atKill = await ran();
    expect(atKill, 'the plan finished before the kill: the test proves nothing').toBeLessThan(n);
    // Whole chunks only: every subscriber whose slot ran has its row, and no one else has one.
    expect(await count(sql, 'SELECT count(*) AS n FROM digests')).toBe(atKill);

    // PostgreSQL rolls the dead planner's transaction back (and frees its lock) once its server process
    // sees the connection gone; a plan started before that says another is planning, as it should.
    // (SQLite's lock goes with the process.)
    while ((await lockHeld()) && Date.now() < deadline + 30_000) await new Promise((r) => setTimeout(r, 20));
    expect(await lockHeld(), 'the dead planner still holds the planning lock').toBe(false);
    const clock = { now: () => new Date() };
    const r = schema ? await planDigestsPg(schema.pool, { clock, mode: 'now' }) : await planDigests(t.db, { clock, mode: 'now' });
    expect(r.planned, out).toBe(n - atKill);
    const rows = await sql.all<{ subscriber_id: number; paper_count: number }>('SELECT subscriber_id, paper_count FROM digests ORDER BY id');
    expect(rows).toHaveLength(n);
    expect(new Set(rows.map((x) => Number(x.subscriber_id))).size).toBe(n);
    expect(rows.every((x) => Number(x.paper_count) === 2)).toBe(true);
  }, 60_000);

  /**
   * A planner in its own process, and when it is in the middle of its plan. SQLite's plans in small chunks
   * (tests/helpers/plan-child.ts): in the middle once 1,000 slots have run. PostgreSQL's `digest plan`
   * writes one transaction: in the middle while it holds the planning lock (nothing committed yet).
   */
  const SQL_PLAN_LOCK_HELD = `SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2
    AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND classid::bigint = $1 AND objid::bigint = (hashtext(current_schema())::bigint & 4294967295)`;
  function startPlanner(t: TempDb): { child: ChildProcessWithoutNullStreams; planning: () => Promise<boolean>; lockHeld: () => Promise<boolean> } {
    if (!schema) {
      const child = spawn(process.execPath, ['--import', 'tsx', PLAN_CHILD, t.path, '50'], { stdio: ['pipe', 'pipe', 'pipe'] });
      const planning = async () => (t.db.prepare('SELECT count(*) AS n FROM subscribers WHERE last_slot IS NOT NULL').get() as { n: number }).n >= 1_000;
      return { child, planning, lockHeld: async () => false };
    }
    const pool = schema.pool;
    const child = spawnDigest(['plan', '--now', '--no-fetch'], { DATABASE_PATH: t.path, SECRET_KEY: 'plan-kill-secret-0123456789abcdef', ...onPg() });
    // The planning lock of this schema (plan-sql.ts SQL_TRY_PLAN_LOCK: its two keys, the second as an oid).
    const planning = async () =>
      (await pool.query(SQL_PLAN_LOCK_HELD, [PLAN_LOCK_CLASS])).rowCount! > 0;
    return { child, planning, lockHeld: planning };
  }
});
