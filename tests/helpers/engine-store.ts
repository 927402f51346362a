// The store of a test file that runs the built `digest` CLI and an in-process web server on either engine:
// a SQLite file in a temp dir, and on PostgreSQL also a fresh schema, migrated once, that DATABASE_URL and
// DATABASE_SCHEMA name (the SQLite file stays: the app opens one whatever the store, as `digest serve`
// does). `serveApp` serves what `digest serve` serves there (servedWebDeps); `sql` reads the engine's store.
import type { FastifyInstance } from 'fastify';
import { migratePostgres } from '../../src/db/postgres/migrate.ts';
import { openPostgresDoor, type App, type PostgresDoorHandle } from '../../src/main.ts';
import { servedWebDeps } from '../../src/serve.ts';
import { buildServer } from '../../src/web/server.ts';
import { postgresSql, sqliteSql, type Engine, type EngineSql } from './on-engines.ts';
import { createTestSchema, type TestSchema } from './postgres.ts';
import { tempDatabase, type TempDb } from './seed.ts';

export interface EngineStore {
  engine: Engine;
  tmp: TempDb;
  /** DATABASE_PATH, and on PostgreSQL DATABASE_URL and DATABASE_SCHEMA: for loadConfig and the children. */
  env: Record<string, string>;
  sql: EngineSql;
  schema: TestSchema | undefined;
  close(): Promise<void>;
}

export async function engineStore(engine: Engine, prefix: string): Promise<EngineStore> {
  const tmp = tempDatabase(prefix);
  const schema = engine === 'postgres' ? await createTestSchema() : undefined;
  if (schema) await migratePostgres(schema.pool);
  const env: Record<string, string> = { DATABASE_PATH: tmp.path, ...(schema ? { DATABASE_URL: schema.url, DATABASE_SCHEMA: schema.name } : {}) };
  return {
    engine,
    tmp,
    env,
    sql: schema ? postgresSql(schema.pool) : sqliteSql(tmp.db),
    schema,
    async close() {
      await schema?.drop();
      tmp.cleanup();
    },
  };
}

/** The web server over `app` as `digest serve` builds it on the app's store (PostgreSQL's door with DATABASE_URL). */
export async function serveApp(app: App, port: number): Promise<{ web: FastifyInstance; pg: PostgresDoorHandle | undefined; close(): Promise<void> }> {
  const pg = await openPostgresDoor(app);
  const web = buildServer({ ...app, ...servedWebDeps(app, pg) });
  await web.listen({ port, host: '127.0.0.1' });
  return {
    web,
    pg,
    async close() {
      await web.close();
      await pg?.close();
    },
  };
}

/**
 * Makes the ledger's digests and the readers' last slots one day older, so the next run is a new daily
 * slot without moving the children's clock. PostgreSQL keeps each edition's id range in digest_editions
 * (migration 017, widened on INSERT only): it is rebuilt from the moved rows.
 */
export async function shiftLedgerOneDay(s: EngineStore): Promise<void> {
  if (s.engine === 'sqlite') {
    s.tmp.db.exec(`UPDATE digests SET edition = date(edition, '-1 day'); UPDATE subscribers SET last_slot = date(last_slot, '-1 day')`);
    return;
  }
  const day = (col: string) => `to_char(${col}::date - 1, 'YYYY-MM-DD')`;
  await s.sql.run(`UPDATE digests SET edition = ${day('edition')}`);
  await s.sql.run(`UPDATE subscribers SET last_slot = ${day('last_slot')} WHERE last_slot IS NOT NULL`);
  await s.sql.run('DELETE FROM digest_editions');
  await s.sql.run('INSERT INTO digest_editions (edition, first_id, last_id) SELECT edition, min(id), max(id) FROM digests GROUP BY edition');
}
