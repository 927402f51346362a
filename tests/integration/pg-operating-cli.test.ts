// Operating a PostgreSQL deployment (DATABASE_URL=postgres://…) with the built CLI and the real `digest
// serve`: `digest sources` prints the same lines from either store, and the console's sources page shows
// PostgreSQL's days; POST /api/batches lands in PostgreSQL (a bad batch lands nothing); `digest preview`
// shows the papers the reader's next digest holds, as SQLite's does, writing nothing; `digest backup` then
// `digest restore` into a new schema gives the same row counts, and a worker after the restore sends
// nobody a second copy (neither what was sent before the backup nor what the lost database sent after it).
// The built CLI runs where the process boundary matters (a refused preview's exit code, backup's and
// restore's stdout, pg_dump and pg_restore beneath); the other calls run the same code in this process
// (runCli, Date shifted to the same instant), ~1 s cheaper each.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { copySqliteToPostgres } from '../../src/db/postgres/copy.ts';
import { ingestBatch } from '../../src/ingest/ingest.ts';
import { ingestBatchPg } from '../../src/ingest/postgres/ingest.ts';
import { adminHash, consoleCookie } from '../helpers/admin-setup.ts';
import { ensureBuilt } from '../helpers/build.ts';
import { digestInProcess } from '../helpers/cli-in-process.ts';
import { addSubscribers, BATCH_DAY_1, fixtureBatch } from '../helpers/pg-edition.ts';
import { childDir, digestAt, startServe } from '../helpers/pg-story.ts';
import { freePort } from '../helpers/ports.ts';
import { postgresForTests, type TestSchema } from '../helpers/postgres.ts';
import { tempDatabase, type TempDb } from '../helpers/seed.ts';
import { SmtpSink } from '../helpers/smtp-sink.ts';

const pg = await postgresForTests();
const AT = '2025-11-26T07:30:00Z';
const TOKEN = 'api-token-0123456789abcdef';
const SECRET = 'k'.repeat(64);
const READERS = [
  { email: 'rl@example.org', deliveryHour: 7, topics: ['reinforcement learning'] },
  { email: 'agents@example.org', deliveryHour: 7, topics: ['agent*'] },
  // Due an hour after the backup: the lost database sent it; the dump has no row for it.
  { email: 'later@example.org', deliveryHour: 8, topics: ['"GUI"'] },
];
const TITLES = fixtureBatch(BATCH_DAY_1).papers.map((p) => p.title);
const titlesIn = (text: string) => TITLES.filter((t) => text.includes(t)).sort();

const SOURCE_DAYS = [
  ['hf', '2025-11-24', 'ingested', 1, null, '2025-11-24T06:00:00.000Z'],
  ['hf', '2025-11-25', 'error', 3, 'HTTP 503 from huggingface.co after 3 tries', '2025-11-25T06:10:00.000Z'],
  ['hf', '2025-11-23', 'empty', 2, null, '2025-11-23T06:00:00.000Z'],
  // A day with nothing yet, after the last one ingested: not the last day.
  ['hf', '2025-11-26', 'empty', 1, null, '2025-11-26T06:00:00.000Z'],
] as const;

describe.skipIf(!pg.reachable)('operating a PostgreSQL deployment from the CLI', () => {
  let s: TestSchema;
  let t: TempDb;
  let sink: SmtpSink;
  let dir: { cwd: string; cleanup(): void };
  let files: string;
  const clock = new ManualClock(AT);

  beforeAll(async () => {
    ensureBuilt();
    sink = await SmtpSink.start();
    dir = childDir();
    files = mkdtempSync(join(tmpdir(), 'pg-backup-'));
    s = await pg.schema();
    t = tempDatabase('pg-operating-');
    addSubscribers(t.db, READERS);
    expect((await copySqliteToPostgres(t.db, s.pool)).ok).toBe(true);
    // The same source days in both stores.
    const insert = t.db.prepare('INSERT INTO source_days (source, day, status, attempts, last_error, fetched_at) VALUES (?, ?, ?, ?, ?, ?)');
    for (const d of SOURCE_DAYS) {
      insert.run(...d);
      await s.pool.query('INSERT INTO source_days (source, day, status, attempts, last_error, fetched_at) VALUES ($1, $2, $3, $4, $5, $6)', [...d]);
    }
  }, 120_000);
  afterAll(async () => {
    await sink?.close();
    t?.cleanup();
    dir?.cleanup();
    if (files) rmSync(files, { recursive: true, force: true });
    await s?.drop();
  });

  const onPostgres = (schema = s.name) => ({ DATABASE_URL: s.url, DATABASE_SCHEMA: schema, SECRET_KEY: SECRET, SMTP_URL: sink.url, DIGEST_TZ: 'UTC' });
  const onSqlite = () => ({ DATABASE_PATH: t.path, SECRET_KEY: SECRET, SMTP_URL: sink.url, DIGEST_TZ: 'UTC' });
  const here = (at: string, args: string[], env: Record<string, string>) => digestInProcess(args, env, { at });
  const count = async (table: string, schema = s.name) => (await s.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${schema}.${table}`)).rows[0]!.n;

  it('digest sources prints the same lines from PostgreSQL as from SQLite; the console shows PostgreSQL\'s days', async () => {
    const sources = { SOURCES: 'hf,arxiv:cs.LG' };
    const [fromPg, fromSqlite] = await Promise.all([here(AT, ['sources'], { ...onPostgres(), ...sources }), here(AT, ['sources'], { ...onSqlite(), ...sources })]);
    expect(fromPg.stderr).toBe('');
    expect(fromPg.code).toBe(0);
    expect(fromPg.stdout.trim().split('\n')).toEqual([
      'hf\tlast day 2025-11-24\tlast error 2025-11-25: HTTP 503 from huggingface.co after 3 tries',
      'arxiv:cs.LG\tlast day -\tno errors',
    ]);
    expect(fromPg.stdout).toBe(fromSqlite.stdout);

    const serve = await startServe(AT, { ...onPostgres(), ...sources, ADMIN_PASSWORD_HASH: await adminHash(), MAIL_CATCHER_PORT: String(await freePort()) }, dir.cwd);
    try {
      const page = await (await fetch(`${serve.base}/admin/sources`, { headers: { cookie: await consoleCookie(serve.base) } })).text();
      expect(page).toContain('Last day fetched: 2025-11-24. Last error (2025-11-25): HTTP 503 from huggingface.co after 3 tries');
      // The days, newest first.
      const days = [...page.matchAll(/<td class="nw">(\d{4}-\d\d-\d\d)<\/td><td>(\w+)<\/td><td>(\d+)<\/td>/g)].map((m) => `${m[1]} ${m[2]} ${m[3]}`);
      expect(days).toEqual(['2025-11-26 empty 1', '2025-11-25 error 3', '2025-11-24 ingested 1', '2025-11-23 empty 2']);
    } finally {
      await serve.stop();
    }
  }, 120_000);

  it('POST /api/batches stores the batch in PostgreSQL; a batch with a bad paper stores nothing', async () => {
    const serve = await startServe(AT, { ...onPostgres(), API_TOKEN: TOKEN, MAIL_CATCHER_PORT: String(await freePort()) }, dir.cwd);
    const post = (body: string) =>
      fetch(`${serve.base}/api/batches`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` }, body });
    try {
      const good = readFileSync(BATCH_DAY_1, 'utf8');
      const bad = JSON.parse(good) as { date: string; papers: Array<Record<string, unknown>> };
      bad.date = '2025-11-27';
      bad.papers[3] = { ...bad.papers[3], title: '' };
      const refused = await post(JSON.stringify(bad));
      expect(refused.status).toBe(400);
      expect(await count('papers')).toBe(0);
      expect(await count('batches')).toBe(0);

      const stored = await post(good);
      expect(stored.status).toBe(201);
      expect(await stored.json()).toMatchObject({ ok: true, source: 'hf-daily', date: '2025-11-25', duplicate: false, newPapers: TITLES.length });
      expect(await count('papers')).toBe(TITLES.length);
      const again = await post(good);
      expect(again.status).toBe(200);
      expect(await again.json()).toMatchObject({ duplicate: true, newPapers: 0 });
      // Nothing went to the SQLite file beside it.
      expect((t.db.prepare('SELECT count(*) AS n FROM papers').get() as { n: number }).n).toBe(0);
    } finally {
      await serve.stop();
    }
  }, 120_000);

  it('digest preview <email> shows the papers the next digest holds, as on SQLite, and writes nothing', async () => {
    if ((await count('papers')) === 0) await ingestBatchPg(s.pool, fixtureBatch(BATCH_DAY_1), clock);
    ingestBatch(t.db, fixtureBatch(BATCH_DAY_1), clock);
    for (const r of READERS) {
      const [fromPg, fromSqlite] = await Promise.all([here(AT, ['preview', r.email], onPostgres()), here(AT, ['preview', r.email], onSqlite())]);
      expect(fromPg.stderr).toBe('');
      expect(fromPg.code).toBe(0);
      expect(fromPg.stdout).toMatch(/^Subject: /);
      expect(titlesIn(fromPg.stdout).length).toBeGreaterThan(0);
      expect(titlesIn(fromPg.stdout)).toEqual(titlesIn(fromSqlite.stdout));
    }
    const missing = await digestAt(AT, ['preview', 'nobody@example.org'], onPostgres(), dir.cwd);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no subscriber with address nobody@example.org/);
    expect(await count('digests')).toBe(0);
    expect((await s.pool.query('SELECT max(watermark) AS w FROM subscribers')).rows[0].w).toBe(0);
    expect(sink.messages).toHaveLength(0);
  }, 120_000);

  it('digest backup then digest restore into a new schema: the same row counts; a worker after it sends nobody a second copy', async () => {
    const plan = (at: string, schema?: string) => here(at, ['plan'], onPostgres(schema));
    const worker = (at: string, schema?: string) => here(at, ['worker', '--once'], onPostgres(schema));
    if ((await count('papers')) === 0) await ingestBatchPg(s.pool, fixtureBatch(BATCH_DAY_1), clock);
    for (const step of [plan, worker]) expect((await step(AT)).code).toBe(0);
    expect(sink.messages.flatMap((m) => m.to).sort()).toEqual(['agents@example.org', 'rl@example.org']);

    const file = join(files, 'digest.dump');
    const backup = await digestAt('2025-11-26T07:45:00Z', ['backup', file], onPostgres(), dir.cwd);
    expect(backup.stderr).toBe('');
    expect(backup.code).toBe(0);
    const live = { subscribers: await count('subscribers'), digests: await count('digests'), papers: await count('papers') };
    expect(live).toEqual({ subscribers: 3, digests: 2, papers: TITLES.length });
    const counts = `3 subscribers, 2 digests, ${TITLES.length} papers, 0 bounce reports, 0 opt-out events`;
    expect(backup.stdout).toMatch(new RegExp(`^backup ${file}: [\\d.]+ MB dumped \\(pg_dump -Fc of schema ${s.name}\\) in \\d+ ms, checked in \\d+ ms: pg_restore --list ok \\(\\d+ entries\\), migration \\d+; ${counts}\\n$`));
    expect(statSync(file).size).toBeGreaterThan(0);
    const size = statSync(file).size;
    const twice = await here('2025-11-26T07:46:00Z', ['backup', file], onPostgres());
    expect(twice.code).toBe(1);
    expect(twice.stderr).toMatch(/exists already: choose a new name \(or pass --force to replace it\)/);
    expect(statSync(file).size).toBe(size);

    // After the dump the database went on: the third reader's digest went out at 08:00. Then it is lost.
    for (const step of [plan, worker]) expect((await step('2025-11-26T08:10:00Z')).code).toBe(0);
    expect(sink.messages.flatMap((m) => m.to).sort()).toEqual(['agents@example.org', 'later@example.org', 'rl@example.org']);
    const target = await pg.schema();
    try {
      const lost = s.name;
      await s.pool.query(`DROP SCHEMA ${lost} CASCADE`);

      const restore = await digestAt('2025-11-26T08:30:00Z', ['restore', file], onPostgres(target.name), dir.cwd);
      expect(restore.stderr).toBe('');
      expect(restore.code).toBe(0);
      expect(restore.stdout).toMatch(new RegExp(`^restored ${file} into schema ${target.name} \\(dumped from schema ${lost}\\) in \\d+ ms: ${counts}\\n`));
      // The third reader's slot, which the dump has no row for, is planned and marked unknown: never sent again.
      expect(restore.stdout).toMatch(/^1 digests not recorded as sent in the restored database may have gone out since \(1 of them current slots the dump had no row for, planned now\)/m);
      const restored = async (table: string) => (await target.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]!.n;
      expect({ subscribers: await restored('subscribers'), papers: await restored('papers') }).toEqual({ subscribers: 3, papers: TITLES.length });

      for (const step of [plan, worker]) expect((await step('2025-11-26T08:40:00Z', target.name)).code).toBe(0);
      expect(sink.messages).toHaveLength(3);
      const statuses = (await target.pool.query(`SELECT s.email, d.status FROM digests d JOIN subscribers s ON s.id = d.subscriber_id ORDER BY s.email`)).rows;
      expect(statuses).toEqual([
        { email: 'agents@example.org', status: 'sent' },
        { email: 'later@example.org', status: 'unknown' },
        { email: 'rl@example.org', status: 'sent' },
      ]);

      // A schema that holds tables is never restored over.
      const over = await here('2025-11-26T08:50:00Z', ['restore', file], onPostgres(target.name));
      expect(over.code).toBe(1);
      expect(over.stderr).toMatch(new RegExp(`schema ${target.name} holds \\d+ tables and sequences: restore into an empty schema`));
      expect(await restored('digests')).toBe(3);
    } finally {
      await target.drop();
    }
  }, 240_000);
});
