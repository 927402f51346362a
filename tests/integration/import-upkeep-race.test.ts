// `digest import` against the upkeep's removal of unused queries, interleaved explicitly at the import's
// own seams (no timing): an import saves a topic's query before the topic that names it, and the upkeep
// removes a query no topic names. On PostgreSQL the import commits a chunk's new queries alone, then writes
// the chunk: the upkeep run on another connection in between removed them, and the chunk's topics named
// queries that were gone (a foreign key error stopped the import). On both engines a later chunk reused the
// id an earlier chunk saved, after that chunk's reader left the topic and the upkeep removed it. And a
// removal in flight (the upkeep's delete not committed when the chunk reaches the row) ended the same way
// once it committed. Each time the import now saves the query again and every reader gets their topic.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { openDatabase, type Db } from '../../src/db/open.ts';
import { migratePostgres } from '../../src/db/postgres/migrate.ts';
import { silentLogger } from '../../src/log.ts';
import { removeUnusedQueries } from '../../src/match/matcher.ts';
import { parseTopic } from '../../src/match/parse.ts';
import { importCsvPg } from '../../src/operator/postgres/import.ts';
import { upkeepPg } from '../../src/plan/postgres/upkeep.ts';
import { importSubscribersCsv } from '../../src/subscribers/import.ts';
import { ensureQueries } from '../../src/subscribers/records/postgres.ts';
import { postgresForTests, type TestSchema } from '../helpers/postgres.ts';

const postgres = await postgresForTests();
const clock = new ManualClock('2025-11-25T08:00:00Z');
const config = { DIGEST_TZ: 'Europe/Paris', DIGEST_HOUR: 7 };
const TOPIC = 'graph networks';
/** PostgreSQL's import writes 500 rows a transaction (operator/postgres/import.ts ROWS_PER_CHUNK). */
const PG_CHUNK = 500;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'digest-import-race-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** ada first, bob after `between` other readers (of another topic): ada's and bob's rows in two chunks. */
function csv(name: string, between: number): string {
  const lines = ['email,topics', `ada@example.org,${TOPIC}`];
  for (let i = 0; i < between; i++) lines.push(`reader${i}@example.org,diffusion models`);
  lines.push(`bob@example.org,${TOPIC}`);
  const file = join(dir, name);
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

describe('import and the removal of unused queries on SQLite', () => {
  let db: Db;
  beforeEach(() => {
    db = openDatabase(join(dir, `digest-${Date.now()}.sqlite`));
  });
  afterEach(() => db.close());

  it("saves a query again that an earlier chunk saved and the upkeep removed since: bob gets ada's topic", async () => {
    let removed = -1;
    // Right after the first chunk (ada) commits, with the lock free: ada leaves the topic (as on her
    // preferences page) and the pipeline's upkeep runs.
    const logger = pino({ level: 'debug' }, {
      write: (line: string) => {
        if (!line.includes('chunk written') || removed >= 0) return;
        db.prepare(`DELETE FROM topics WHERE subscriber_id = (SELECT id FROM subscribers WHERE email = 'ada@example.org')`).run();
        removed = removeUnusedQueries(db);
      },
    });
    const r = await importSubscribersCsv({ db, clock, logger, config }, csv('sqlite.csv', 0), { rowsPerTransaction: 1 });
    expect(removed).toBe(1);
    expect(r).toMatchObject({ imported: 2, created: 2 });
    const bob = db
      .prepare(`SELECT t.text, q.fts FROM topics t JOIN subscribers s ON s.id = t.subscriber_id JOIN queries q ON q.id = t.query_id WHERE s.email = 'bob@example.org'`)
      .all();
    expect(bob).toEqual([{ text: TOPIC, fts: expect.stringContaining('graph') }]);
  });
});

describe.skipIf(!postgres.reachable)('import and the upkeep on PostgreSQL, on two connections', () => {
  let s: TestSchema;
  beforeEach(async () => {
    s = await postgres.schema();
    await migratePostgres(s.pool);
  });
  afterEach(async () => s?.drop());

  /** The schema's pool, with `before(n)` run before the import's n-th chunk transaction takes its connection. */
  function seamed(before: (n: number) => Promise<void>): pg.Pool {
    let n = 0;
    return new Proxy(s.pool, {
      get(target, key) {
        if (key === 'connect') return async () => (await before(++n), target.connect());
        const v = Reflect.get(target, key) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  }
  const upkeep = async () => (await upkeepPg(s.pool, { clock, retentionDays: 90 })).prunedQueries;
  const topicsOf = async (email: string) =>
    (
      await s.pool.query<{ text: string; fts: string }>(
        `SELECT t.text, q.fts FROM topics t JOIN subscribers s ON s.id = t.subscriber_id JOIN queries q ON q.id = t.query_id WHERE s.email = $1`,
        [email],
      )
    ).rows;

  it("writes the chunk's topics when the upkeep removed its new queries after they were saved", async () => {
    const pruned: number[] = [];
    // Between the chunk's queries (committed) and its transaction: the upkeep on its own connection.
    const pool = seamed(async (n) => void (n === 1 && pruned.push(await upkeep())));
    const r = await importCsvPg({ pool, clock, logger: silentLogger, config }, csv('pg-one.csv', 0));
    expect(pruned).toEqual([1]);
    expect(r).toMatchObject({ imported: 2, created: 2 });
    expect(await topicsOf('ada@example.org')).toEqual([{ text: TOPIC, fts: expect.stringContaining('graph') }]);
    expect(await topicsOf('bob@example.org')).toEqual([{ text: TOPIC, fts: expect.stringContaining('graph') }]);
  });

  it("waits for a removal in flight of the chunk's query (the upkeep's delete not committed yet), then saves it again", async () => {
    // An unused query the import's reader will adopt: saved before, its topic gone.
    const parsed = parseTopic(TOPIC);
    await ensureQueries(s.pool, [parsed]);
    const upkeep = await s.pool.connect();
    let waited = false;
    const pool = seamed(async (n) => {
      if (n !== 1) return;
      // After the chunk's queries are saved, before its transaction: the upkeep's delete, not committed.
      await upkeep.query('BEGIN');
      expect((await upkeep.query('DELETE FROM queries WHERE fts = $1', [parsed.fts])).rowCount).toBe(1);
      // Committed once the chunk waits on that row (seen in pg_stat_activity), whatever it runs then.
      void (async () => {
        const waiting = `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND application_name = $1 AND pid <> $2`;
        const pid = (await upkeep.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
        while ((await s.pool.query<{ n: number }>(waiting, [`paper-digest:${s.name}`, pid])).rows[0]!.n === 0) await new Promise((r) => setImmediate(r));
        waited = true;
        await upkeep.query('COMMIT');
      })();
    });
    try {
      const r = await importCsvPg({ pool, clock, logger: silentLogger, config }, csv('pg-inflight.csv', 0));
      expect(waited).toBe(true);
      expect(r).toMatchObject({ imported: 2, created: 2 });
      expect(await topicsOf('ada@example.org')).toEqual([{ text: TOPIC, fts: parsed.fts }]);
    } finally {
      upkeep.release();
    }
  });

  it('saves a query again that an earlier chunk saved and the upkeep removed since', async () => {
    const pruned: number[] = [];
    // After the first chunk (ada and 499 others) commits: ada leaves the topic, the upkeep runs.
    const pool = seamed(async (n) => {
      if (n !== 2) return;
      await s.pool.query(`DELETE FROM topics WHERE subscriber_id = (SELECT id FROM subscribers WHERE email = 'ada@example.org')`);
      pruned.push(await upkeep());
    });
    const r = await importCsvPg({ pool, clock, logger: silentLogger, config }, csv('pg-two.csv', PG_CHUNK - 1));
    expect(pruned).toEqual([1]);
    expect(r).toMatchObject({ imported: PG_CHUNK + 1, created: PG_CHUNK + 1 });
    expect(await topicsOf('bob@example.org')).toEqual([{ text: TOPIC, fts: expect.stringContaining('graph') }]);
  });
});
