// A private in-memory SQLite with the service's schema (db/migrations), filled with rows copied from
// PostgreSQL, so code written for the SQLite store runs unchanged on them: the worker's renderer
// (send/postgres/batch-mirror.ts) and the reader models' pass (feedback/postgres/model-pass.ts).
// A partial copy: the rows a step reads, not their every parent; no trigger (FTS, opt-out history) runs in it.
import { openDatabase, type Db } from './open.ts';
import { statement } from './statements.ts';

export interface SchemaMirror {
  db: Db;
  /** Each mirrored table's columns, in the mirror's order (the same names on both engines). */
  columns: Record<string, string[]>;
}

/** A new, empty mirror: the schema without triggers or foreign keys; `tables`' column lists read once. */
export function openSchemaMirror(tables: readonly string[]): SchemaMirror {
  const db = openDatabase(':memory:', { checkWritable: false });
  db.pragma('foreign_keys = OFF');
  for (const { name } of db.prepare(`SELECT name FROM sqlite_master WHERE type = 'trigger'`).all() as { name: string }[]) {
    db.exec(`DROP TRIGGER "${name}"`);
  }
  const columns = Object.fromEntries(tables.map((t) => [t, (db.prepare(`SELECT name FROM pragma_table_info(?)`).all(t) as { name: string }[]).map((c) => c.name)]));
  return { db, columns };
}

/** A PostgreSQL statement's `{cols}` replaced by the mirror table's quoted column list. */
export function withMirrorColumns(m: SchemaMirror, table: string, sql: string): string {
  return sql.replace('{cols}', m.columns[table]!.map((c) => `"${c}"`).join(', '));
}

/** Rows (arrays in the table's column order) into the mirror, replacing rows with the same key. */
export function insertMirrorRows(m: SchemaMirror, table: string, rows: readonly unknown[][]): void {
  if (rows.length === 0) return;
  const cols = m.columns[table]!;
  const sql = `INSERT OR REPLACE INTO ${table} (${cols.map((c) => `"${c}"`).join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`;
  const st = statement(m.db, sql);
  for (const r of rows) st.run(r);
}
