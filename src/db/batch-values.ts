// Many rows in one statement: up to BATCH_ROWS tuples of `width` parameters each, prepared
// once per size (statements.ts caches them). A statement per row costs a round trip through
// better-sqlite3 each (~2-4 µs); the model pass wrote 4 rows per reader that way (BENCHMARKS.md).
import type { Db } from './open.ts';
import { statement } from './statements.ts';

/** Tuples per statement (x width parameters stays far below SQLite's 32,766). */
export const BATCH_ROWS = 100;

/**
 * Runs sql(tuples) over `values` (width parameters per row, flat), BATCH_ROWS rows at a time: `tuples` is
 * `tuple` (default: width placeholders in parentheses) repeated, comma-separated, for sql to place.
 */
export function runBatched(db: Db, width: number, values: unknown[], sql: (tuples: string) => string, tuple = `(${Array.from({ length: width }, () => '?').join(', ')})`): void {
  const rows = values.length / width;
  for (let at = 0; at < rows; at += BATCH_ROWS) {
    const n = Math.min(BATCH_ROWS, rows - at);
    statement(db, sql(Array.from({ length: n }, () => tuple).join(', '))).run(...values.slice(at * width, (at + n) * width));
  }
}
