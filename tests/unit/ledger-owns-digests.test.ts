// The ledger owns the `digests` table's writes: INSERT, UPDATE, DELETE or REPLACE of `digests` appear in
// src/ledger/ only (migrations, in db/migrations/, are not under src/). Anything else calls a ledger function.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const SRC = join(ROOT, 'src');
const LEDGER = join(SRC, 'ledger') + sep;

/** A write to `digests`, in any case and spacing, quoted or not, including INSERT OR IGNORE / UPSERT forms. */
const WRITE = /\b(?:insert\s+(?:or\s+\w+\s+)?into|replace\s+into|update(?:\s+or\s+\w+)?|delete\s+from)\s+(?:main\.)?["`'[]?digests\b(?!_)/gi;

function sources(dir: string, into: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) sources(p, into);
    else if (/\.(?:ts|mts|mjs|js|sql)$/.test(e.name)) into.push(p);
  }
  return into;
}

/** file:line: statement, for every write to `digests` in a text. */
function digestsWrites(file: string, text: string): string[] {
  return [...text.matchAll(WRITE)].map((m) => `${relative(ROOT, file)}:${text.slice(0, m.index).split('\n').length}: ${m[0].replace(/\s+/g, ' ')}`);
}

describe('the ledger owns the digests table', () => {
  it('finds the writes it looks for (any spelling)', () => {
    const text = 'a\nINSERT OR IGNORE INTO digests (x)\nupdate\n  "digests" set\ndelete from digests_suggestions\nDELETE FROM main.digests';
    expect(digestsWrites(join(SRC, 'x.ts'), text)).toEqual([
      'src/x.ts:2: INSERT OR IGNORE INTO digests',
      'src/x.ts:3: update "digests',
      'src/x.ts:6: DELETE FROM main.digests',
    ]);
  });

  it('has no INSERT, UPDATE or DELETE of digests outside src/ledger/', () => {
    const outside = sources(SRC)
      .filter((f) => !f.startsWith(LEDGER))
      .flatMap((f) => digestsWrites(f, readFileSync(f, 'utf8')));
    expect(outside, `writes to digests outside src/ledger/ (call a ledger function instead):\n${outside.join('\n')}`).toEqual([]);
  });

  it('still sees the ledger’s own writes (the scan is not blind)', () => {
    const inside = sources(LEDGER).flatMap((f) => digestsWrites(f, readFileSync(f, 'utf8')));
    expect(inside.length).toBeGreaterThan(5);
  });
});
