// A worker's in-memory mirror (send/postgres/batch-mirror.ts) forgets each row once it is rendered: a write
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
