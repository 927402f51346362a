// `digest recover --after-restore` on PostgreSQL settles a restored dump as `digest restore` does on SQLite:
// yesterday's rows the dump holds as planned may have gone out, and so may today's slot, which the lost
// database planned and sent after the dump was taken. Both become `unknown` (today's planned first), so the
// next `digest plan` and `digest worker` send nobody today's edition a second time; the papers ride in the
// next digest. Built CLI, real SMTP sink, the real clock (readers' hour 0: due whatever the time of day).
// The plan and worker after the recovery run the same code in this process (runCli), ~1 s cheaper each.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { copySqliteToPostgres } from '../../src/db/postgres/copy.ts';
import { ingestBatchPg } from '../../src/ingest/postgres/ingest.ts';
import { matchPendingPg } from '../../src/match/postgres/match.ts';
import { planDigestsPg } from '../../src/plan/postgres/plan.ts';
import { ensureBuilt } from '../helpers/build.ts';
import { digestInProcess } from '../helpers/cli-in-process.ts';
import { startDigest } from '../helpers/digest-cli.ts';
import { addSubscribers, BATCH_DAY_1, BATCH_DAY_2, fixtureBatch, postgresRows } from '../helpers/pg-edition.ts';
import { postgresForTests, type TestSchema } from '../helpers/postgres.ts';
import { tempDatabase, type TempDb } from '../helpers/seed.ts';
import { SmtpSink } from '../helpers/smtp-sink.ts';

const pg = await postgresForTests();
const DAY = 86_400_000;
const READERS = ['rl@example.org', 'agents@example.org'];

describe.skipIf(!pg.reachable)('digest recover --after-restore on PostgreSQL', () => {
  let s: TestSchema;
  let t: TempDb;
  let sink: SmtpSink;
  beforeAll(async () => {
    ensureBuilt();
    sink = await SmtpSink.start();
    s = await pg.schema();
    t = tempDatabase('pg-after-restore-');
    addSubscribers(t.db, [
      { email: READERS[0]!, deliveryHour: 0, topics: ['reinforcement learning'] },
      { email: READERS[1]!, deliveryHour: 0, topics: ['agent*'] },
    ]);
    expect((await copySqliteToPostgres(t.db, s.pool)).ok).toBe(true);
  }, 120_000);
  afterAll(async () => {
    await sink?.close();
    t?.cleanup();
    await s?.drop();
  });

  const env = () => ({ DATABASE_URL: s.url, DATABASE_SCHEMA: s.name, SMTP_URL: sink.url });
  const rows = async () =>
    (
      await s.pool.query<{ subscriber_id: number; email: string; edition: string; status: string; paper_count: number }>(
        `SELECT d.subscriber_id, s.email, d.edition, d.status, d.paper_count FROM digests d JOIN subscribers s ON s.id = d.subscriber_id ORDER BY d.edition, s.email`,
      )
    ).rows;

  it("plans the slots the dump has no row for, marks them and the open rows unknown: nobody gets today's edition again", async () => {
    const now = Date.now();
    const yesterday = new ManualClock(new Date(Math.floor(now / DAY) * DAY - DAY + 12 * 3_600_000).toISOString());
    // What the dump holds: yesterday's papers and digests, the first reader's recorded as sent, the
    // second's still planned (it may have gone out after the dump)...
    await ingestBatchPg(s.pool, fixtureBatch(BATCH_DAY_1), yesterday);
    await matchPendingPg(s.pool);
    expect((await planDigestsPg(s.pool, { clock: yesterday, mode: 'due' })).planned).toBe(2);
    for (const sql of SQL_DELIVER_ONE) await s.pool.query(sql, [READERS[0]]);
    // ...and today's papers, which the lost database went on to plan and send to both after the dump.
    await ingestBatchPg(s.pool, fixtureBatch(BATCH_DAY_2), yesterday);

    const r = startDigest(['recover', '--after-restore'], env(), 'pg-after-restore-');
    expect(await r.code, r.err()).toBe(0);
    // Planned now: the first reader's today; the second's slot runs without a row (their open row holds its papers).
    expect(r.out()).toMatch(/^2 digests not recorded as sent in the restored database may have gone out since \(1 of them current slots the dump had no row for, planned now\): marked unknown/m);
    const settled = await rows();
    expect(settled.map((x) => `${x.email} ${x.edition === settled[0]!.edition ? 'yesterday' : 'today'} ${x.status}`).sort()).toEqual([
      `${READERS[1]} yesterday unknown`,
      `${READERS[0]} today unknown`,
      `${READERS[0]} yesterday sent`,
    ]);

    // The next planner finds today's slots run; the workers have nothing to send.
    const plan = await digestInProcess(['plan'], env());
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toMatch(/planned 0 /);
    const worker = await digestInProcess(['worker', '--once'], env());
    expect(worker.code, worker.stderr).toBe(0);
    expect(sink.messages).toHaveLength(0);

    // Tomorrow's digest carries every paper of the unknown ones (the watermark did not move past them).
    const tomorrow = new ManualClock(new Date(now + DAY).toISOString());
    expect((await planDigestsPg(s.pool, { clock: tomorrow, mode: 'now' })).planned).toBe(2);
    const nextEdition = (await rows()).find((x) => x.status === 'planned')!.edition;
    const next = await postgresRows(s.pool, nextEdition);
    const unknown = settled.filter((x) => x.status === 'unknown');
    const unknownRows = (await Promise.all([...new Set(unknown.map((x) => x.edition))].map((e) => postgresRows(s.pool, e))))
      .flat()
      .filter((row) => unknown.some((u) => u.subscriber_id === row.subscriber && u.edition === row.edition));
    expect(unknownRows).toHaveLength(2);
    const byReader = new Map(next.map((n) => [n.subscriber, new Set(n.papers.map((p) => p.paperId))]));
    for (const row of unknownRows) {
      expect(row.papers.length).toBeGreaterThan(0);
      expect(row.papers.filter((p) => !byReader.get(row.subscriber)?.has(p.paperId))).toEqual([]);
    }
  }, 180_000);
});

/** What a delivery records for one address on PostgreSQL (ledger/postgres/ledger-sql.ts): its planned row sent, nothing else (migration 020). */
const SQL_DELIVER_ONE = [
  `UPDATE digests SET status = 'sent' WHERE status = 'planned' AND subscriber_id = (SELECT id FROM subscribers WHERE email = $1)`,
];
