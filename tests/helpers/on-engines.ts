// Which engines a 'both' test file (tests/engines.ts) runs on this run: SQLite always, PostgreSQL where
// the global setup's probe answered (else its tests show as skipped, and the setup said why, once).
//
//   forEachEngine('the subscribe flow', (engine) => { const { h } = sharedWebHarness({}, { engine }); it(…); });
import { describe, inject } from 'vitest';
import type pg from 'pg';
import type { Db } from '../../src/db/open.ts';

export type Engine = 'sqlite' | 'postgres';

/** Why PostgreSQL is skipped this run ('' when it answered); the global setup probes once. */
export function pgSkipReason(): string {
  try {
    return inject('pgSkipReason') ?? 'no global setup probed PostgreSQL';
  } catch {
    return 'no global setup probed PostgreSQL';
  }
}

/** ['sqlite', 'postgres'] when PostgreSQL answers, else ['sqlite']. */
export function engines(): Engine[] {
  return pgSkipReason() === '' ? ['sqlite', 'postgres'] : ['sqlite'];
}

/**
 * One describe block per engine, named "<name> on <engine>"; PostgreSQL's is skipped (shown as skipped)
 * when it does not answer, so its hooks never start anything.
 */
export function forEachEngine(name: string, body: (engine: Engine) => void): void {
  const skip = pgSkipReason() !== '';
  describe(`${name} on sqlite`, () => body('sqlite'));
  describe.skipIf(skip)(`${name} on postgres`, () => body('postgres'));
}

/** SQL on the engine's own store, written once with `?` placeholders (PostgreSQL's get $1, $2…). */
export interface EngineSql {
  get<R>(sql: string, ...params: unknown[]): Promise<R | undefined>;
  all<R>(sql: string, ...params: unknown[]): Promise<R[]>;
  run(sql: string, ...params: unknown[]): Promise<void>;
}

const dollar = (sql: string) => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

export function sqliteSql(db: Db): EngineSql {
  return {
    get: async <R,>(sql: string, ...p: unknown[]) => db.prepare(sql).get(...p) as R | undefined,
    all: async <R,>(sql: string, ...p: unknown[]) => db.prepare(sql).all(...p) as R[],
    run: async (sql, ...p) => void db.prepare(sql).run(...p),
  };
}

export function postgresSql(pool: pg.Pool): EngineSql {
  return {
    get: async <R,>(sql: string, ...p: unknown[]) => (await pool.query(dollar(sql), p)).rows[0] as R | undefined,
    all: async <R,>(sql: string, ...p: unknown[]) => (await pool.query(dollar(sql), p)).rows as R[],
    run: async (sql, ...p) => void (await pool.query(dollar(sql), p)),
  };
}
