// Many processes, one edition, one PostgreSQL (issue 39): real worker processes delivering over real
// SMTP to a sink, each story on its own schema. What must hold: every row is sent exactly once, or is
// 'unknown' (only a killed worker's rows in flight), and the sink never gets a digest twice.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { recoverStale } from '../../src/ledger/postgres/liveness.ts';
import { migratePostgres } from '../../src/db/postgres/migrate.ts';
import { planEdition } from '../../src/ledger/postgres/plan.ts';
import { applicationName } from '../../src/db/postgres/pool.ts';
import { ensureBuilt } from '../helpers/build.ts';
import { startPlanner, startWorker } from '../helpers/pg-children.ts';
import { seedPlannedPapers, seedSubscribers, SQL_WATERMARKS } from '../helpers/pg-seed.ts';
import { postgresForTests, type TestSchema } from '../helpers/postgres.ts';
import { accept, SmtpSink } from '../helpers/smtp-sink.ts';

const pg = await postgresForTests();
const LANES = 5;
// The sending stories' time: every digest is rendered (pg-digests.ts), a few ms each on a loaded 2-core machine.
// So the editions are as small as the stories allow: each checks that its event landed mid-run (the killed
// worker exited by the signal, backends were there to terminate), so a smaller edition cannot pass vacuously.
/** The kill -9 story's edition, and its kill at a random point in the first 10-60% of it (as with 3,000 before). */
const KILL_ROWS = 1200;
/** The lost-connections story's edition: terminated at 20% and 50% of it (as at 600 and 1,500 of 3,000 before). */
const LOST_ROWS = 1500;

/** Messages per digest id at the sink. */
function perDigest(sink: SmtpSink): Map<number, number> {
  const counts = new Map<number, number>();
  for (const m of sink.messages) {
    const id = Number(/^Message-ID: <digest-(\d+)\./im.exec(m.raw.toString('latin1'))?.[1]);
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

async function statuses(s: TestSchema): Promise<Array<{ id: number; status: string; claimed_by: string; subscriber_id: number; to_paper: number }>> {
  return (await s.pool.query('SELECT id, status, claimed_by, subscriber_id, to_paper FROM digests ORDER BY id')).rows;
}

describe.skipIf(!pg.reachable)('PostgreSQL: many worker processes on one edition', () => {
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

  async function edition(n: number): Promise<void> {
    s = await pg.schema();
    await migratePostgres(s.pool);
    await seedSubscribers(s.pool, n);
    await planEdition(s.pool, { edition: '2026-11-27', toPaper: 40 });
    await seedPlannedPapers(s.pool);
  }

  it('three workers, one killed with SIGKILL at a random point: each row sent once or unknown, 0 duplicates', async () => {
    await edition(KILL_ROWS);
    const workers = [0, 1, 2].map(() => startWorker(s, sink.url, { WORKER_LANES: String(LANES) }));
    const claimants = await Promise.all(workers.map((w) => w.ready));
    const killAt = KILL_ROWS / 10 + Math.floor(Math.random() * KILL_ROWS / 2);
    await sink.waitForMessages(killAt, 90_000);
    workers[1]!.child.kill('SIGKILL');
    const [a, killed, c] = await Promise.all(workers.map((w) => w.done));
    expect(killed).toBeNull();
    // The next worker to start (or `digest worker` on another machine) finds the dead claimant's rows.
    const recovered = await recoverStale(s.pool);
    const rows = await statuses(s);
    const atSink = perDigest(sink);
    expect([...atSink.values()].filter((n) => n > 1)).toEqual([]);
    const unknown = rows.filter((r) => r.status === 'unknown');
    expect(rows.filter((r) => r.status !== 'sent' && r.status !== 'unknown')).toEqual([]);
    expect(unknown.every((r) => r.claimed_by === claimants[1])).toBe(true);
    expect(unknown.length).toBeLessThanOrEqual(2 * LANES);
    expect(recovered.sort((x, y) => x - y)).toEqual(unknown.map((r) => r.id));
    for (const r of rows.filter((x) => x.status === 'sent')) expect(atSink.get(r.id)).toBe(1);
    expect(sink.messages.length).toBeGreaterThanOrEqual(KILL_ROWS - unknown.length);
    expect((a!.sent as number) + (c!.sent as number)).toBeGreaterThan(0);
    // Watermarks moved for sent rows only: an unknown row's papers ride in the next digest.
    const w = await s.pool.query(`SELECT id, watermark FROM ${SQL_WATERMARKS} w WHERE id = ANY($1)`, [unknown.map((r) => r.subscriber_id)]);
    expect(w.rows.every((x) => x.watermark === 0)).toBe(true);
  }, 240_000);

  it('two planners at once plan each subscriber and slot once (with the slot lock, and with the unique key alone)', async () => {
    s = await pg.schema();
    await migratePostgres(s.pool);
    await seedSubscribers(s.pool, 20_000);
    for (const [edition, lock] of [['2026-11-27', '1'], ['2026-11-28', '0']] as const) {
      const planners = [0, 1].map(() => startPlanner(s, { EDITION: edition, TO_PAPER: '40', PLAN_LOCK: lock }));
      const results = await Promise.all(planners.map((p) => p.done));
      expect(results.reduce((n, r) => n + (r!.planned as number), 0)).toBe(20_000);
    }
    const r = await s.pool.query('SELECT edition, count(*)::int AS n, count(DISTINCT subscriber_id)::int AS d FROM digests GROUP BY edition ORDER BY edition');
    expect(r.rows).toEqual([
      { edition: '2026-11-27', n: 20_000, d: 20_000 },
      { edition: '2026-11-28', n: 20_000, d: 20_000 },
    ]);
  });

  it('a worker started mid-edition takes only rows nobody claimed', async () => {
    await edition(2000);
    sink.script = () => accept(2);
    const first = startWorker(s, sink.url, { WORKER_LANES: String(LANES) });
    await first.ready;
    await sink.waitForMessages(300, 90_000);
    const second = startWorker(s, sink.url, { WORKER_LANES: String(LANES) });
    const [a, b] = await Promise.all([first.done, second.done]);
    expect((a!.sent as number) + (b!.sent as number)).toBe(2000);
    expect(b!.sent as number).toBeGreaterThan(0);
    const atSink = perDigest(sink);
    expect(atSink.size).toBe(2000);
    expect([...atSink.values()].every((n) => n === 1)).toBe(true);
    expect((await statuses(s)).every((r) => r.status === 'sent')).toBe(true);
  }, 240_000);

  it("connections lost mid-run (every backend of the workers terminated, twice): nothing lost, nothing doubled", async () => {
    await edition(LOST_ROWS);
    const workers = [0, 1].map(() => startWorker(s, sink.url, { WORKER_LANES: String(LANES) }));
    await Promise.all(workers.map((w) => w.ready));
    for (const at of [LOST_ROWS / 5, LOST_ROWS / 2]) {
      await sink.waitForMessages(at, 90_000);
      const k = await s.pool.query('SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()', [
        applicationName(s.name),
      ]);
      expect(k.rows[0].n).toBeGreaterThan(0);
    }
    const done = await Promise.all(workers.map((w) => w.done));
    expect(done.every((d) => d !== null)).toBe(true);
    const atSink = perDigest(sink);
    expect(atSink.size).toBe(LOST_ROWS);
    expect([...atSink.values()].filter((n) => n > 1)).toEqual([]);
    expect((await statuses(s)).filter((r) => r.status !== 'sent')).toEqual([]);
  }, 240_000);
});
