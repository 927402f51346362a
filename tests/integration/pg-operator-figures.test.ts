// The operator's figures when the deployment lives in PostgreSQL (DATABASE_URL=postgres://…): one edition
// with an overdue reader, a hard bounce and a row left `unknown`, built on SQLite and moved with `digest
// copy`, so both stores hold the same scenario. The real `digest status` and the real `digest serve`'s
// /metrics and console (overview, deliveries) must show it from either store, line for line. Then PostgreSQL out of reach (a TCP relay to it,
// cut): /health answers 503 naming the fault, `digest status` exits 1 with one line, and /health heals
// once PostgreSQL is back. The built bin runs `digest status` where its exit code matters (PostgreSQL out of
// reach); the line-for-line comparison runs the same code in this process (runCli), ~1 s cheaper a call.
import { createServer, connect, type Server, type Socket } from 'node:net';
import pgDriver from 'pg';
import { systemClock } from '../../src/clock.ts';
import { createPostgresHealthCheck } from '../../src/report/postgres/health.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copySqliteToPostgres } from '../../src/db/postgres/copy.ts';
import { matchNew } from '../../src/pipeline.ts';
import { adminHash, consoleCookie } from '../helpers/admin-setup.ts';
import { ensureBuilt } from '../helpers/build.ts';
import { digestInProcess } from '../helpers/cli-in-process.ts';
import { freePort } from '../helpers/ports.ts';
import { postgresForTests, type TestSchema } from '../helpers/postgres.ts';
import { childDir, digestAt, startServe, waitUntil, type Serve } from '../helpers/pg-story.ts';
import { seedBatch, seedSubscribers, tempDatabase, type TempDb } from '../helpers/seed.ts';

const pg = await postgresForTests();
const HOUR_MS = 3_600_000;

/** A TCP relay to PostgreSQL that a test can cut (every connection dropped, the port refusing) and restore. */
async function cuttableRelay(target: URL): Promise<{ url(u: string): string; cut(): Promise<void>; restore(): Promise<void> }> {
  const port = await freePort();
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  const listen = () =>
    new Promise<void>((resolve) => {
      server = createServer((client) => {
        const upstream = connect(Number(target.port || 5432), target.hostname);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('error', () => {});
          s.on('close', () => sockets.delete(s));
        }
        client.pipe(upstream).pipe(client);
      });
      server.listen(port, '127.0.0.1', () => resolve());
    });
  await listen();
  return {
    url(u) {
      const relayed = new URL(u);
      relayed.hostname = '127.0.0.1';
      relayed.port = String(port);
      return relayed.toString();
    },
    async cut() {
      await new Promise<void>((resolve) => {
        server!.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
    },
    restore: listen,
  };
}

/** What the console's read pages show: the overview's totals and charts, the deliveries page's tables and overdue line. */
function consoleFigures(overview: string, deliveries: string) {
  const between = (text: string, from: string, to: string) => text.slice(text.indexOf(from), text.indexOf(to, text.indexOf(from)) + to.length);
  return {
    totals: between(overview, '<dl class="totals">', '</dl>'),
    charts: [...overview.matchAll(/<section class="chart"[\s\S]*?<\/section>/g)].map((m) => m[0]),
    overdue: /Overdue subscribers[^<]*<strong>(\d+)<\/strong>/.exec(deliveries)?.[1],
    tables: [...deliveries.matchAll(/<table[\s\S]*?<\/table>/g)].map((m) => m[0]),
  };
}

/** `digest serve`'s metrics with their values; the overdue check's time differs by when each store counted. */
const metricLines = (text: string) => text.split('\n').filter((l) => l && !l.startsWith('#') && !l.startsWith('digest_overdue_checked_timestamp_seconds'));

describe.skipIf(!pg.reachable)('operator figures on PostgreSQL: digest status, /metrics and /health', () => {
  let s: TestSchema;
  let sqlite: TempDb;
  let dir: ReturnType<typeof childDir>;
  const at = new Date().toISOString();
  const edition = at.slice(0, 10);

  beforeAll(async () => {
    ensureBuilt();
    dir = childDir();
    s = await pg.schema();
    sqlite = tempDatabase();
    const db = sqlite.db;
    // carol's topic matches a paper ingested three days ago that no digest carried: overdue.
    seedBatch(db, edition, [{ title: 'Diffusion models for video' }], 'hf', new Date(Date.parse(at) - 72 * HOUR_MS).toISOString());
    const [alice, bob] = seedSubscribers(db, [
      { email: 'alice@example.org', topics: ['graphs'] },
      { email: 'bob@example.org', topics: ['graphs'] },
      { email: 'carol@example.org', topics: ['diffusion'] },
    ]);
    matchNew(db);
    const row = db.prepare(`
      INSERT INTO digests (subscriber_id, edition, status, from_paper, to_paper, paper_count, planned_at, sent_at, smtp_code, smtp_response)
      VALUES (?, ?, ?, 0, 1, 1, ?, ?, ?, ?) RETURNING id`);
    const sent = row.get(alice!.id, edition, 'sent', at, at, 250, '250 ok') as { id: number };
    // In flight when its worker died: never resent, counted as unknown.
    row.get(bob!.id, edition, 'unknown', at, null, 421, '421 4.4.2 connection dropped mid-send');
    db.prepare(`
      INSERT INTO bounce_events (digest_id, subscriber_id, kind, channel, status, detail, outcome, received_at)
      VALUES (?, ?, 'hard', 'smtp', '5.1.1', 'user unknown', 'suppressed', ?)`).run(sent.id, alice!.id, new Date(Date.parse(at) - HOUR_MS).toISOString());
    // The same deployment in PostgreSQL (nothing counted yet on either side: each store counts its own).
    expect((await copySqliteToPostgres(db, s.pool)).ok).toBe(true);
    db.close();
  }, 180_000);
  afterAll(async () => {
    await s?.drop();
    sqlite?.cleanup();
    dir?.cleanup();
  });

  const onSqlite = () => ({ DATABASE_PATH: sqlite.path });
  const onPostgres = (url = s.url) => ({ DATABASE_URL: url, DATABASE_SCHEMA: s.name });

  it('digest status and /metrics show the overdue reader, the bounce and the unknown row from PostgreSQL, as from SQLite', async () => {
    const fromSqlite = await digestInProcess(['status'], onSqlite(), { at });
    const fromPostgres = await digestInProcess(['status'], onPostgres(), { at });
    expect(fromSqlite).toMatchObject({ code: 0, stderr: '' });
    expect(fromPostgres).toMatchObject({ code: 0, stderr: '' });
    expect(fromPostgres.stdout).toContain('overdue: 1 subscriber has matched papers waiting');
    expect(fromPostgres.stdout).toContain('bounces (30 days): hard 1, soft 0, policy blocks 0; complaints 0 (0.00% of 1 sent');
    expect(fromPostgres.stdout).toContain(`${edition}\tplanned 2\tsent 1\tpending 0\tfailed 0\tsuppressed 0\tunknown 1`);
    expect(fromPostgres.stdout).toContain('1× 421 4.4.2 connection dropped mid-send');
    expect(fromPostgres.stdout).toBe(fromSqlite.stdout);

    // The real `digest serve` on each store: /metrics, and the console's overview and deliveries pages.
    const scrape = async (env: Record<string, string>) => {
      const serve: Serve = await startServe(at, { ...env, ADMIN_PASSWORD_HASH: await adminHash(), DIGEST_TZ: 'UTC', MAIL_CATCHER_PORT: String(await freePort()) }, dir.cwd);
      try {
        const res = await fetch(`${serve.base}/metrics`);
        expect(res.status).toBe(200);
        const cookie = await consoleCookie(serve.base);
        const page = async (path: string) => (await fetch(`${serve.base}${path}`, { headers: { cookie } })).text();
        return { metrics: await res.text(), console: consoleFigures(await page('/admin'), await page('/admin/deliveries')) };
      } finally {
        await serve.stop();
      }
    };
    const sqliteServe = await scrape(onSqlite());
    const postgresServe = await scrape(onPostgres());
    const [metricsSqlite, metricsPostgres] = [sqliteServe.metrics, postgresServe.metrics];
    expect(metricsPostgres).toMatch(/^digest_overdue_subscribers 1$/m);
    expect(metricsPostgres).toMatch(/^digest_bounces_total\{kind="hard"\} 1$/m);
    expect(metricsPostgres).toMatch(/^digest_emails_unknown_total 1$/m);
    expect(metricsPostgres).toMatch(/^digest_emails_sent_total 1$/m);
    expect(metricsPostgres).toMatch(/^digest_subscribers\{status="confirmed"\} 3$/m);
    expect(metricLines(metricsPostgres)).toEqual(metricLines(metricsSqlite));

    const pgConsole = postgresServe.console;
    expect(pgConsole.overdue).toBe('1');
    expect(pgConsole.totals).toMatch(/id="total-confirmed">3</);
    expect(pgConsole.totals).toMatch(/id="total-sent">1</);
    expect(pgConsole.totals).toContain('<dt>Bounces (hard / soft)</dt><dd>1 / 0</dd>');
    expect(pgConsole.tables.join('\n')).toContain(`<tr><th>${edition}</th><td>0</td><td>0</td><td>0</td><td>1</td><td>0</td><td>1</td><td>0</td><td>2</td></tr>`);
    expect(pgConsole.tables.join('\n')).toContain('421 4.4.2 connection dropped mid-send');
    expect(pgConsole).toEqual(sqliteServe.console);
  }, 120_000);

  it('PostgreSQL out of reach: /health answers 503 naming it, digest status exits 1 with one line; /health heals when it is back', async () => {
    const relay = await cuttableRelay(new URL(s.url));
    const serve = await startServe(at, { ...onPostgres(relay.url(s.url)), MAIL_CATCHER_PORT: String(await freePort()) }, dir.cwd);
    try {
      expect(await (await fetch(`${serve.base}/health`)).json()).toEqual({ ok: true });
      await relay.cut();
      let last: Response | undefined;
      await waitUntil('/health answers 503', async () => (last = await fetch(`${serve.base}/health`)).status === 503);
      expect(last!.headers.get('retry-after')).toBe('10');
      const body = (await last!.json()) as { ok: boolean; code: string; error: string };
      expect(body).toMatchObject({ ok: false, code: 'DB_UNREACHABLE' });
      expect(body.error).toMatch(/^DATABASE_URL: database unreachable/);

      const status = await digestAt(at, ['status'], onPostgres(relay.url(s.url)), dir.cwd);
      expect(status.code).toBe(1);
      expect(status.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^error: DATABASE_URL: database unreachable: PostgreSQL \(DATABASE_URL\)/)]);

      await relay.restore();
      await waitUntil('/health answers 200 again', async () => (await fetch(`${serve.base}/health`)).status === 200);
    } finally {
      await serve.stop();
    }
  }, 120_000);

  it('PostgreSQL refusing the write (a read-only session, as on a standby): /health names DB_READONLY', async () => {
    const readOnly = new pgDriver.Pool({ connectionString: s.url, options: `-c search_path=${s.name} -c default_transaction_read_only=on` });
    try {
      const fault = await createPostgresHealthCheck(readOnly, systemClock)();
      expect(fault?.fault).toBe('DB_READONLY');
      expect(fault?.retryAfterSeconds).toBe(60);
      expect(fault?.message).toMatch(/^DATABASE_URL: database read-only: .*\(25006: cannot execute INSERT in a read-only transaction\)$/);
      // The same check on a session that may write: no fault.
      expect(await createPostgresHealthCheck(s.pool, systemClock)()).toBeUndefined();
    } finally {
      await readOnly.end();
    }
  });
});
