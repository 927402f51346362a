// The pipeline's upkeep on a running service, on both engines (SQLite's runPipeline, PostgreSQL's tick
// runPipelinePg): topic queries that no subscriber uses any more are dropped (with their matches) by the
// next run, so the queries table and query_matches do not grow with every topic anyone ever typed;
// queries still in use keep their matches and are not re-matched. After DIGEST_RETENTION_DAYS a settled
// digest loses its paper list (and its run's query lists) but the row stays as history; open rows and the
// opt-out history are kept. On PostgreSQL, a tick whose upkeep lock another process holds prunes nothing.
import { afterEach, expect, it } from 'vitest';
import { migratePostgres } from '../../src/db/postgres/migrate.ts';
import { ingestBatch } from '../../src/ingest/ingest.ts';
import { ingestBatchPg } from '../../src/ingest/postgres/ingest.ts';
import { openPostgresDoor, type PostgresDoorHandle } from '../../src/main.ts';
import { runPipeline, type PipelineReport } from '../../src/pipeline.ts';
import { runPipelinePg } from '../../src/pipeline-postgres.ts';
import { UPKEEP_LOCK_CLASS } from '../../src/plan/postgres/upkeep.ts';
import type { IncomingBatch } from '../../src/types.ts';
import { forEachEngine, postgresSql, sqliteSql, type Engine, type EngineSql } from '../helpers/on-engines.ts';
import { postgresForTests, type TestSchema } from '../helpers/postgres.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

const DAY = 24 * 3600_000;

interface Service {
  t: TestApp;
  sql: EngineSql;
  schema: TestSchema | undefined;
  ingest(date: string, papers: Array<{ title: string; abstract: string }>): Promise<void>;
  subscribe(email: string, topics: string[]): Promise<void>;
  setTopics(email: string, topics: string[]): Promise<void>;
  unsubscribe(email: string): Promise<void>;
  run(): Promise<PipelineReport>;
  close(): Promise<void>;
}

let paperSeq = 0;
function batchOf(date: string, papers: Array<{ title: string; abstract: string }>): IncomingBatch {
  return {
    source: 'test',
    date,
    papers: papers.map((p) => {
      const key = `2511.${String(10000 + ++paperSeq)}`;
      return { ...p, key, authors: ['Ada Lovelace'], url: `https://arxiv.org/abs/${key}`, publishedAt: date, upvotes: 0, categories: ['cs.LG'] };
    }),
  };
}

async function startService(engine: Engine): Promise<Service> {
  let schema: TestSchema | undefined;
  let handle: PostgresDoorHandle | undefined;
  if (engine === 'postgres') {
    schema = await (await postgresForTests()).schema();
    await migratePostgres(schema.pool);
  }
  const t = await startTestApp(schema ? { DATABASE_URL: schema.url, DATABASE_SCHEMA: schema.name } : {});
  if (schema) handle = (await openPostgresDoor(t.app))!;
  const sql = schema ? postgresSql(schema.pool) : sqliteSql(t.app.db);
  const door = handle?.door ?? t.app.door;
  const roster = handle?.roster ?? t.app.roster;
  const token = async (email: string) => {
    const s = (await sql.get<{ id: number; token_salt: string }>('SELECT id, token_salt FROM subscribers WHERE email = ?', email))!;
    return t.app.links.preferences({ id: Number(s.id), tokenSalt: s.token_salt }).split('/').pop()!;
  };
  const { config, clock, logger, mailer } = t.app;
  return {
    t,
    sql,
    schema,
    ingest: async (date, papers) => {
      if (schema) await ingestBatchPg(schema.pool, batchOf(date, papers), clock);
      else ingestBatch(t.app.db, batchOf(date, papers), clock);
    },
    subscribe: async (email, topics) => void (await roster.subscribe({ email, topics }, { confirmed: true })),
    setTopics: async (email, topics) => void (await door.updatePreferences(await token(email), { topics })),
    unsubscribe: async (email) => void (await door.unsubscribe(await token(email))),
    run: () =>
      schema
        ? runPipelinePg({ pool: schema.pool, config, clock, logger, mailer, notices: handle!.door.notices }, { mode: 'now', fetch: false })
        : runPipeline(t.app, { mode: 'now', fetch: false }),
    async close() {
      await handle?.close();
      await t.close();
      await schema?.drop();
    },
  };
}

let svc: Service | undefined;
afterEach(async () => {
  await svc?.close();
  svc = undefined;
});

const count = async (s: Service, table: string) => Number((await s.sql.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))!.n);

interface Row {
  id: number;
  email: string;
  status: string;
  has_items: number;
  items_pruned_at: string | null;
  paper_count: number;
  from_paper: number;
  to_paper: number;
  planned_at: string;
}
const rows = async (s: Service) =>
  (
    await s.sql.all<Row>(
      `SELECT d.id, s.email, d.status, CASE WHEN d.items IS NULL THEN 0 ELSE 1 END AS has_items, d.items_pruned_at,
              d.paper_count, d.from_paper, d.to_paper, d.planned_at
       FROM digests d JOIN subscribers s ON s.id = d.subscriber_id ORDER BY d.id`,
    )
  ).map((r) => ({ ...r, id: Number(r.id), has_items: Number(r.has_items), from_paper: Number(r.from_paper), to_paper: Number(r.to_paper) }));

forEachEngine('pipeline upkeep', (engine) => {
  it('drops the queries of topics a subscriber removed, and their matches, at the next run', async () => {
    const s = (svc = await startService(engine));
    await s.ingest('2025-11-24', [
      { title: 'Speculative decoding with draft trees', abstract: 'We accelerate inference.' },
      { title: 'Diffusion models for video', abstract: 'A diffusion transformer.' },
      { title: 'Mixture of experts routing', abstract: 'Sparse experts.' },
    ]);
    await s.subscribe('alice@example.org', ['speculative decoding', 'diffusion']);
    await s.subscribe('bob@example.org', ['diffusion']);
    await s.run();
    expect(await count(s, 'queries')).toBe(2);
    expect(await count(s, 'query_matches')).toBe(2);

    // Alice swaps "speculative decoding" for "mixture of experts"; "diffusion" is still Bob's and hers.
    await s.setTopics('alice@example.org', ['mixture of experts', 'diffusion']);
    expect(await count(s, 'queries')).toBe(3); // the old query lingers until the run

    s.t.clock.advance(DAY);
    const r = await s.run();
    expect(r.prunedQueries).toBe(1);
    const texts = (await s.sql.all<{ fts: string }>('SELECT fts FROM queries ORDER BY id')).map((q) => q.fts);
    expect(texts).toHaveLength(2);
    expect(texts.join(' ')).not.toMatch(/speculative/);
    expect(await count(s, 'query_matches')).toBe(2); // diffusion + mixture of experts, each once
  });

  /** Three readers get a digest; Bob's waits for a retry far off, Carol leaves; DIGEST_RETENTION_DAYS (90) + 1 pass. */
  async function oldDigests(): Promise<Service> {
    const s = (svc = await startService(engine));
    await s.ingest('2025-11-24', [{ title: 'Diffusion models for video', abstract: 'A diffusion transformer.' }]);
    for (const who of ['alice', 'bob', 'carol']) await s.subscribe(`${who}@example.org`, ['diffusion']);
    await s.run();
    expect((await rows(s)).map((r) => [r.email, r.status, r.has_items])).toEqual([
      ['alice@example.org', 'sent', 1],
      ['bob@example.org', 'sent', 1],
      ['carol@example.org', 'sent', 1],
    ]);
    await s.sql.run(
      `UPDATE digests SET status = 'retry', next_attempt_at = '2100-01-01T00:00:00.000Z'
       WHERE subscriber_id = (SELECT id FROM subscribers WHERE email = 'bob@example.org')`,
    );
    await s.unsubscribe('carol@example.org');
    s.t.clock.advance(91 * DAY);
    await s.ingest('2026-02-23', [{ title: 'Diffusion policies for robots', abstract: 'A diffusion policy.' }]);
    return s;
  }

  it('after DIGEST_RETENTION_DAYS, removes the paper lists of settled digests and keeps the rows, open rows and opt-out history', async () => {
    const s = await oldDigests();
    const before = await rows(s);
    const firstRun = before[0]!.planned_at;
    expect(Number((await s.sql.get<{ n: number }>('SELECT count(*) AS n FROM query_lists WHERE planned_at = ?', firstRun))!.n)).toBe(1);

    const r = await s.run();
    expect(r.pruned).toBe(2);
    const after = await rows(s);
    const [alice, bob, carol, aliceNew] = after;
    // The settled rows stay as history, with their counts and watermark bounds; only the list went.
    for (const [row, was] of [[alice!, before[0]!], [carol!, before[2]!]] as const) {
      expect(row).toMatchObject({ status: 'sent', has_items: 0, paper_count: was.paper_count, from_paper: was.from_paper, to_paper: was.to_paper });
      expect(row.items_pruned_at).not.toBeNull();
    }
    expect(bob).toMatchObject({ status: 'retry', has_items: 1, items_pruned_at: null }); // open: never pruned
    expect(aliceNew).toMatchObject({ email: 'alice@example.org', status: 'sent', has_items: 1 });
    expect(after).toHaveLength(4); // Bob's open row holds his slot; Carol left
    // The first run's query list stays while Bob's open row still refers to it; the new run's too.
    const firstLists = async () => Number((await s.sql.get<{ n: number }>('SELECT count(*) AS n FROM query_lists WHERE planned_at = ?', firstRun))!.n);
    expect(await firstLists()).toBe(1);
    expect(await count(s, 'query_lists')).toBe(2);
    const optOuts = await s.sql.all<{ kind: string }>(`SELECT kind FROM consent_events WHERE email = 'carol@example.org'`);
    expect(optOuts.map((o) => o.kind)).toEqual(['unsubscribe']);

    // Bob's retry gives up: his row settles, the next run prunes it and the first run's list with it.
    await s.sql.run(`UPDATE digests SET status = 'failed', next_attempt_at = NULL WHERE id = ?`, bob!.id);
    s.t.clock.advance(DAY);
    expect((await s.run()).pruned).toBe(1);
    expect(await firstLists()).toBe(0);
    expect((await rows(s)).find((x) => x.id === bob!.id)).toMatchObject({ status: 'failed', has_items: 0 });
    s.t.clock.advance(DAY);
    expect((await s.run()).pruned).toBe(0); // nothing left to prune
  });

  if (engine === 'postgres') {
    it('prunes nothing while another process holds the upkeep lock, and prunes at the next tick', async () => {
      const s = await oldDigests();
      const other = await s.schema!.pool.connect();
      try {
        expect((await other.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, hashtext(current_schema())) AS ok', [UPKEEP_LOCK_CLASS])).rows[0]!.ok).toBe(true);
        const r = await s.run();
        expect(r.pruned).toBe(0);
        expect((await rows(s)).filter((x) => x.has_items === 0)).toEqual([]);
      } finally {
        await other.query('SELECT pg_advisory_unlock_all()');
        other.release();
      }
      s.t.clock.advance(DAY);
      expect((await s.run()).pruned).toBe(2);
    });
  }
});
