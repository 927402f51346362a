// runBatched (src/db/batch-values.ts) writes the model pass's rows and the planner's reference rows a
// hundred per statement: every row must be written once, in order, whatever the count.
import { describe, expect, it } from 'vitest';
import { BATCH_ROWS, runBatched } from '../../src/db/batch-values.ts';
import { openDatabase } from '../../src/db/open.ts';

describe('writing rows a hundred per statement', () => {
  it.each([0, 1, BATCH_ROWS - 1, BATCH_ROWS, BATCH_ROWS + 1, 2 * BATCH_ROWS + 37])('writes each of %i rows once, in order, with its own values', (n) => {
    const db = openDatabase(':memory:');
    db.exec(`CREATE TABLE t (seq INTEGER PRIMARY KEY, k INTEGER, label TEXT, blob BLOB)`);
    const values: unknown[] = [];
    for (let i = 0; i < n; i++) values.push(i * 7, `row ${i}`, Buffer.from([i % 256, 1]));
    runBatched(db, 3, values, (tuples) => `INSERT INTO t (k, label, blob) VALUES ${tuples}`);
    const rows = db.prepare(`SELECT k, label, blob FROM t ORDER BY seq`).all() as Array<{ k: number; label: string; blob: Buffer }>;
    expect(rows.map((r) => [r.k, r.label, [...r.blob]])).toEqual(Array.from({ length: n }, (_, i) => [i * 7, `row ${i}`, [i % 256, 1]]));
    db.close();
  });

  it('places a custom tuple (a constant beside the parameters) in every row', () => {
    const db = openDatabase(':memory:');
    db.exec(`CREATE TABLE t (seq INTEGER PRIMARY KEY, k INTEGER, state TEXT)`);
    const values = Array.from({ length: BATCH_ROWS + 5 }, (_, i) => i);
    runBatched(db, 1, values, (tuples) => `INSERT INTO t (k, state) VALUES ${tuples}`, `(?, 'planned')`);
    expect(db.prepare(`SELECT count(*) AS n, sum(k) AS s, min(state) AS lo, max(state) AS hi FROM t`).get()).toEqual({ n: BATCH_ROWS + 5, s: ((BATCH_ROWS + 4) * (BATCH_ROWS + 5)) / 2, lo: 'planned', hi: 'planned' });
    db.close();
  });
});
