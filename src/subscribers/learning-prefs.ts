// The reader's learning preferences (issue 13): their own cap on papers per email and whether
// "you may also like" suggestions are added. Kept apart from repo.ts so the columns of migration 004
// are read and written in one place.
import type { Db } from '../db/open.ts';
import { statement } from '../db/statements.ts';
import { fieldInvalid } from '../errors.ts';

export const MAX_PAPERS_LIMIT = 500;

export interface LearningPrefs {
  /** Most papers one email lists; null: no cap of their own. */
  maxPapers: number | null;
  suggestions: boolean;
}

const SQL_GET = `SELECT max_papers AS maxPapers, suggestions FROM subscribers WHERE id = ?`;
const SQL_SET = `UPDATE subscribers SET max_papers = @maxPapers, suggestions = @suggestions WHERE id = @id`;

export function getLearningPrefs(db: Db, subscriberId: number): LearningPrefs {
  const r = statement<[number], { maxPapers: number | null; suggestions: number }>(db, SQL_GET).get(subscriberId);
  return { maxPapers: r?.maxPapers ?? null, suggestions: (r?.suggestions ?? 1) === 1 };
}

export function setLearningPrefs(db: Db, subscriberId: number, prefs: LearningPrefs): void {
  statement(db, SQL_SET).run({ id: subscriberId, maxPapers: prefs.maxPapers, suggestions: prefs.suggestions ? 1 : 0 });
}

/** 0 or empty: no cap; otherwise a whole number from 1 to MAX_PAPERS_LIMIT. */
export function checkMaxPapers(n: number): number | null {
  if (!Number.isInteger(n) || n < 0 || n > MAX_PAPERS_LIMIT) {
    throw fieldInvalid('PREFERENCE_INVALID', 'maxPapers', `must be a whole number from 1 to ${MAX_PAPERS_LIMIT} (or 0 / empty for no limit)`);
  }
  return n === 0 ? null : n;
}
