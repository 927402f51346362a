// startTestApp on either engine, for the files that run `digest run`'s tick in this process: on PostgreSQL
// a fresh schema (migrated once) that DATABASE_URL and DATABASE_SCHEMA name, what `seed` wrote into the
// SQLite file moved there by `digest copy`'s code, and `digest serve`'s handle on it (openPostgresDoor).
import { copySqliteToPostgres } from '../../src/db/postgres/copy.ts';
import { migratePostgres } from '../../src/db/postgres/migrate.ts';
import { openPostgresDoor, type PostgresDoorHandle } from '../../src/main.ts';
import type { PipelineReport } from '../../src/pipeline.ts';
import { runTick } from './engine-tick.ts';
import { postgresSql, sqliteSql, type Engine, type EngineSql } from './on-engines.ts';
import { createTestSchema, type TestSchema } from './postgres.ts';
import { startTestApp, TEST_NOW, type TestApp } from './test-app.ts';

export interface EngineTestApp {
  engine: Engine;
  t: TestApp;
  /** SQL on the store the app writes (the SQLite file, or the schema), `?` placeholders. */
  sql: EngineSql;
  schema: TestSchema | undefined;
  pg: PostgresDoorHandle | undefined;
  /** One `digest run` tick in this process on the app's store. */
  tick(mode?: 'now' | 'due'): Promise<PipelineReport>;
  close(): Promise<void>;
}

export async function startEngineTestApp(
  engine: Engine,
  env: Record<string, string> = {},
  now = TEST_NOW,
  seed?: (t: TestApp) => void | Promise<void>,
): Promise<EngineTestApp> {
  const schema = engine === 'postgres' ? await createTestSchema() : undefined;
  if (schema) await migratePostgres(schema.pool);
  const onPg: Record<string, string> = schema ? { DATABASE_URL: schema.url, DATABASE_SCHEMA: schema.name } : {};
  const t = await startTestApp({ ...env, ...onPg }, now);
  let pg: PostgresDoorHandle | undefined;
  const close = async () => {
    await pg?.close();
    await t.close();
    await schema?.drop();
  };
  try {
    await seed?.(t);
    if (schema) {
      const copied = await copySqliteToPostgres(t.app.db, schema.pool);
      if (!copied.ok) throw new Error(`copy to PostgreSQL: counts differ ${JSON.stringify(copied.counts)}`);
      pg = await openPostgresDoor(t.app);
    }
  } catch (e) {
    await close().catch(() => {});
    throw e;
  }
  return {
    engine,
    t,
    sql: schema ? postgresSql(schema.pool) : sqliteSql(t.app.db),
    schema,
    pg,
    tick: (mode = 'now') => runTick(t.app, { pool: schema?.pool, pg }, mode),
    close,
  };
}
