// Prepared statements cached per connection: better-sqlite3's prepare() parses the SQL each time,
// which costs more than running a small statement, so hot paths prepare each named query once.
import type { Statement } from 'better-sqlite3';
import type { Db } from './open.ts';

const cache = new WeakMap<Db, Map<string, Statement>>();

export function statement<P extends unknown[] | {} = unknown[], R = unknown>(db: Db, sql: string): Statement<P, R> {
  let byDb = cache.get(db);
  if (!byDb) cache.set(db, (byDb = new Map()));
  let s = byDb.get(sql);
  if (!s) byDb.set(sql, (s = db.prepare(sql)));
  return s as unknown as Statement<P, R>;
}
