// Migration 015 (query lists) reaches a database that is already past every earlier number: a deployment
// at version 14 gets the table its plan now writes, and plans per query on it.
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { listMigrations, MIGRATIONS_DIR, migrate, openDatabase, type Db } from '../../src/db/open.ts';
import { tempDatabaseDir } from '../helpers/seed.ts';

describe('migration 015: query lists', () => {
  let db: Db | undefined;
  let dir: ReturnType<typeof tempDatabaseDir> | undefined;
  let migrations: string | undefined;
  afterEach(() => {
    db?.close();
    dir?.remove();
    if (migrations) rmSync(migrations, { recursive: true, force: true });
  });

  it('upgrades a database at version 14 in place', () => {
    migrations = mkdtempSync(join(tmpdir(), 'digest-m015-'));
    for (const m of listMigrations().filter((m) => m.version <= 14)) copyFileSync(join(MIGRATIONS_DIR, m.name), join(migrations, m.name));
    dir = tempDatabaseDir('digest-m015-db-');
    const old = openDatabase(dir.path, { migrate: false });
    migrate(old, migrations);
    expect(old.pragma('user_version', { simple: true })).toBe(14);
    expect(old.prepare(`SELECT count(*) AS n FROM sqlite_master WHERE name = 'query_lists'`).get()).toEqual({ n: 0 });
    old.close();

    db = openDatabase(dir.path);
    expect(db.pragma('user_version', { simple: true })).toBe(listMigrations().at(-1)!.version);
    const cols = (db.prepare(`SELECT name FROM pragma_table_info('query_lists') ORDER BY cid`).all() as { name: string }[]).map((c) => c.name);
    expect(cols).toEqual(['id', 'query_id', 'from_paper', 'to_paper', 'items', 'paper_count', 'planned_at']);
  });
});
