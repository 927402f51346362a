// The operator's decisions on a PostgreSQL deployment land where the senders look: the console's suppress
// (real server, login, CSRF) is seen by the next `digest worker` run (built CLI, real SMTP sink), which
// sends that reader nothing; and the built CLI's `import`, `subscribers`, `opt-outs`, `subscribe` and
// `unsuppress` act on PostgreSQL's rows (an import mails no one and never confirms an opted-out address).
// The worker runs as the built bin; the other commands run the same code in this process (runCli), ~1 s
// cheaper each.
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migratePostgres } from '../../src/db/postgres/migrate.ts';
import { planEdition } from '../../src/ledger/postgres/plan.ts';
import { openPostgresDoor, type PostgresDoorHandle } from '../../src/main.ts';
import { buildServer } from '../../src/web/server.ts';
import { adminHash, consoleLogin, consolePost } from '../helpers/admin-setup.ts';
import { ensureBuilt } from '../helpers/build.ts';
import { digestInProcess } from '../helpers/cli-in-process.ts';
import { startDigest } from '../helpers/digest-cli.ts';
import { seedPlannedPapers, seedSubscribers } from '../helpers/pg-seed.ts';
import { postgresForTests, type TestSchema } from '../helpers/postgres.ts';
import { SmtpSink } from '../helpers/smtp-sink.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

const pg = await postgresForTests();

describe.skipIf(!pg.reachable)("the operator's roster on PostgreSQL: console and built CLI", () => {
  let s: TestSchema;
  let sink: SmtpSink;
  let t: TestApp;
  let handle: PostgresDoorHandle;
  let web: FastifyInstance;
  let dir: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'pg-roster-cli-'));
    sink = await SmtpSink.start();
    s = await pg.schema();
    await migratePostgres(s.pool);
    await seedSubscribers(s.pool, 3);
    await planEdition(s.pool, { edition: '2026-11-27', toPaper: 40 });
    await seedPlannedPapers(s.pool);
    env = { DATABASE_URL: s.url, DATABASE_SCHEMA: s.name, SMTP_URL: sink.url, SECRET_KEY: 'pg-roster-cli-secret-0123456789abcdef' };
    t = await startTestApp({ ADMIN_PASSWORD_HASH: await adminHash(), DATABASE_URL: s.url, DATABASE_SCHEMA: s.name });
    handle = (await openPostgresDoor(t.app))!;
    web = buildServer({ ...t.app, door: handle.served, roster: handle.roster });
    await web.listen({ port: 0, host: '127.0.0.1' });
  }, 120_000);
  afterAll(async () => {
    await web?.close();
    await handle?.close();
    await t?.close();
    await sink?.close();
    await s?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  const base = () => {
    const a = web.server.address();
    return { base: `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}` };
  };
  const digest = async (...args: string[]) => {
    const run = startDigest(args, env, 'pg-roster-cli-');
    const code = await run.code;
    return { code, out: run.out(), err: run.err() };
  };
  const here = async (...args: string[]) => {
    const r = await digestInProcess(args, env);
    return { code: r.code, out: r.stdout, err: r.stderr };
  };
  const row = async (email: string) =>
    (await s.pool.query<{ id: number; status: string }>('SELECT id, status FROM subscribers WHERE lower(email) = lower($1)', [email])).rows[0];
  const history = async (email: string) =>
    (await s.pool.query<{ kind: string; detail: string }>('SELECT kind, detail FROM consent_events WHERE lower(email) = lower($1) ORDER BY id', [email])).rows;

  it("the console's suppress: the next `digest worker` run sends that reader nothing", async () => {
    const session = (await consoleLogin(base())).session!;
    const s2 = (await row('s2@example.org'))!;
    const res = await consolePost(base(), session, `/admin/subscribers/${s2.id}/suppress`, {});
    expect(res.status).toBe(303);
    expect((await row('s2@example.org'))!.status).toBe('suppressed');

    const run = await digest('worker', '--once');
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/^sent 2, retry 0, failed 0, unknown 0, not confirmed 1, given back 0$/m);
    expect(sink.messages.flatMap((m) => m.to).sort()).toEqual(['s1@example.org', 's3@example.org']);
    const digests = await s.pool.query<{ email: string; status: string }>('SELECT s.email, d.status FROM digests d JOIN subscribers s ON s.id = d.subscriber_id ORDER BY s.id');
    expect(digests.rows).toEqual([
      { email: 's1@example.org', status: 'sent' },
      { email: 's2@example.org', status: 'suppressed' },
      { email: 's3@example.org', status: 'sent' },
    ]);
  }, 120_000);

  it('digest import on PostgreSQL mails no one and never confirms an address with an opt-out', async () => {
    await s.pool.query(`INSERT INTO consent_events (email, kind, status, detail, at) VALUES ('angry@example.org', 'complaint', 'unsubscribed', 'feedback loop', '2026-11-20T10:00:00.000Z')`);
    const file = join(dir, 'list.csv');
    writeFileSync(file, 'email,topics,confirmed\nnew@example.org,graph networks,yes\ns2@example.org,graph networks,yes\nangry@example.org,diffusion,yes\n');
    const sent = sink.messages.length;
    const r = await here('import', file);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out.split('\n').filter(Boolean)).toEqual([
      `imported 2 subscribers (1 new, 1 updated) from ${file}`,
      expect.stringMatching(new RegExp(`^${file} line 3: s2@example\\.org: opted out \\(operator on \\d{4}-\\d\\d-\\d\\d\\): not confirmed$`)),
      `${file} line 4: angry@example.org: opted out (complaint on 2026-11-20): not confirmed`,
    ]);
    expect((await row('new@example.org'))!.status).toBe('confirmed');
    expect((await row('s2@example.org'))!.status).toBe('suppressed');
    expect(await row('angry@example.org')).toBeUndefined();
    expect(sink.messages.length).toBe(sent);
  }, 60_000);

  it('digest subscribers and opt-outs read PostgreSQL; subscribe --confirmed of an opted-out address is refused; unsuppress needs its reason and writes it', async () => {
    const list = await here('subscribers');
    expect(list.code).toBe(0);
    expect(list.out).toMatch(/^s2@example\.org\tsuppressed\t/m);
    expect(list.out).toMatch(/^new@example\.org\tconfirmed\tdaily .*\tgraph networks$/m);

    const optOuts = await here('opt-outs');
    expect(optOuts.code).toBe(0);
    expect(optOuts.out).toMatch(/^angry@example\.org\tcomplaint\t2026-11-20T10:00:00\.000Z\tunsubscribed \(deleted\)\tfeedback loop$/m);
    expect(optOuts.out).toMatch(/^s2@example\.org\toperator\t.*\tsuppressed\tsuppressed from the console$/m);

    const refused = await here('subscribe', 's2@example.org', '--topic', 'graphs', '--confirmed');
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/^error: s2@example\.org opted out \(operator on .*\): the operator never confirms it this way; lift it with a reason first$/m);
    expect((await row('s2@example.org'))!.status).toBe('suppressed');

    const noReason = await here('unsuppress', 's2@example.org', '--reason', ' ');
    expect(noReason.code).toBe(1);
    expect(await history('s2@example.org')).toEqual([{ kind: 'operator', detail: 'suppressed from the console' }]);
    const lifted = await here('unsuppress', 's2@example.org', '--reason', 'asked by email to come back');
    expect(lifted.code).toBe(0);
    expect(lifted.out).toMatch(/^s2@example\.org: lifted operator of \d{4}-\d\d-\d\d; now confirmed$/m);
    expect(await history('s2@example.org')).toEqual([
      { kind: 'operator', detail: 'suppressed from the console' },
      { kind: 'lifted', detail: 'asked by email to come back' },
    ]);

    const added = await here('subscribe', 'brand@example.org', '--topic', 'graphs', '--confirmed');
    expect(added.code).toBe(0);
    expect(added.out).toBe('brand@example.org: confirmed\n');
    expect((await row('brand@example.org'))!.status).toBe('confirmed');
  }, 120_000);
});
