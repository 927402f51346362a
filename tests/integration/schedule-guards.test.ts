// What must never stop or spoil the mail, each through the public surface: a batch dated years ahead
// (CLI and HTTP), demo papers in a database that sends real mail, a blackout nobody notices, a manual
// run after the morning email, and kill -9 in the middle of planning.
import { execFile, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/db/open.ts';
import { createTestApp, type AppWithDb } from '../helpers/test-app.ts';
import { runPipeline } from '../../src/pipeline.ts';
import { planDigests } from '../../src/plan/planner.ts';
import { metricsText } from '../../src/report/status.ts';
import { matchPending } from '../../src/match/matcher.ts';
import { buildServer } from '../../src/web/server.ts';
import { deliveryEnvVars } from '../helpers/delivery-setup.ts';
import { freePort } from '../helpers/ports.ts';
import { digestRows, seedBatch, seedSubscribers, tempDatabase, tempDatabaseDir } from '../helpers/seed.ts';
import { perAddress, reject, SmtpSink } from '../helpers/smtp-sink.ts';
import { DIGEST_BIN } from '../helpers/build.ts';

const BIN = DIGEST_BIN;
const PLAN_CHILD = fileURLToPath(new URL('../helpers/plan-child.ts', import.meta.url));

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function cli(env: Record<string, string>, cwd: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, timeout: 30_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

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

describe('a batch dated more than one day ahead', () => {
  it('is refused whole by `digest ingest` and by POST /api/batches, naming the date', async () => {
    const t = tempDatabase('digest-future-');
    cleanups.push(() => t.cleanup());
    const env = { DATABASE_PATH: t.path, LOG_LEVEL: 'silent', SECRET_KEY: 'future-test-secret-0123456789abcdef', SOURCES: '' };
    const r = await cli(env, t.dir, 'ingest', batchFile(t.dir, '2030-01-01'));
    expect(r.code).not.toBe(0);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/2030-01-01 is more than one day after today/);
    expect(t.db.prepare(`SELECT count(*) AS n FROM papers`).get()).toEqual({ n: 0 });
    // Tomorrow (UTC) is fine: a listing can be dated ahead of a time zone's day.
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    expect((await cli(env, t.dir, 'ingest', batchFile(t.dir, tomorrow))).code).toBe(0);

    const config = loadConfig({ ...env, API_TOKEN: 'api-token-0123456789abcdef', PUBLIC_URL: 'http://127.0.0.1' });
    const app = await createTestApp(config, { logger: pino({ level: 'silent' }) });
    cleanups.push(() => app.close());
    const server = buildServer(app);
    cleanups.push(() => server.close());
    const res = await server.inject({
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
    expect(app.db.prepare(`SELECT count(*) AS n FROM papers WHERE paper_key = '2511.08888'`).get()).toEqual({ n: 0 });
  });
});

describe('sample papers', () => {
  async function serveOnce(env: Record<string, string>, cwd: string): Promise<string> {
    const port = await freePort();
    const child = spawn(process.execPath, [BIN, 'serve'], {
      cwd,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'silent', MAIL_CATCHER_PORT: '0', SOURCES: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    await new Promise<void>((resolve, rejectStart) => {
      const timer = setTimeout(() => rejectStart(new Error(`serve did not start: ${out}`)), 20_000);
      child.stdout!.on('data', () => {
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

  it('are loaded only in local mode: a database that sends real mail starts with no papers', async () => {
    const sink = await SmtpSink.start();
    cleanups.push(() => sink.close());
    const prod = tempDatabaseDir('digest-prod-');
    cleanups.push(() => prod.remove());
    const out = await serveOnce({ DATABASE_PATH: prod.path, SMTP_URL: sink.url, SECRET_KEY: 'prod-test-secret-0123456789abcdef' }, prod.dir);
    expect(out).not.toContain('sample batch');
    const db = openDatabase(prod.path);
    expect(db.prepare(`SELECT count(*) AS n FROM papers`).get()).toEqual({ n: 0 });
    db.close();

    const local = tempDatabaseDir('digest-local-');
    cleanups.push(() => local.remove());
    expect(await serveOnce({ DATABASE_PATH: local.path }, local.dir)).toContain('ingested the sample batch');
    const ldb = openDatabase(local.path);
    expect((ldb.prepare(`SELECT count(*) AS n FROM papers`).get() as { n: number }).n).toBeGreaterThan(50);
    ldb.close();
  }, 60_000);
});

describe('a blackout cannot be silent', () => {
  it('counts subscribers whose matched papers wait past their schedule, in status, /metrics and a warning', async () => {
    const t = tempDatabase('digest-overdue-');
    cleanups.push(() => t.cleanup());
    // The relay refuses one address every time (a full mailbox answered with 5xx, say).
    const sink = await SmtpSink.start({ script: perAddress({ 'stuck@example.org': Array(10).fill(reject(552)) }) });
    cleanups.push(() => sink.close());
    const lines: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (l: string) => void lines.push(l) });
    const clock = new ManualClock('2025-11-24T08:00:00Z');
    const app: AppWithDb = await createTestApp(loadConfig(deliveryEnvVars(t, sink, { HARD_FAILURES_TO_SUPPRESS: '100' })), { clock, logger });
    cleanups.push(() => app.close());
    seedSubscribers(t.db, [
      { email: 'stuck@example.org', topics: ['decoding'] },
      { email: 'fine@example.org', topics: ['decoding'] },
    ]);
    seedBatch(t.db, '2025-11-24', [{ title: 'Speculative decoding' }], 'hf', '2025-11-24T05:00:00.000Z');

    for (const day of ['2025-11-24', '2025-11-25']) {
      clock.set(`${day}T08:00:00Z`);
      const r = await runPipeline(app, { mode: 'due' });
      expect(r.overdue?.subscribers).toBe(0); // 27 h at most: still within a daily schedule
    }
    expect(lines.join('')).not.toContain('waiting longer than their schedule');
    clock.set('2025-11-25T18:00:00Z'); // 37 h after the paper came in
    const late = await runPipeline(app, { mode: 'due' });
    expect(late.overdue).toEqual({ subscribers: 1, at: '2025-11-25T18:00:00.000Z' });
    expect(lines.join('')).toContain('waiting longer than their schedule allows');
    expect(metricsText(app.db)).toMatch(/^digest_overdue_subscribers 1$/m);
    const status = await cli(deliveryEnvVars(t, sink), t.dir, 'status');
    expect(status.stdout).toMatch(/^overdue: 1 subscriber has matched papers waiting/m);
    expect(sink.countsByAddress().get('fine@example.org')).toBe(1);
  });
});

describe('a manual run after the morning email', () => {
  it('sends nothing more that day; the next morning brings what came in since', async () => {
    const t = tempDatabase('digest-manual-');
    cleanups.push(() => t.cleanup());
    const sink = await SmtpSink.start();
    cleanups.push(() => sink.close());
    const clock = new ManualClock('2025-11-25T07:00:00Z');
    const app = await createTestApp(loadConfig(deliveryEnvVars(t, sink)), { clock, logger: pino({ level: 'silent' }) });
    cleanups.push(() => app.close());
    seedSubscribers(t.db, [{ email: 'morning@example.org', topics: ['decoding'], deliveryHour: 7 }]);
    seedBatch(t.db, '2025-11-25', [{ title: 'Speculative decoding' }], 'hf', '2025-11-25T05:00:00.000Z');
    expect((await runPipeline(app, { mode: 'due' })).send?.sent).toBe(1);
    clock.set('2025-11-25T15:00:00Z');
    seedBatch(t.db, '2025-11-25', [{ title: 'Guided decoding' }], 'hf-late', '2025-11-25T15:00:00.000Z');
    expect((await runPipeline(app, { mode: 'now' })).send?.sent).toBe(0);
    clock.set('2025-11-26T07:00:00Z');
    expect((await runPipeline(app, { mode: 'due' })).send?.sent).toBe(1);
    expect(sink.countsByAddress().get('morning@example.org')).toBe(2);
    // The second email is dated the reader's day; the batch day is only shown, as metadata.
    const second = await sink.messages[1]!.parse();
    expect(second.subject).toContain('2025-11-26');
    expect(second.text).toContain('1 new paper matched your topics (papers of 25 Nov).');
  });
});

describe('kill -9 during planning', () => {
  it('loses no subscriber and plans none twice: the next plan finishes what was left', async () => {
    const t = tempDatabase('digest-plan-kill-');
    cleanups.push(() => t.cleanup());
    const n = 20_000;
    seedBatch(t.db, '2025-11-25', [{ title: 'Speculative decoding' }, { title: 'Decoding with drafts' }]);
    seedSubscribers(t.db, Array.from({ length: n }, (_, i) => ({ email: `s${i}@example.org`, topics: ['decoding'] })));
    matchPending(t.db);

    const child = spawn(process.execPath, ['--import', 'tsx', PLAN_CHILD, t.path, '50'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const ran = () => (t.db.prepare(`SELECT count(*) AS n FROM subscribers WHERE last_slot IS NOT NULL`).get() as { n: number }).n;
    const deadline = Date.now() + 30_000;
    while (ran() < 1_000 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    child.kill('SIGKILL');
    await new Promise((r) => child.on('close', r));
    const atKill = ran();
    expect(atKill, out).toBeGreaterThan(0);
    expect(atKill, 'the plan finished before the kill: the test proves nothing').toBeLessThan(n);
    // Whole chunks only: every subscriber whose slot ran has its row, and no one else has one.
    expect(digestRows(t.db)).toHaveLength(atKill);

    const r = await planDigests(t.db, { clock: { now: () => new Date() }, mode: 'now' });
    expect(r.planned).toBe(n - atKill);
    const rows = digestRows(t.db);
    expect(rows).toHaveLength(n);
    expect(new Set(rows.map((x) => x.subscriber_id)).size).toBe(n);
    expect(rows.every((x) => x.paper_count === 2)).toBe(true);
  }, 60_000);
});
