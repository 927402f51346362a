// Bounces and complaints about digests PostgreSQL's workers sent act on PostgreSQL: an edition planned in
// PostgreSQL and sent by the built `digest worker --once` into a real SMTP server (each digest leaves with
// its VERP envelope sender), then a real `digest serve` with DATABASE_URL=postgres://…, its bounce receiver
// on a real SMTP port and the Mailgun webhook on its real HTTP port. The DSN and the webhook name the
// digest only through that envelope's VERP tag. The SQLite file beside serve must stay untouched. Then the rules (soft limit, policy, unknown digest) on the adapter
// itself. Skipped, said once, when PostgreSQL is unreachable.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresBounceStore } from '../../src/bounces/postgres/store.ts';
import { taggedDigestIn } from '../../src/bounces/store.ts';
import { Verp } from '../../src/bounces/verp.ts';
import { migratePostgres } from '../../src/db/postgres/migrate.ts';
import { planEdition } from '../../src/ledger/postgres/plan.ts';
import { createLogger } from '../../src/log.ts';
import { Tokens } from '../../src/tokens.ts';
import { BOUNCE, deliverReport, fixtureReport } from '../helpers/bounce-setup.ts';
import { ensureBuilt } from '../helpers/build.ts';
import { REPO_ROOT } from '../helpers/delivery-setup.ts';
import { freePort } from '../helpers/ports.ts';
import { postgresForTests, type TestSchema } from '../helpers/postgres.ts';
import { runNodeChild } from '../helpers/run-child.ts';
import { seedPlannedPapers, seedSubscribers } from '../helpers/pg-seed.ts';
import { startSmtpCapture, type SmtpCapture } from '../helpers/smtp-capture.ts';

const pg = await postgresForTests();
const SECRET = 'a'.repeat(64);
const MAILGUN_KEY = 'key-mailgun-webhook-signing-0123456789';
const verp = new Verp(BOUNCE, new Tokens(SECRET));

/** One more sent digest of a subscriber (the adapter's soft-limit case needs two). */
const SQL_SENT_DIGEST = `
  INSERT INTO digests (subscriber_id, edition, status, from_paper, to_paper, paper_count, planned_at, sent_at, verp_nonce)
  SELECT id, $2, 'sent', 0, 0, 0, '2026-11-26T06:00:00.000Z', '2026-11-26T06:01:00.000Z', $3 FROM subscribers WHERE email = $1
  RETURNING id`;

const waitUntil = async (what: string, ok: () => Promise<boolean>, ms = 15_000) => {
  const start = Date.now();
  while (!(await ok())) {
    if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
};

describe.skipIf(!pg.reachable)('bounces and complaints on PostgreSQL', () => {
  let s: TestSchema;
  let smtp: SmtpCapture;
  let dir: string;
  let child: ChildProcess;
  let out = '';
  let base: string;
  let bouncePort: number;
  let sqliteFile: string;
  /** Each reader's digest id and the envelope sender it really left with (from the SMTP capture). */
  const digest: Record<string, number> = {};
  const envelope: Record<string, string> = {};

  const status = async (email: string) => (await s.pool.query<{ status: string }>('SELECT status FROM subscribers WHERE email = $1', [email])).rows[0]!.status;
  const consent = async (email: string) =>
    (await s.pool.query<{ kind: string; status: string }>('SELECT kind, status FROM consent_events WHERE email = $1 ORDER BY id', [email])).rows;
  const events = async (email: string) =>
    (await s.pool.query<{ kind: string; outcome: string; channel: string }>(
      'SELECT e.kind, e.outcome, e.channel FROM bounce_events e JOIN subscribers s ON s.id = e.subscriber_id WHERE s.email = $1 ORDER BY e.id',
      [email],
    )).rows;

  beforeAll(async () => {
    ensureBuilt();
    s = await pg.schema();
    await migratePostgres(s.pool);
    await seedSubscribers(s.pool, 6);
    await planEdition(s.pool, { edition: '2026-11-26', toPaper: 40 });
    await seedPlannedPapers(s.pool);
    smtp = await startSmtpCapture();
    dir = mkdtempSync(join(tmpdir(), 'pg-bounces-'));
    sqliteFile = join(dir, 'digest.sqlite');
    const worker = await runNodeChild([join(REPO_ROOT, 'bin', 'digest.js'), 'worker', '--once'], {
      PATH: process.env.PATH ?? '',
      DATABASE_URL: s.url,
      DATABASE_SCHEMA: s.name,
      DATABASE_PATH: join(dir, 'worker.sqlite'),
      SMTP_URL: smtp.url,
      SECRET_KEY: SECRET,
      BOUNCE_ADDRESS: BOUNCE,
      LOG_LEVEL: 'silent',
    }, dir);
    expect(worker.stdout).toMatch(/^sent 6, /m);
    const rows = await s.pool.query<{ id: string; email: string }>('SELECT d.id, s.email FROM digests d JOIN subscribers s ON s.id = d.subscriber_id');
    for (const r of rows.rows) {
      digest[r.email] = Number(r.id);
      envelope[r.email] = (await smtp.waitFor(r.email)).mailFrom;
    }
    const port = await freePort();
    bouncePort = await freePort();
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      SOURCES: '',
      DATABASE_URL: s.url,
      DATABASE_SCHEMA: s.name,
      DATABASE_PATH: sqliteFile,
      SMTP_URL: smtp.url,
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_URL: 'https://digest.example.org',
      SECRET_KEY: SECRET,
      BOUNCE_ADDRESS: BOUNCE,
      BOUNCE_SMTP_PORT: String(bouncePort),
      BOUNCE_SMTP_HOST: '127.0.0.1',
      MAILGUN_WEBHOOK_SIGNING_KEY: MAILGUN_KEY,
      LOG_LEVEL: 'info',
    };
    child = spawn(process.execPath, [join(REPO_ROOT, 'bin/digest.js'), 'serve'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    await waitUntil('digest serve to start', async () => {
      if (child.exitCode !== null) throw new Error(`digest serve exited:\n${out}`);
      return out.includes('paper digest at');
    }, 60_000);
    base = `http://127.0.0.1:${port}`;
  }, 180_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    await smtp?.close();
    await s?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a hard-bounce DSN to the VERP address suppresses the PostgreSQL subscriber once; the same DSN again is a duplicate', async () => {
    const email = 's1@example.org';
    expect(verp.read(envelope[email]!)?.digestId).toBe(digest[email]);
    const raw = fixtureReport('postfix-hard-5.1.1.eml', { envelope: envelope[email]!, recipient: email });
    await deliverReport(bouncePort, raw, envelope[email]!);
    await waitUntil('the suppression', async () => (await status(email)) === 'suppressed');
    expect(await consent(email)).toEqual([{ kind: 'hard-bounce', status: 'suppressed' }]);
    expect(await events(email)).toEqual([{ kind: 'hard', outcome: 'suppressed', channel: 'smtp' }]);

    await deliverReport(bouncePort, raw, envelope[email]!);
    await waitUntil('the second report', async () => out.includes('"outcome":"duplicate"'));
    expect(await events(email)).toHaveLength(1);
    expect(await consent(email)).toHaveLength(1);
    expect(await status('s2@example.org')).toBe('confirmed');
  });

  it('refuses at RCPT a tag made for another row (its nonce differs), and nothing changes', async () => {
    const forged = verp.envelopeFor(digest['s3@example.org']!, 12345);
    const raw = fixtureReport('postfix-hard-5.1.1.eml', { envelope: forged, recipient: 's3@example.org' });
    await expect(deliverReport(bouncePort, raw, forged)).rejects.toThrow(/550|forged/);
    expect(await status('s3@example.org')).toBe('confirmed');
  });

  it('a complaint through the signed Mailgun webhook unsubscribes in PostgreSQL; the retried post is a duplicate, a replay is refused', async () => {
    const email = 's2@example.org';
    const timestamp = String(Math.floor(Date.now() / 1000));
    const token = `tok${Math.random().toString(16).slice(2)}`;
    const signature = createHmac('sha256', MAILGUN_KEY).update(timestamp + token).digest('hex');
    const eventData = { event: 'complained', recipient: email, envelope: { sender: envelope[email] } };
    const body = JSON.stringify({ signature: { timestamp, token, signature }, 'event-data': eventData });
    const post = (b: string) => fetch(`${base}/webhooks/mailgun`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: b });

    const first = await post(body);
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ ok: true, outcome: 'unsubscribed' });
    expect(await status(email)).toBe('unsubscribed');
    expect(await consent(email)).toEqual([{ kind: 'complaint', status: 'unsubscribed' }]);
    expect(await (await post(body)).json()).toEqual({ ok: true, outcome: 'duplicate' });

    // Same token and signature carrying another event (a captured signature reused): refused, nothing written.
    const other = { event: 'complained', recipient: 's4@example.org', envelope: { sender: envelope['s4@example.org'] } };
    const replay = await post(JSON.stringify({ signature: { timestamp, token, signature }, 'event-data': other }));
    expect(replay.status).toBe(401);
    expect(await status('s4@example.org')).toBe('confirmed');
    expect((await s.pool.query('SELECT 1 FROM mailgun_tokens WHERE token = $1', [token])).rowCount).toBe(1);
  });

  it("leaves serve's SQLite file untouched", () => {
    const db = new Database(sqliteFile, { readonly: true });
    try {
      const count = (table: string) => (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
      expect([count('subscribers'), count('digests'), count('bounce_events'), count('mailgun_tokens'), count('consent_events')]).toEqual([0, 0, 0, 0, 0]);
    } finally {
      db.close();
    }
  });

  it('keeps the rules on the adapter: soft bounces suppress at the limit, a policy block only alerts, an unknown digest changes nothing', async () => {
    const store = postgresBounceStore({
      pool: s.pool,
      clock: { now: () => new Date() },
      logger: createLogger('silent'),
      config: { SOFT_BOUNCES_TO_SUPPRESS: 2, SOFT_BOUNCE_WINDOW_DAYS: 7 },
    });
    const email = 's5@example.org';
    const extra = Number((await s.pool.query<{ id: string }>(SQL_SENT_DIGEST, [email, '2026-11-27', 7])).rows[0]!.id);
    expect(await taggedDigestIn(store, verp, verp.envelopeFor(extra, 7))).toEqual({ digestId: extra });
    const soft = (digestId: number) => store.record({ digestId, kind: 'soft', channel: 'ses', status: '4.2.2', detail: 'mailbox full' });
    expect(await soft(digest[email]!)).toBe('counted');
    expect(await status(email)).toBe('confirmed');
    expect(await soft(extra)).toBe('suppressed');
    expect(await consent(email)).toEqual([{ kind: 'hard-bounce', status: 'suppressed' }]);

    expect(await store.record({ digestId: digest['s6@example.org']!, kind: 'policy', channel: 'smtp', status: '5.7.1', detail: 'spamhaus' })).toBe('alerted');
    expect(await status('s6@example.org')).toBe('confirmed');
    expect(await consent('s6@example.org')).toEqual([]);
    expect(await store.record({ digestId: 999_999, kind: 'hard', channel: 'smtp', status: '5.1.1', detail: 'x' })).toBe('unknown-digest');
  });
});
