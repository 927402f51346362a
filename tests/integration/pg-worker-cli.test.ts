// `digest worker` through the built CLI on a PostgreSQL schema, delivering to a real SMTP sink: --once
// sends every planned row once; SIGTERM mid-run leaves none of its own claims 'sending' (each sent or
// given back), and a second run finishes the edition with 0 duplicates. Without a postgres:// URL it
// stops with a message naming DATABASE_URL.
import { createServer, type AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ClaimantLock } from '../../src/ledger/postgres/liveness.ts';
import { migratePostgres } from '../../src/db/postgres/migrate.ts';
import { planEdition } from '../../src/ledger/postgres/plan.ts';
import { ensureBuilt } from '../helpers/build.ts';
import { startDigest, type DigestRun } from '../helpers/digest-cli.ts';
import { seedPlannedPapers, seedSubscribers } from '../helpers/pg-seed.ts';
import { postgresForTests, type TestSchema } from '../helpers/postgres.ts';
import { accept, perAddress, reject, SmtpSink } from '../helpers/smtp-sink.ts';

const pg = await postgresForTests();

type Run = DigestRun;

/** `node bin/digest.js worker …` in an empty folder (no .env), with only these variables. */
function digestWorker(args: string[], env: Record<string, string>): Run {
  return digest(['worker', ...args], env);
}

function digest(args: string[], env: Record<string, string>): Run {
  return startDigest(args, env, 'digest-worker-');
}

function perDigest(sink: SmtpSink): Map<number, number> {
  const counts = new Map<number, number>();
  for (const m of sink.messages) {
    const id = Number(/^Message-ID: <digest-(\d+)\./im.exec(m.raw.toString('latin1'))?.[1]);
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

describe('digest worker without PostgreSQL', () => {
  beforeAll(() => ensureBuilt());
  it('stops with a message naming DATABASE_URL (a mysql:// URL is only warned about by the other commands)', async () => {
    const run = digestWorker(['--once'], { DATABASE_URL: 'mysql://app:secret@db.internal/other', SMTP_URL: 'smtp://127.0.0.1:2525' });
    expect(await run.code).toBe(1);
    expect(run.err()).toMatch(/^warning: DATABASE_URL is not a postgres:\/\/ URL \(mysql\)/m);
    expect(run.err()).toMatch(/^error: DATABASE_URL is not a postgres:\/\/ URL: `digest worker` sends from PostgreSQL; on SQLite/m);
    const unset = digestWorker(['--once'], { SMTP_URL: 'smtp://127.0.0.1:2525' });
    expect(await unset.code).toBe(1);
    expect(unset.err()).toMatch(/^error: DATABASE_URL is not a postgres:\/\/ URL/m);
  }, 30_000);
});

describe.skipIf(!pg.reachable)('digest worker on PostgreSQL (built CLI, real SMTP sink)', () => {
  let s: TestSchema;
  let sink: SmtpSink;
  beforeAll(async () => {
    ensureBuilt();
    sink = await SmtpSink.start();
  });
  afterAll(async () => sink?.close());
  afterEach(async () => {
    sink.reset();
    sink.script = undefined;
    await s?.drop();
  });

  async function edition(n: number): Promise<Record<string, string>> {
    s = await pg.schema();
    await migratePostgres(s.pool);
    await seedSubscribers(s.pool, n);
    await planEdition(s.pool, { edition: '2026-11-27', toPaper: 40 });
    await seedPlannedPapers(s.pool);
    return { DATABASE_URL: s.url, DATABASE_SCHEMA: s.name, SMTP_URL: sink.url };
  }

  async function counts(): Promise<Record<string, number>> {
    const r = await s.pool.query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM digests GROUP BY status');
    return Object.fromEntries(r.rows.map((x) => [x.status, x.n]));
  }

  it('--once sends every planned row once, then exits 0', async () => {
    const env = await edition(300);
    const run = digestWorker(['--once', '--lanes', '4'], env);
    expect(await run.code).toBe(0);
    expect(run.out()).toMatch(/^worker \S+: 4 lanes on PostgreSQL, until nothing is claimable$/m);
    expect(run.out()).toMatch(/^sent 300, retry 0, failed 0, unknown 0, not confirmed 0, given back 0$/m);
    expect(await counts()).toEqual({ sent: 300 });
    const atSink = perDigest(sink);
    expect(atSink.size).toBe(300);
    expect([...atSink.values()].every((n) => n === 1)).toBe(true);
  }, 120_000);

  it('a 5xx at send time is sorted as on SQLite: a policy block alarms, a full mailbox is a soft bounce, only an unknown user counts as a hard failure', async () => {
    const env = await edition(6);
    sink.script = perAddress({
      's1@example.org': [reject(550, { text: '5.7.1 Message rejected as spam by the receiving server' })],
      's2@example.org': [reject(552, { text: '5.2.2 Mailbox full' })],
      's3@example.org': [reject(550, { text: '5.1.1 User unknown' })],
    });
    const run = digestWorker(['--once'], { ...env, HARD_FAILURES_TO_SUPPRESS: '1' });
    expect(await run.code).toBe(0);
    expect(run.out()).toMatch(/^sent 3, retry 0, failed 3, unknown 0, not confirmed 0, given back 0$/m);
    const bounces = await s.pool.query(
      `SELECT s.email, b.kind, b.channel, b.outcome FROM bounce_events b JOIN subscribers s ON s.id = b.subscriber_id ORDER BY s.email`,
    );
    expect(bounces.rows).toEqual([
      { email: 's1@example.org', kind: 'policy', channel: 'send', outcome: 'alerted' },
      { email: 's2@example.org', kind: 'soft', channel: 'send', outcome: 'counted' },
    ]);
    const people = await s.pool.query(`SELECT email, status, hard_failures FROM subscribers WHERE id <= 3 ORDER BY id`);
    // The receiver refused our mail, not the reader's address: they stay; the unknown user is suppressed at the setting (1).
    expect(people.rows).toEqual([
      { email: 's1@example.org', status: 'confirmed', hard_failures: 0 },
      { email: 's2@example.org', status: 'confirmed', hard_failures: 0 },
      { email: 's3@example.org', status: 'suppressed', hard_failures: 1 },
    ]);
  }, 120_000);

  /** A relay that takes each connection and closes it before its greeting (a connection failure), counting them. */
  async function deadRelay(): Promise<{ url: string; connections: () => number; close: () => Promise<void> }> {
    let n = 0;
    const server = createServer((socket) => {
      n++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    return { url: `smtp://127.0.0.1:${port}`, connections: () => n, close: () => new Promise((r) => server.close(() => r())) };
  }

  async function triesByStatus(): Promise<Array<{ status: string; attempts: number; n: number }>> {
    const r = await s.pool.query(`SELECT status, attempts, count(*)::int AS n FROM digests GROUP BY status, attempts ORDER BY status`);
    return r.rows;
  }

  it("--once with the relay down: exit 1 with digest run's line; the streak's rows back in retry, no try used", async () => {
    const relay = await deadRelay();
    try {
      // One digest: its second try can only be the in-run retry at its backoff (20 ms scale).
      const env = { ...(await edition(1)), SMTP_URL: relay.url, RELAY_DOWN_AFTER: '2', SMTP_RETRY_BASE_MS: '20', SMTP_RETRY_MAX_MS: '50', LOG_LEVEL: 'silent' };
      const run = digestWorker(['--once', '--lanes', '1'], env);
      expect(await run.code).toBe(1);
      expect(run.err().trim().split('\n')).toEqual([expect.stringMatching(/^error: sending paused: relay down: 2 connection failures in a row \(last: .+\); run again when it is back$/)]);
      expect(run.out()).toMatch(/^sent 0, retry 1, failed 0, unknown 0, not confirmed 0, given back 0$/m);
      // Tried twice (retried in the run), both tries given back.
      expect(relay.connections()).toBe(2);
      expect(await triesByStatus()).toEqual([{ status: 'retry', attempts: 0, n: 1 }]);
    } finally {
      await relay.close();
    }
  }, 120_000);

  it('a long-running worker with the relay down logs the pause at error level and waits (no reconnecting meanwhile); SIGTERM stops it', async () => {
    const relay = await deadRelay();
    try {
      // The wait after a pause is the retry backoff: SMTP_RETRY_BASE_MS=120000 waits 60-120 s, far past this test.
      const env = { ...(await edition(4)), SMTP_URL: relay.url, RELAY_DOWN_AFTER: '2', SMTP_RETRY_BASE_MS: '120000', LOG_LEVEL: 'error' };
      const run = digestWorker(['--lanes', '1'], env);
      await expect.poll(() => run.out() + run.err(), { timeout: 60_000, interval: 200 }).toMatch(/sending paused: relay down: 2 connection failures in a row/);
      const line = (run.out() + run.err()).split('\n').find((l) => l.includes('sending paused'))!;
      expect(JSON.parse(line)).toMatchObject({ level: 50 });
      run.kill('SIGTERM');
      expect(await run.code).toBe(0);
      expect(relay.connections()).toBe(2);
      // Each first try's retry is a minute off, so the lane went on to the next row: two rows, each try given back.
      expect(await triesByStatus()).toEqual([
        { status: 'planned', attempts: 0, n: 2 },
        { status: 'retry', attempts: 0, n: 2 },
      ]);
    } finally {
      await relay.close();
    }
  }, 120_000);

  it('SIGTERM mid-run: none of its claims left sending (sent or given back); a second run finishes, 0 duplicates', async () => {
    // 600 rows, SIGTERM after 100: the story needs rows left unclaimed when it lands, which
    // `after.planned > 0` checks (2,000 before: ~1,900 more digests rendered and sent for the same proofs).
    const env = await edition(600);
    sink.script = () => accept(5);
    const run = digestWorker(['--lanes', '5'], env);
    await sink.waitForMessages(100, 90_000);
    run.kill('SIGTERM');
    expect(await run.code).toBe(0);
    expect(run.err()).toMatch(/^SIGTERM: stopping/m);
    const claimant = /^worker (\S+):/m.exec(run.out())?.[1];
    expect(claimant).toBeDefined();
    const mine = await s.pool.query('SELECT count(*)::int AS n FROM digests WHERE claimed_by = $1 AND status = $2', [claimant, 'sending']);
    expect(mine.rows[0].n).toBe(0);
    const after = await counts();
    expect(after.sent).toBe(sink.messages.length);
    expect((after.sent ?? 0) + (after.planned ?? 0)).toBe(600);
    expect(after.planned).toBeGreaterThan(0);
    sink.script = undefined;
    const rest = digestWorker(['--once'], env);
    expect(await rest.code).toBe(0);
    expect(await counts()).toEqual({ sent: 600 });
    const atSink = perDigest(sink);
    expect(atSink.size).toBe(600);
    expect([...atSink.values()].filter((n) => n > 1)).toEqual([]);
  }, 240_000);

  /** Rows 1..n in flight for `claimant`, as a worker that claimed them and then stopped would leave them. */
  async function inFlight(n: number, claimant: string): Promise<void> {
    await s.pool.query(`UPDATE digests SET status = 'sending', claimed_by = $2, claimed_at = $3 WHERE id <= $1`, [n, claimant, new Date().toISOString()]);
  }

  it('at start, a gone worker\'s rows in flight become unknown (said in one line), never sent; the rest is sent', async () => {
    const env = await edition(50);
    await inFlight(5, 'gone-host:4242:1');
    const run = digestWorker(['--once'], env);
    expect(await run.code).toBe(0);
    expect(run.out()).toMatch(/^5 digests were in flight in workers that are gone: marked unknown, never resent/m);
    expect(await counts()).toEqual({ sent: 45, unknown: 5 });
    expect([...perDigest(sink).keys()].filter((id) => id <= 5)).toEqual([]);
  }, 60_000);

  it('digest recover --after-restore: refused while a worker holds claims; then every open row unknown, nothing sent after', async () => {
    const env = await edition(30);
    await s.pool.query(`UPDATE digests SET status = 'sent' WHERE id > 25`);
    const live = new ClaimantLock(s.url, 'live-host:1:1', s.name);
    await live.hold();
    await inFlight(3, 'live-host:1:1');
    const refused = digest(['recover', '--after-restore'], env);
    expect(await refused.code).toBe(1);
    expect(refused.err()).toMatch(/^error: workers are still sending \(live-host:1:1\): stop every `digest worker` first/m);
    expect(await counts()).toEqual({ sent: 5, planned: 22, sending: 3 });
    await live.release();
    const r = digest(['recover', '--after-restore'], env);
    expect(await r.code).toBe(0);
    expect(r.out()).toMatch(/^25 digests not recorded as sent in the restored database may have gone out since: marked unknown/m);
    expect(await counts()).toEqual({ sent: 5, unknown: 25 });
    const w = digestWorker(['--once'], env);
    expect(await w.code).toBe(0);
    expect(sink.messages).toHaveLength(0);
  }, 60_000);

  it('digest recover (no option): what a worker does at start, on demand', async () => {
    const env = await edition(10);
    await inFlight(4, 'gone-host:7:7');
    const r = digest(['recover'], env);
    expect(await r.code).toBe(0);
    expect(r.out()).toMatch(/^4 digests were in flight in workers that are gone: marked unknown/m);
    expect(await counts()).toEqual({ planned: 6, unknown: 4 });
  }, 30_000);
});
