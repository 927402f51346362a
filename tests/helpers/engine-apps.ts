// The app on either engine for the tests that run the same scenarios on SQLite and PostgreSQL
// (door-engines, roster-engines): createApp on a SQLite file with a real SMTP server, and with
// DATABASE_URL=postgres://… `digest serve`'s PostgreSQL handle (door, roster) on a fresh schema; a
// listening web server given what the test chooses; SQL on the engine's own store (`?` placeholders).
import type { FastifyInstance } from 'fastify';
import { migratePostgres } from '../../src/db/postgres/migrate.ts';
import { openPostgresDoor, type PostgresDoorHandle } from '../../src/main.ts';
import type { WebDeps } from '../../src/web/deps.ts';
import { buildServer } from '../../src/web/server.ts';
import type { PostgresForTests } from './postgres.ts';
import { startTestApp, type TestApp } from './test-app.ts';

export interface EngineApp {
  t: TestApp;
  base: string;
  /** PostgreSQL's handle (door, roster) when the engine is PostgreSQL. */
  pg: PostgresDoorHandle | undefined;
  get<R>(sql: string, ...params: unknown[]): Promise<R | undefined>;
  all<R>(sql: string, ...params: unknown[]): Promise<R[]>;
  run(sql: string, ...params: unknown[]): Promise<void>;
  close(): Promise<void>;
}

/** What the web server is given beside the app (the door, the roster) for this engine. */
export type WebChoice = (t: TestApp, pg: PostgresDoorHandle | undefined) => Partial<WebDeps>;

const dollar = (sql: string) => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

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
    get: async <R,>(sql: string, ...p: unknown[]) => db.prepare(sql).get(...p) as R | undefined,
    all: async <R,>(sql: string, ...p: unknown[]) => db.prepare(sql).all(...p) as R[],
    run: async (sql, ...p) => void db.prepare(sql).run(...p),
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
    get: async <R,>(sql: string, ...p: unknown[]) => (await s.pool.query(dollar(sql), p)).rows[0] as R | undefined,
    all: async <R,>(sql: string, ...p: unknown[]) => (await s.pool.query(dollar(sql), p)).rows as R[],
    run: async (sql, ...p) => void (await s.pool.query(dollar(sql), p)),
    async close() {
      await web.close();
      await handle.close();
      await t.close();
      await s.drop();
    },
  };
}
