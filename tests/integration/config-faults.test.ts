// Small faults that must name themselves in one line: settings checked at config load for every
// command (SMTP_URL without a host, a DIGEST_CRON node-cron refuses), a DATABASE_PATH that cannot be
// opened, and the rows a crashed run left in flight, reported by the next run's first log line.
import { Writable } from 'node:stream';
import { hostname } from 'node:os';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { runCli, type CliIo } from '../../src/cli.ts';
import { loadConfig } from '../../src/config.ts';
import { recoverStale } from '../../src/ledger/index.ts';
import { seedBatch, seedSubscribers, tempDatabase, type TempDb } from '../helpers/seed.ts';
import { planDigests } from '../../src/plan/planner.ts';
import { runFailure, type PipelineReport } from '../../src/pipeline.ts';
import { createScheduler } from '../../src/scheduler.ts';
import { emptySummary } from '../../src/send/send-types.ts';
import { matchPending } from '../../src/match/matcher.ts';

const saved = { ...process.env };
let t: TempDb | undefined;
afterEach(() => {
  for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
  Object.assign(process.env, saved);
  t?.cleanup();
  t = undefined;
});

/** `digest <args>` in this process with these variables; returns the exit code and the lines. */
async function digest(args: string[], env: Record<string, string>) {
  Object.assign(process.env, { SOURCES: '', ...env });
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (l) => out.push(l), err: (l) => err.push(l), isTTY: false };
  const code = await runCli(['node', 'digest', ...args], io);
  return { code, out, err };
}

describe('settings refused at config load, for every command', () => {
  it('SMTP_URL=smtp:// (no host)', async () => {
    expect(() => loadConfig({ SMTP_URL: 'smtp://' })).toThrow(/^Invalid configuration: SMTP_URL: must look like smtp:\/\/user:pass@host:port/);
    expect(() => loadConfig({ SMTP_URL: 'smtps://:587' })).toThrow(/SMTP_URL/);
    expect(loadConfig({ SMTP_URL: 'smtp://user:pass@relay.example.org:587' }).SMTP_URL).toBe('smtp://user:pass@relay.example.org:587');
    const r = await digest(['status'], { SMTP_URL: 'smtp://' });
    expect(r.code).toBe(1);
    expect(r.err).toEqual([expect.stringMatching(/^error: Invalid configuration: SMTP_URL: /)]);
  });

  it('DIGEST_CRON that node-cron refuses, by `digest status` as well as `serve`', async () => {
    expect(() => loadConfig({ DIGEST_CRON: '61 * * * *' })).toThrow(/DIGEST_CRON: not a valid cron expression/);
    expect(() => loadConfig({ DIGEST_CRON: 'hourly' })).toThrow(/DIGEST_CRON/);
    expect(loadConfig({ DIGEST_CRON: '*/15 * * * *' }).DIGEST_CRON).toBe('*/15 * * * *');
    const r = await digest(['status'], { DIGEST_CRON: '0 25 * * *' });
    expect(r.code).toBe(1);
    expect(r.err).toEqual(['error: Invalid configuration: DIGEST_CRON: not a valid cron expression (e.g. "0 * * * *": every hour)']);
  });

  it('DATABASE_URL of another database (a platform\'s mysql://) is a warning, SQLite is used; a malformed postgres URL is an error', async () => {
    expect(loadConfig({ DATABASE_URL: 'mysql://app:secret@db.internal:3306/other' }).DATABASE_URL).toBeUndefined();
    expect(loadConfig({ DATABASE_URL: 'postgres://u@127.0.0.1:5432/test' }).DATABASE_URL).toBe('postgres://u@127.0.0.1:5432/test');
    expect(() => loadConfig({ DATABASE_URL: 'postgres://u@host:port5432/db' })).toThrow(/^Invalid configuration: DATABASE_URL: not a valid postgres URL/);
    expect(() => loadConfig({ DATABASE_URL: 'postgresql:/host/db' })).toThrow(/DATABASE_URL: a postgres URL must start with postgres:\/\//);
    t = tempDatabase();
    const r = await digest(['status'], { DATABASE_PATH: t.path, DATABASE_URL: 'mysql://app:secret@db.internal:3306/other' });
    expect(r.code).toBe(0);
    expect(r.err).toEqual([`warning: DATABASE_URL is not a postgres:// URL (mysql): ignored; this service stores in SQLite at DATABASE_PATH (${t.path})`]);
    expect(r.err.join('\n')).not.toContain('secret');
    const bad = await digest(['status'], { DATABASE_PATH: t.path, DATABASE_URL: 'postgres://u@host:port5432/db' });
    expect(bad.code).toBe(1);
    expect(bad.err).toEqual([expect.stringMatching(/^error: Invalid configuration: DATABASE_URL: not a valid postgres URL/)]);
  });

  it('a DATABASE_PATH that cannot be opened is named', async () => {
    const r = await digest(['status'], { DATABASE_PATH: '/etc/hostname/digest.sqlite' });
    expect(r.code).toBe(1);
    expect(r.err).toHaveLength(1);
    expect(r.err[0]).toMatch(/^error: DATABASE_PATH=\/etc\/hostname\/digest\.sqlite: cannot open the database: /);
  });
});

describe('after a crash', () => {
  it('the next run says in one log line how many rows it marked unknown', () => {
    t = tempDatabase();
    seedBatch(t.db, '2025-11-25', [{ title: 'Diffusion transformers for video' }]);
    seedSubscribers(t.db, [1, 2, 3].map((i) => ({ email: `r${i}@example.com`, topics: ['diffusion'] })));
    matchPending(t.db);
    const clock = new ManualClock('2025-11-25T12:00:00Z');
    return planDigests(t.db, { clock, mode: 'now' }).then(() => {
      // Two sends in flight when their process was killed (this host, no such process).
      t!.db.prepare(`UPDATE digests SET status = 'sending', claimed_by = ?, claimed_at = ? WHERE id IN (1, 2)`).run(`${hostname()}:999999:1`, '2025-11-25T11:59:00.000Z');
      const lines: Array<{ level: number; msg: string; recovered: number; digests: number[] }> = [];
      const sink = new Writable({
        write(chunk: Buffer, _enc, done) {
          lines.push(JSON.parse(chunk.toString()));
          done();
        },
      });
      const logger = pino({ level: 'info' }, sink);
      expect(recoverStale(t!.db, clock, { logger })).toBe(2);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ level: 40, recovered: 2, digests: [1, 2] });
      expect(lines[0]!.msg).toBe('2 digests left in flight by a stopped run marked unknown: not resent, their papers ride in the next digest');
      // Nothing to say the next time.
      expect(recoverStale(t!.db, clock, { logger })).toBe(0);
      expect(lines).toHaveLength(1);
    });
  });
});

describe('the scheduler', () => {
  it('logs a tick whose run hit a storage fault as one error line naming the cause', async () => {
    const lines: Array<{ level: number; msg: string; code?: string }> = [];
    const logger = pino(
      { level: 'info' },
      new Writable({
        write(chunk: Buffer, _enc, done) {
          lines.push(JSON.parse(chunk.toString()));
          done();
        },
      }),
    );
    const scheduler = createScheduler({ cron: '0 0 1 1 *', timezone: 'UTC', logger, tick: async () => undefined });
    // What `digest serve`'s tick does with a run's report (src/serve.ts).
    const report = {
      send: { ...emptySummary(), storageFault: 'disk full: no space left on the disk holding the database (SQLITE_FULL: database or disk is full)', storageFaultCode: 'DB_FULL' },
    } as PipelineReport;
    scheduler.runSoon('cron', async () => {
      const failure = runFailure(report);
      if (failure) throw failure;
    }, 0);
    await new Promise((r) => setTimeout(r, 50));
    await scheduler.stop();
    const failed = lines.filter((l) => l.level === 50);
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ code: 'DB_FULL' });
    expect(failed[0]!.msg).toBe(
      'tick failed: sending stopped: disk full: no space left on the disk holding the database (SQLITE_FULL: database or disk is full); unsent digests wait for the next run',
    );
  });
});
