// tests/helpers/bounce-setup.ts on either engine: the same four confirmed readers, each sent one digest
// through the real send path (so each left with its VERP envelope sender). On PostgreSQL the seeded SQLite
// file is moved into a fresh schema (migrated once) by `digest copy`'s code before anything is sent, the
// digests are planned and sent there by `digest run`'s tick, and `sql` reads that schema.
import { copySqliteToPostgres } from '../../src/db/postgres/copy.ts';
import { migratePostgres } from '../../src/db/postgres/migrate.ts';
import { openPostgresDoor, type PostgresDoorHandle } from '../../src/main.ts';
import { BOUNCE, READERS } from './bounce-setup.ts';
import { runTick } from './engine-tick.ts';
import { postgresSql, sqliteSql, type Engine, type EngineSql } from './on-engines.ts';
import { createTestSchema, type TestSchema } from './postgres.ts';
import { seedBatch, seedSubscribers } from './seed.ts';
import { startTestApp, type TestApp } from './test-app.ts';

export interface EngineBounceSetup {
  engine: Engine;
  t: TestApp;
  envelope: Record<string, string>;
  sql: EngineSql;
  schema: TestSchema | undefined;
  pg: PostgresDoorHandle | undefined;
  /** One `digest run` tick on the setup's store. */
  tick(): ReturnType<typeof runTick>;
  close(): Promise<void>;
}

export async function startEngineBounceSetup(engine: Engine, env: Record<string, string> = {}): Promise<EngineBounceSetup> {
  const schema = engine === 'postgres' ? await createTestSchema() : undefined;
  if (schema) await migratePostgres(schema.pool);
  const onPg: Record<string, string> = schema ? { DATABASE_URL: schema.url, DATABASE_SCHEMA: schema.name } : {};
  const t = await startTestApp({ BOUNCE_ADDRESS: BOUNCE, HARD_FAILURES_TO_SUPPRESS: '2', ...env, ...onPg });
  let pg: PostgresDoorHandle | undefined;
  const close = async () => {
    await pg?.close();
    await t.close();
    await schema?.drop();
  };
  try {
    const db = t.app.db;
    seedBatch(db, '2025-11-25', [{ title: 'Mixture of experts at scale', abstract: 'Sparse mixture of experts layers.' }], 'test', '2025-11-25T06:00:00.000Z');
    seedSubscribers(db, READERS.map((email) => ({ email, topics: ['mixture of experts'] })));
    if (schema) {
      const copied = await copySqliteToPostgres(db, schema.pool);
      if (!copied.ok) throw new Error(`copy to PostgreSQL: counts differ ${JSON.stringify(copied.counts)}`);
      pg = await openPostgresDoor(t.app);
    }
    const tick = () => runTick(t.app, { pool: schema?.pool, pg });
    const r = await tick();
    if (r.send?.sent !== READERS.length) throw new Error(`expected ${READERS.length} digests sent, got ${r.send?.sent}`);
    const envelope: Record<string, string> = {};
    for (const email of READERS) envelope[email] = (await t.smtp.waitFor(email)).mailFrom;
    return { engine, t, envelope, sql: schema ? postgresSql(schema.pool) : sqliteSql(db), schema, pg, tick, close };
  } catch (e) {
    await close().catch(() => {});
    throw e;
  }
}
