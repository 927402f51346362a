// The app and `digest run` on either engine, in this process, for the stories that run the same scenarios
// on SQLite and PostgreSQL: startTestApp (a SQLite file, a real SMTP server, a fake clock); on PostgreSQL
// the seeded file is moved into a fresh schema by `digest copy`'s code (migrated once, ids kept) and the
// run is pipeline-postgres.ts's runPipelinePg, what `digest run` does there. What the operator reads
// (`digest status`, /metrics, the console's overview) and the bounce store come from the engine's store.
import type pg from 'pg';
import type { Overview } from '../../src/admin/overview.ts';
import { postgresBounceStore } from '../../src/bounces/postgres/store.ts';
import { sqliteBounceStore, type BounceStore } from '../../src/bounces/store.ts';
import { postgresStatusSource, subscriberStatusPg } from '../../src/cli/commands/status-postgres.ts';
import { cmdStatus, cmdSubscriberStatus, sqliteSubscriberStatus } from '../../src/cli-commands.ts';
import type { CliIo } from '../../src/cli-io.ts';
import { COPIED_TABLES, copySqliteToPostgres, NOT_COPIED_TABLES, PG_ONLY_TABLES } from '../../src/db/postgres/copy.ts';
import type { Db } from '../../src/db/open.ts';
import { ingestBatch, type IngestResult } from '../../src/ingest/ingest.ts';
import { ingestBatchPg } from '../../src/ingest/postgres/ingest.ts';
import type { IncomingBatch } from '../../src/types.ts';
import type { Logger } from '../../src/log.ts';
import { parseTopic } from '../../src/match/parse.ts';
import { ensureQuery } from '../../src/subscribers/records/postgres.ts';
import { newSalt } from '../../src/tokens.ts';
import { openPostgresDoor, type PostgresDoorHandle } from '../../src/main.ts';
import { runPipeline, type PipelineOptions, type PipelineReport } from '../../src/pipeline.ts';
import { runPipelinePg } from '../../src/pipeline-postgres.ts';
import { metricsText } from '../../src/report/status.ts';
import { postgresSql, sqliteSql, type Engine, type EngineSql } from './on-engines.ts';
import { createTestSchema, type TestSchema } from './postgres.ts';
import { seedBatch, seedSubscribers, type SeedPaper, type SeedSubscriber } from './seed.ts';
import { startTestApp, TEST_NOW, type TestApp } from './test-app.ts';

/** Default mode 'now'. */
export type RunOptions = Partial<Pick<PipelineOptions, 'mode' | 'fetch' | 'dryRun' | 'signal'>> & {
  /** The run's log (the app's is silent): to read its warnings. */
  logger?: Logger;
};

export interface EngineRun {
  engine: Engine;
  t: TestApp;
  /** SQL on the engine's store (the SQLite file, or the schema), `?` placeholders. */
  sql: EngineSql;
  /** `digest serve`'s PostgreSQL handle (door, roster, webhooks, reads) on PostgreSQL. */
  pg: PostgresDoorHandle | undefined;
  /** The schema's pool on PostgreSQL. */
  pool: pg.Pool | undefined;
  /** A batch of papers into the engine's store, ingested at the app's clock. */
  ingest(date: string, papers: SeedPaper[], source?: string): Promise<void>;
  /** A batch through the engine's real ingest (its checks: a future date is refused). */
  ingestBatch(batch: IncomingBatch): Promise<IngestResult>;
  /** Readers as seedSubscribers writes them (confirmed, UTC 07:00, daily, watermark 0 unless said), into the engine's store. */
  addReaders(readers: SeedSubscriber[]): Promise<void>;
  /** One `digest run` tick in this process: runPipeline on SQLite, runPipelinePg on PostgreSQL. */
  run(o?: RunOptions): Promise<PipelineReport>;
  /** `digest status` (figures at the app's clock) and `digest status <email>`, printed to `io`. */
  status(io: CliIo, limit: number): Promise<number>;
  subscriberStatus(io: CliIo, email: string): Promise<number>;
  metrics(): Promise<string>;
  overview(): Promise<Overview>;
  /** What the bounce receiver and webhooks record into, logging to `logger`. */
  bounceStore(logger?: Logger): BounceStore;
  close(): Promise<void>;
}

let keySeq = 0;
/** seedBatch's papers as a batch ingest takes them (a key of their own when they have none). */
export function asIncoming(date: string, papers: SeedPaper[]) {
  return papers.map((p) => {
    const key = p.key ?? `2512.${String(80000 + ++keySeq)}`;
    return {
      key,
      title: p.title,
      abstract: p.abstract ?? `${p.title}. An abstract about ${p.title.toLowerCase()}.`,
      authors: p.authors ?? ['Ada Lovelace', 'Alan Turing'],
      url: p.url ?? `https://arxiv.org/abs/${key}`,
      publishedAt: p.publishedAt ?? date,
      upvotes: p.upvotes ?? 0,
      categories: p.categories ?? ['cs.LG'],
    };
  });
}

/**
 * The app on `engine`; `seed` writes into the SQLite file before the move to PostgreSQL (subscribers,
 * papers, anything the story starts from). Closing it drops the schema.
 */
export async function startEngineRun(engine: Engine, env: Record<string, string> = {}, seed?: (db: Db) => void, now = TEST_NOW): Promise<EngineRun> {
  const schema = engine === 'postgres' ? await createTestSchema() : undefined;
  const onPg: Record<string, string> = schema ? { DATABASE_URL: schema.url, DATABASE_SCHEMA: schema.name } : {};
  const t = await startTestApp({ ...env, ...onPg }, now, 'engine-run-');
  let handle: PostgresDoorHandle | undefined;
  try {
    seed?.(t.app.db);
    if (schema) handle = await moveToPostgres(t.app.db, schema, t);
  } catch (e) {
    await t.close();
    await schema?.drop();
    throw e;
  }
  return handle && schema ? onPostgres(t, schema, handle) : onSqlite(t);
}

async function moveToPostgres(db: Db, schema: TestSchema, t: TestApp): Promise<PostgresDoorHandle> {
  const copied = await copySqliteToPostgres(db, schema.pool);
  if (!copied.ok) throw new Error(`copy to PostgreSQL: counts differ ${JSON.stringify(copied.counts)}`);
  return (await openPostgresDoor(t.app))!;
}

function onSqlite(t: TestApp): EngineRun {
  const { app } = t;
  return {
    engine: 'sqlite',
    t,
    sql: sqliteSql(app.db),
    pg: undefined,
    pool: undefined,
    ingest: async (date, papers, source = 'test') => void seedBatch(app.db, date, papers, source, app.clock.now().toISOString()),
    ingestBatch: async (batch) => ingestBatch(app.db, batch, app.clock),
    addReaders: async (readers) => void seedSubscribers(app.db, readers),
    run: ({ logger, ...o } = {}) => runPipeline(logger ? { ...app, logger } : app, { ...o, mode: o.mode ?? 'now' }),
    status: (io, limit) => cmdStatus(app, io, limit),
    subscriberStatus: (io, email) => cmdSubscriberStatus(sqliteSubscriberStatus(app), io, email),
    metrics: async () => metricsText(app.db),
    overview: () => app.console.overview(),
    bounceStore: (logger = app.logger) => sqliteBounceStore({ db: app.db, clock: app.clock, logger, config: app.config }),
    close: () => t.close(),
  };
}

function onPostgres(t: TestApp, schema: TestSchema, handle: PostgresDoorHandle, keepSchema = false): EngineRun {
  const { app } = t;
  const { pool } = schema;
  const { config, clock, logger, mailer, spacer, renderer } = app;
  return {
    engine: 'postgres',
    t,
    sql: postgresSql(pool),
    pg: handle,
    pool,
    ingest: async (date, papers, source = 'test') => void (await ingestBatchPg(pool, { source, date, papers: asIncoming(date, papers) }, clock)),
    ingestBatch: (batch) => ingestBatchPg(pool, batch, clock),
    addReaders: (readers) => addReadersPg(pool, readers, clock.now().toISOString()),
    run: ({ logger: log = logger, ...o } = {}) =>
      runPipelinePg({ pool, config, clock, logger: log, mailer, notices: handle.door.notices, spacer, renderer }, { ...o, mode: o.mode ?? 'now' }),
    status: (io, limit) => cmdStatus({ operator: postgresStatusSource(handle.reads, config, clock) }, io, limit),
    subscriberStatus: async (io, email) => cmdSubscriberStatus(await subscriberStatusPg(pool, clock), io, email),
    metrics: () => handle.machine.metrics(),
    overview: () => handle.console.overview(),
    bounceStore: (l = logger) => postgresBounceStore({ pool, clock, logger: l, config }),
    async close() {
      await handle.close();
      await t.close();
      if (!keepSchema) await schema.drop();
    },
  };
}

const SQL_PG_READER = `
  INSERT INTO subscribers (email, status, token_salt, timezone, delivery_hour, frequency, weekly_day, watermark, last_slot, created_at, confirmed_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, CASE WHEN $2 = 'confirmed' THEN $10 END) RETURNING id`;
const SQL_PG_TOPIC = `INSERT INTO topics (subscriber_id, query_id, text, muted, position) VALUES ($1, $2, $3, $4, $5)`;

/** seed.ts seedSubscribers on PostgreSQL: the same defaults, queries through PostgreSQL's ensureQuery. */
export async function addReadersPg(pool: pg.Pool, readers: SeedSubscriber[], now: string): Promise<void> {
  for (const r of readers) {
    const status = r.status ?? 'confirmed';
    const prefs = [r.timezone ?? 'UTC', r.deliveryHour ?? 7, r.frequency ?? 'daily', r.weeklyDay ?? 1, r.watermark ?? 0, r.lastSlot ?? null];
    const id = (await pool.query<{ id: string }>(SQL_PG_READER, [r.email, status, newSalt(), ...prefs, now])).rows[0]!.id;
    for (const [position, t] of r.topics.entries()) {
      const topic = typeof t === 'string' ? { text: t, muted: false } : t;
      const queryId = await ensureQuery(pool, parseTopic(topic.text));
      await pool.query(SQL_PG_TOPIC, [id, queryId, topic.text, topic.muted ? 1 : 0, position]);
    }
  }
}

/**
 * The file's one schema (migrated once) emptied and filled with `db`'s rows, as `digest copy` would fill a
 * fresh one: for stories whose every case starts from its own seeded SQLite file.
 */
export async function refillSchema(db: Db, schema: TestSchema): Promise<void> {
  const tables = [...COPIED_TABLES, ...PG_ONLY_TABLES, ...NOT_COPIED_TABLES].join(', ');
  await schema.pool.query(`TRUNCATE ${tables} RESTART IDENTITY CASCADE`);
  const copied = await copySqliteToPostgres(db, schema.pool);
  if (!copied.ok) throw new Error(`copy to PostgreSQL: counts differ ${JSON.stringify(copied.counts)}`);
}

/**
 * startEngineRun on the file's one schema (migrated once, in beforeAll; undefined on SQLite): the schema is
 * refilled with what `seed` wrote into the story's own SQLite file, and kept when the story closes.
 */
export async function startEngineRunOn(
  schema: TestSchema | undefined,
  env: Record<string, string> = {},
  seed?: (db: Db) => void,
  now = TEST_NOW,
): Promise<EngineRun> {
  const onPg: Record<string, string> = schema ? { DATABASE_URL: schema.url, DATABASE_SCHEMA: schema.name } : {};
  const t = await startTestApp({ ...env, ...onPg }, now, 'engine-run-');
  if (!schema) {
    try {
      seed?.(t.app.db);
    } catch (e) {
      await t.close();
      throw e;
    }
    return onSqlite(t);
  }
  try {
    seed?.(t.app.db);
    await refillSchema(t.app.db, schema);
    return onPostgres(t, schema, (await openPostgresDoor(t.app))!, true);
  } catch (e) {
    await t.close();
    throw e;
  }
}
