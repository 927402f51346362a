// Every test file declares the engine it runs on (tests/engines.ts): a new file missing there, an entry
// for a file that is gone, a 'sqlite' or 'none' entry with no reason, a 'both' file that never starts
// PostgreSQL, or a 'none' file that opens a store fails here, naming the file.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENGINES } from '../engines.ts';

const ROOT = join(import.meta.dirname, '..', '..');

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return testFiles(p);
    return e.name.endsWith('.test.ts') ? [relative(ROOT, p)] : [];
  });
}

const files = testFiles(join(ROOT, 'tests')).sort();
const source = (f: string) => readFileSync(join(ROOT, f), 'utf8');
/** What a test file uses to run on PostgreSQL. */
const STARTS_POSTGRES = /forEachEngine\(|postgresForTests\(|pgSkipReason\(/;
/** What a test file uses to open a store (helpers that open SQLite or PostgreSQL, or the drivers). */
const OPENS_A_STORE = /helpers\/(seed|test-app|web-harness|admin-setup|engine-apps|postgres|pg-[a-z-]+|delivery-setup|bounce-setup)\.ts'|from '(better-sqlite3|pg)'|db\/open\.ts'/;

describe('tests/engines.ts', () => {
  it('declares every test file, and only test files that exist', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(files.filter((f) => !(f in ENGINES)), 'test files missing from tests/engines.ts').toEqual([]);
    expect(Object.keys(ENGINES).filter((f) => !files.includes(f)), 'entries for files that are gone').toEqual([]);
  });

  it("gives a reason for every 'sqlite' and 'none' file: SQLite's own part, or what PostgreSQL needs", () => {
    const bad = Object.entries(ENGINES).filter(([, d]) => {
      if (d.engine === 'sqlite') return !(d.why.trim().length >= 20 && /SQLite|needs /.test(d.why));
      if (d.engine === 'none') return d.why.trim().length < 20;
      return false;
    });
    expect(bad.map(([f]) => f), "'sqlite' reasons name SQLite's own part or start with what PostgreSQL needs").toEqual([]);
  });

  it("'both' and 'postgres' files run on PostgreSQL; 'none' files open no store", () => {
    const wrong = Object.entries(ENGINES).filter(([f, d]) => {
      if (d.engine === 'both' || d.engine === 'postgres') return !STARTS_POSTGRES.test(source(f));
      if (d.engine === 'none') return OPENS_A_STORE.test(source(f));
      return false;
    });
    expect(wrong.map(([f, d]) => `${f}: ${d.engine}`)).toEqual([]);
  });
});
