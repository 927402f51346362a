// A worker's in-memory mirror (send/postgres/batch-mirror.ts) forgets each row once it is rendered, the model pass's
// (feedback/postgres/model-pass.ts) a batch's rows once written back: a write
// to a private copy, not to the store, but a write to `digests` all the same, so it lives with the ledger.
import type { Db } from '../../db/open.ts';
import { statement } from '../../db/statements.ts';

const SQL_FORGET_SUGGESTIONS = `DELETE FROM digest_suggestions WHERE digest_id = ?`;
const SQL_FORGET_ROW = `DELETE FROM digests WHERE id = ?`;

/** Drops a rendered row (and its suggestions) from a mirror. */
export function forgetMirroredRow(mirror: Db, id: number): void {
  statement<[number]>(mirror, SQL_FORGET_SUGGESTIONS).run(id);
  statement<[number]>(mirror, SQL_FORGET_ROW).run(id);
}

const SQL_FORGET_ALL_SUGGESTIONS = `DELETE FROM digest_suggestions`;
const SQL_FORGET_ALL_ROWS = `DELETE FROM digests`;

/** Empties a mirror's rows and suggestions (the model pass, between two batches of readers). */
export function forgetMirroredRows(mirror: Db): void {
  statement(mirror, SQL_FORGET_ALL_SUGGESTIONS).run();
  statement(mirror, SQL_FORGET_ALL_ROWS).run();
}

/** Empties every table of a mirror (the web view's pooled mirrors, between two views): its schema stays. */
export function emptyMirror(mirror: Db, tables: readonly string[]): void {
  forgetMirroredRows(mirror);
  for (const t of tables) if (t !== 'digests' && t !== 'digest_suggestions') statement(mirror, `DELETE FROM "${t}"`).run();
}
