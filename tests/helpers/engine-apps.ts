// The app on either engine for the tests that run the same scenarios on SQLite and PostgreSQL
// (door-engines, roster-engines): createApp on a SQLite file with a real SMTP server, and with
// DATABASE_URL=postgres://… `digest serve`'s PostgreSQL handle (door, roster) on a fresh schema; a
// listening web server given what the test chooses; SQL on the engine's own store (`?` placeholders).
import type { FastifyInstance } from 'fastify';
import { migratePostgres } from '../../src/db/postgres/migrate.ts';
import { openPostgresDoor, type PostgresDoorHandle } from '../../src/main.ts';
import type { WebDeps } from '../../src/web/deps.ts';
import { buildServer } from '../../src/web/server.ts';
import { postgresSql, sqliteSql, type EngineSql } from './on-engines.ts';
import type { PostgresForTests } from './postgres.ts';
import { startTestApp, type TestApp } from './test-app.ts';

export interface EngineApp extends EngineSql {
  t: TestApp;
  base: string;
  /** PostgreSQL's handle (door, roster) when the engine is PostgreSQL. */
  pg: PostgresDoorHandle | undefined;
  close(): Promise<void>;
}

/** What the web server is given beside the app (the door, the roster) for this engine. */
export type WebChoice = (t: TestApp, pg: PostgresDoorHandle | undefined) => Partial<WebDeps>;

async function listen(t: TestApp, deps: Partial<WebDeps>): Promise<{ web: FastifyInstance; base: string }> {
  const web = buildServer({ ...t.app, ...deps });
  await web.listen({ port: 0, host: '127.0.0.1' });
  const a = web.server.address();
  return { web, base: `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}` };
}

export async function sqliteEngineApp(env: Record<string, string>, choose: WebChoice): Promise<EngineApp> {
  const t = await startTestApp(env);
  const { web, base } = await listen(t, choose(t, undefined));
  const db = t.app.db;
  return {
    t,
    base,
    pg: undefined,
    ...sqliteSql(db),
    async close() {
      await web.close();
      await t.close();
    },
  };
}

export async function postgresEngineApp(pg: PostgresForTests, env: Record<string, string>, choose: WebChoice): Promise<EngineApp> {
  const s = await pg.schema();
  await migratePostgres(s.pool);
  const t = await startTestApp({ ...env, DATABASE_URL: s.url, DATABASE_SCHEMA: s.name });
  const handle = (await openPostgresDoor(t.app))!;
  const { web, base } = await listen(t, choose(t, handle));
  return {
    t,
    base,
    pg: handle,
    ...postgresSql(s.pool),
    async close() {
      await web.close();
      await handle.close();
      await t.close();
      await s.drop();
    },
  };
}
