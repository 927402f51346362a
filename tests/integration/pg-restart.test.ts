// The database itself restarted mid-run (issue 39, story d). Opt-in (PG_RESTART_STORY=1) and never in the
// default suite: it restarts the machine's PostgreSQL cluster, which every other PostgreSQL test file
// running at the same time would feel. Run it alone:
//   PG_RESTART_STORY=1 npx vitest run tests/integration/pg-restart.test.ts
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migratePostgres } from '../../src/db/postgres/migrate.ts';
import { planEdition } from '../../src/ledger/postgres/plan.ts';
import { ensureBuilt } from '../helpers/build.ts';
import { startWorker } from '../helpers/pg-children.ts';
import { seedPlannedPapers, seedSubscribers } from '../helpers/pg-seed.ts';
import { postgresForTests, type TestSchema } from '../helpers/postgres.ts';
import { SmtpSink } from '../helpers/smtp-sink.ts';

const pg = await postgresForTests();
const RESTART = ['--skip-systemctl-redirect', process.env.PG_CLUSTER_VERSION ?? '15', process.env.PG_CLUSTER_NAME ?? 'main', 'restart'];

describe.skipIf(!pg.reachable || process.env.PG_RESTART_STORY !== '1')('PostgreSQL restarted mid-run', () => {
  let s: TestSchema;
  let sink: SmtpSink;
  beforeAll(async () => {
    ensureBuilt();
    sink = await SmtpSink.start();
    s = await pg.schema();
    await migratePostgres(s.pool);
    await seedSubscribers(s.pool, 3000);
    await planEdition(s.pool, { edition: '2026-11-27', toPaper: 40 });
    await seedPlannedPapers(s.pool);
  });
  afterAll(async () => {
    await sink?.close();
    await s?.drop();
  });

  it('workers reconnect: every row sent once, none lost, none doubled', async () => {
    const workers = [0, 1].map(() => startWorker(s, sink.url, { WORKER_LANES: '5' }));
    await Promise.all(workers.map((w) => w.ready));
    await sink.waitForMessages(800, 20_000);
    execFileSync('pg_ctlcluster', RESTART, { stdio: 'pipe', timeout: 60_000 });
    const done = await Promise.all(workers.map((w) => w.done));
    expect(done.every((d) => d !== null)).toBe(true);
    const ids = sink.messages.map((m) => Number(/^Message-ID: <digest-(\d+)\./im.exec(m.raw.toString('latin1'))?.[1]));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBe(3000);
    const r = await s.pool.query(`SELECT status, count(*)::int AS n FROM digests GROUP BY status`);
    expect(r.rows).toEqual([{ status: 'sent', n: 3000 }]);
  });
});
