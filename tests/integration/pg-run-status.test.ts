// `digest run` and `digest status <email>` through the built CLI on PostgreSQL, beside the same readers on
// SQLite: one run delivers each due reader exactly one digest over real SMTP and prints SQLite's lines; a
// second run sends nothing; two runs at once never send a slot twice; a relay that is down is exit 1; the
// status lines and the preferences page's "why no email today" read the same on both engines.
// The built CLI runs where the process boundary matters (two `digest run` processes racing; `digest status`'s
// exit code and stderr); the other calls run the same code in this process (runCli), ~1 s cheaper each.
// (Skipped, said once, when PostgreSQL is unreachable.)
import type { FastifyInstance } from 'fastify';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import { copySqliteToPostgres } from '../../src/db/postgres/copy.ts';
import { Links } from '../../src/links.ts';
import { matchPendingPg } from '../../src/match/postgres/match.ts';
import { planDigestsPg } from '../../src/plan/postgres/plan.ts';
import { PLAN_LOCK_CLASS, SQL_TRY_PLAN_LOCK } from '../../src/plan/postgres/plan-sql.ts';
import { silentLogger } from '../../src/log.ts';
import { createApp, openPostgresDoor, type App } from '../../src/main.ts';
import { findSubscriberByEmail } from '../../src/subscribers/records/postgres.ts';
import { Tokens } from '../../src/tokens.ts';
import { buildServer } from '../../src/web/server.ts';
import { ensureBuilt } from '../helpers/build.ts';
import { digestInProcess } from '../helpers/cli-in-process.ts';
import { startDigest } from '../helpers/digest-cli.ts';
import { addSubscribers, BATCH_DAY_1, type EditionSubscriber } from '../helpers/pg-edition.ts';
import { postgresForTests, type TestSchema } from '../helpers/postgres.ts';
import { tempDatabase, type TempDb } from '../helpers/seed.ts';
import { SmtpSink } from '../helpers/smtp-sink.ts';

const pg = await postgresForTests();
const SECRET = 'pg-run-status-secret-0123456789abcdef';
const PUBLIC_URL = 'https://digest.example.org';
const BATCH = fileURLToPath(BATCH_DAY_1);

const READERS: EditionSubscriber[] = [
  { email: 'a@example.org', topics: ['reinforcement learning'] },
  { email: 'b@example.org', topics: ['agents', { text: 'web', muted: true }] },
  { email: 'c@example.org', topics: ['nothing-matches-this-xyzzy', 'nor-this-one-xyzzy'] },
  { email: 'm@example.org', topics: [{ text: 'agents', muted: true }] },
  { email: 'p@example.org', status: 'pending', topics: ['agents'] },
  { email: 'z@example.org', pausedUntil: '2099-01-01T00:00:00.000Z', topics: ['agents'] },
];
const DUE = ['a@example.org', 'b@example.org'];

async function digest(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string[]; err: string }> {
  const run = startDigest(args, env, 'pg-run-status-');
  const code = await run.code;
  return { code, out: run.out().split('\n').filter((l) => l !== ''), err: run.err() };
}

/** The same command and result shape as `digest`, run in this process. */
async function inProcess(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string[]; err: string }> {
  const r = await digestInProcess(args, env);
  return { code: r.code, out: r.stdout.split('\n').filter((l) => l !== ''), err: r.stderr };
}

/** The SQLite file with the readers, and a PostgreSQL schema with the same readers (copied: same ids and salts). */
async function bothEngines(readers: readonly EditionSubscriber[]): Promise<{ sqlite: TempDb; s: TestSchema }> {
  const sqlite = tempDatabase('pg-run-status-');
  addSubscribers(sqlite.db, readers);
  const s = await pg.schema();
  expect((await copySqliteToPostgres(sqlite.db, s.pool)).ok).toBe(true);
  return { sqlite, s };
}

describe.skipIf(!pg.reachable)('digest run and digest status <email> on PostgreSQL, beside SQLite', () => {
  let sqlite: TempDb;
  let s: TestSchema;
  let sinkSqlite: SmtpSink;
  let sinkPg: SmtpSink;
  let onSqlite: Record<string, string>;
  let onPg: Record<string, string>;

  beforeAll(async () => {
    ensureBuilt();
    ({ sqlite, s } = await bothEngines(READERS));
    sinkSqlite = await SmtpSink.start();
    sinkPg = await SmtpSink.start();
    const common = { SOURCES: '', SECRET_KEY: SECRET, PUBLIC_URL };
    onSqlite = { ...common, DATABASE_PATH: sqlite.path, SMTP_URL: sinkSqlite.url };
    onPg = { ...common, DATABASE_URL: s.url, DATABASE_SCHEMA: s.name, SMTP_URL: sinkPg.url };
    for (const env of [onSqlite, onPg]) expect((await inProcess(['ingest', BATCH], env)).code).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await sinkSqlite?.close();
    await sinkPg?.close();
    await s?.drop();
    sqlite?.cleanup();
  });

  it('one run delivers each due reader one digest, printing what SQLite prints; a second run sends nothing', async () => {
    const dry = await inProcess(['run', '--dry-run', '--no-fetch'], onPg);
    expect(dry).toMatchObject({ code: 0, out: ['dry run: 4 slots due, would plan 2 digests (nothing written, nothing sent)'] });
    expect((await s.pool.query('SELECT count(*)::int AS n FROM digests')).rows[0].n).toBe(0);
    expect((await s.pool.query('SELECT count(*)::int AS n FROM query_matches')).rows[0].n).toBe(0);

    const [lite, post] = await Promise.all([inProcess(['run', '--no-fetch'], onSqlite), inProcess(['run', '--no-fetch'], onPg)]);
    expect(post.err).toBe('');
    expect(lite.code).toBe(0);
    expect(post.code).toBe(0);
    expect(post.out).toEqual(['slots 4: planned 2, sent 2, skipped 0, failed 0']);
    expect(post.out).toEqual(lite.out);
    expect(Object.fromEntries(sinkPg.countsByAddress())).toEqual(Object.fromEntries(DUE.map((e) => [e, 1])));
    const subjects = async (sink: SmtpSink) => Promise.all(DUE.map(async (e) => (await sink.byAddress(e)[0]!.parse()).subject));
    expect(await subjects(sinkPg)).toEqual(await subjects(sinkSqlite));
    const rows = await s.pool.query(`SELECT status, count(*)::int AS n FROM digests GROUP BY status`);
    expect(rows.rows).toEqual([{ status: 'sent', n: 2 }]);

    const again = await inProcess(['run', '--no-fetch'], onPg);
    expect(again).toMatchObject({ code: 0, out: ['slots 0: planned 0, sent 0, skipped 0, failed 0'] });
    expect(sinkPg.messages).toHaveLength(2);
  }, 120_000);

  it("digest status <email>: each reader's lines equal SQLite's; an unknown address is named", async () => {
    for (const r of READERS) {
      const [lite, post] = await Promise.all([inProcess(['status', r.email], onSqlite), inProcess(['status', r.email], onPg)]);
      expect(post.err).toBe('');
      expect(post.code).toBe(0);
      expect(post.out, r.email).toEqual(lite.out);
    }
    const c = await inProcess(['status', 'c@example.org'], onPg);
    expect(c.out[0]).toMatch(/^c@example\.org\tconfirmed\tlast slot \d{4}-\d\d-\d\d\tnothing sent$/);
    expect(c.out[1]).toMatch(/^No email on .+: none of your 2 topics matched the 25 papers of /);
    const m = await inProcess(['status', 'm@example.org'], onPg);
    expect(m.out[1]).toMatch(/: all your topics are muted\.$/);
    const a = await inProcess(['status', 'a@example.org'], onPg);
    expect(a.out[1]).toMatch(/^Your digest of .+ listed \d+ papers? \(sent\)\.$/);

    // The built bin: its exit code and stderr.
    const unknown = await digest(['status', 'nobody@example.org'], onPg);
    expect(unknown.code).toBe(1);
    expect(unknown.err.trim()).toBe('error: no subscriber nobody@example.org');
  }, 180_000);

  it('the preferences page says the same "why no email today" on both engines', async () => {
    const links = new Links(PUBLIC_URL, new Tokens(SECRET), systemClock);
    const config = (env: Record<string, string>) => loadConfig({ ...env, LOG_LEVEL: 'silent' });
    const liteApp = await createApp(config(onSqlite), { logger: silentLogger });
    const empty = tempDatabase('pg-run-status-door-');
    const pgApp = await createApp(config({ ...onPg, DATABASE_PATH: empty.path }), { logger: silentLogger });
    const handle = (await openPostgresDoor(pgApp))!;
    const servers = [await listen(liteApp), await listen({ ...pgApp, door: handle.served })];
    try {
      for (const r of READERS) {
        const rec = (await findSubscriberByEmail(s.pool, r.email))!;
        const path = new URL(links.preferences(rec)).pathname;
        const [onLite, onPost] = await Promise.all(servers.map(async (w) => lastSlotText(await (await fetch(`${w.base}${path}`)).text())));
        expect(onPost, r.email).toBe(onLite);
        expect(onPost, r.email).not.toBe('');
      }
      const rec = (await findSubscriberByEmail(s.pool, 'c@example.org'))!;
      const page = await (await fetch(`${servers[1]!.base}${new URL(links.preferences(rec)).pathname}`)).text();
      expect(lastSlotText(page)).toMatch(/^No email on .+: none of your 2 topics matched the 25 papers of /);
    } finally {
      for (const w of servers) await w.web.close();
      await handle.close();
      await pgApp.close();
      await liteApp.close();
      empty.cleanup();
    }
  }, 60_000);
});

describe.skipIf(!pg.reachable)('digest run on PostgreSQL: at once, and with the relay down', () => {
  const readers: EditionSubscriber[] = ['r1', 'r2', 'r3', 'r4'].map((n) => ({ email: `${n}@example.org`, topics: ['agents'] }));

  it('two runs at once send each due reader exactly one digest', async () => {
    ensureBuilt();
    const { sqlite, s } = await bothEngines(readers);
    const sink = await SmtpSink.start();
    try {
      const env = { SOURCES: '', SECRET_KEY: SECRET, DATABASE_URL: s.url, DATABASE_SCHEMA: s.name, SMTP_URL: sink.url, SMTP_POOL_SIZE: '1' };
      expect((await inProcess(['ingest', BATCH], env)).code).toBe(0);
      const runs = await Promise.all([digest(['run', '--no-fetch'], env), digest(['run', '--no-fetch'], env)]);
      for (const r of runs) expect(r.code, r.err).toBe(0);
      const sent = runs.map((r) => Number(/ sent (\d+),/.exec(r.out.join('\n'))?.[1] ?? NaN));
      expect(sent[0]! + sent[1]!).toBe(4);
      expect(Object.fromEntries(sink.countsByAddress())).toEqual(Object.fromEntries(readers.map((r) => [r.email, 1])));
    } finally {
      await sink.close();
      await s.drop();
      sqlite.cleanup();
    }
  }, 90_000);

  it('a run that finds another process planning waits for it, then sends the edition that process planned', async () => {
    // Two runs started together: one plans while the other reaches the planning lock. The other must not
    // claim before the planner commits (it would find nothing, send nothing and exit, leaving the whole
    // edition to the planner: what made delivery-processes' 'two runs' hang once). Here the planner is
    // this test's transaction, holding the lock with the edition written and not committed.
    ensureBuilt();
    const { sqlite, s } = await bothEngines(readers);
    const sink = await SmtpSink.start();
    const planner = await s.pool.connect();
    try {
      const env = { SOURCES: '', SECRET_KEY: SECRET, DATABASE_URL: s.url, DATABASE_SCHEMA: s.name, SMTP_URL: sink.url, SMTP_POOL_SIZE: '2' };
      expect((await inProcess(['ingest', BATCH], env)).code).toBe(0);
      await matchPendingPg(s.pool);
      await planner.query('BEGIN');
      expect((await planner.query<{ ok: boolean }>(SQL_TRY_PLAN_LOCK)).rows[0]!.ok).toBe(true);
      expect((await planDigestsPg(planner, { clock: systemClock, mode: 'now', lock: false })).planned).toBe(4);

      const run = startDigest(['run', '--no-fetch'], env, 'pg-run-status-');
      let exited = false;
      void run.code.then(() => (exited = true));
      while (!(await waitsForPlanLock(s))) {
        if (exited) expect.fail(`the run did not wait for the planner holding the lock: exit ${await run.code}, it printed:\n${run.out()}${run.err()}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(sink.messages).toHaveLength(0);
      await planner.query('COMMIT');

      expect(await run.code, run.err()).toBe(0);
      expect(run.out()).toMatch(/planned 0, sent 4, skipped 0, failed 0/);
      expect(Object.fromEntries(sink.countsByAddress())).toEqual(Object.fromEntries(readers.map((r) => [r.email, 1])));
    } finally {
      await planner.query('ROLLBACK').catch(() => {});
      planner.release();
      await sink.close();
      await s.drop();
      sqlite.cleanup();
    }
  }, 90_000);

  it("a relay that does not answer: exit 1 naming it, the streak's digests back in retry due at once with their tries given back, as on SQLite; `digest status <email>` says planned or retry", async () => {
    ensureBuilt();
    const { sqlite, s } = await bothEngines(readers);
    const sink = await SmtpSink.start();
    const down = sink.url;
    await sink.close();
    try {
      const common = { SOURCES: '', SECRET_KEY: SECRET, SMTP_URL: down, SMTP_POOL_SIZE: '1', RELAY_DOWN_AFTER: '2' };
      const onPg = { ...common, DATABASE_URL: s.url, DATABASE_SCHEMA: s.name };
      const onSqlite = { ...common, DATABASE_PATH: sqlite.path };
      const runs = [];
      for (const env of [onSqlite, onPg]) {
        expect((await inProcess(['ingest', BATCH], env)).code).toBe(0);
        runs.push(await inProcess(['run', '--no-fetch'], env));
      }
      for (const r of runs) {
        expect(r.code).toBe(1);
        expect(r.out).toEqual(['slots 4: planned 4, sent 0, skipped 0, failed 0, 2 to retry later']);
        expect(r.err).toMatch(/^error: sending paused: relay down: 2 connection failures in a row/);
      }
      // A relay that is down never counts against a digest: the two tried are due again at once, no try used.
      const now = new Date().toISOString();
      const rowsSql = `SELECT status, attempts, (next_attempt_at IS NOT NULL AND next_attempt_at <= '${now}') AS due, count(*) AS n
        FROM digests GROUP BY status, attempts, due ORDER BY status`;
      const expected = [
        { status: 'planned', attempts: 0, due: false, n: 2 },
        { status: 'retry', attempts: 0, due: true, n: 2 },
      ];
      const onSqliteRows = (sqlite.db.prepare(rowsSql).all() as Array<Record<string, unknown>>).map((r) => ({ ...r, due: r.due === 1 }));
      expect(onSqliteRows).toEqual(expected);
      expect((await s.pool.query(rowsSql.replace('count(*)', 'count(*)::int'))).rows).toEqual(expected);
      // `digest status <email>` names each reader's email as the ledger holds it, never "sent" for one that waits.
      for (const env of [onSqlite, onPg]) {
        const states = [];
        for (const r of readers) states.push((await inProcess(['status', r.email], env)).out[0]!.split('\t')[3]);
        expect(states.sort()).toEqual(['planned', 'planned', 'retry', 'retry']);
      }
    } finally {
      await s.drop();
      sqlite.cleanup();
    }
  }, 90_000);
});

/** A session of this schema waits for its planning lock (plan-sql.ts SQL_TRY_PLAN_LOCK's two keys, the second as an oid). */
async function waitsForPlanLock(s: TestSchema): Promise<boolean> {
  const r = await s.pool.query(
    `SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objsubid = 2
       AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
       AND classid::bigint = $1 AND objid::bigint = (hashtext(current_schema())::bigint & 4294967295)`,
    [PLAN_LOCK_CLASS],
  );
  return (r.rowCount ?? 0) > 0;
}

async function listen(app: App): Promise<{ web: FastifyInstance; base: string }> {
  const web = buildServer(app);
  await web.listen({ port: 0, host: '127.0.0.1' });
  const a = web.server.address();
  return { web, base: `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}` };
}

/** The page's "Your last delivery:" sentence, or '' when it shows none. */
function lastSlotText(html: string): string {
  const m = /<p class="hint" id="last-slot" role="status"><strong>Your last delivery:<\/strong> ([^<]*)<\/p>/.exec(html);
  return m ? m[1]!.trim() : '';
}
