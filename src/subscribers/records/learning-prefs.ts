// The reader's learning preferences (what their reader model may do): their own cap on papers per email and whether
// "you may also like" suggestions are added; read and written by repo.ts (the subscribers table's module).
import { fieldInvalid } from '../../errors.ts';

export const MAX_PAPERS_LIMIT = 500;

export interface LearningPrefs {
  /** Most papers one email lists; null: no cap of their own. */
  maxPapers: number | null;
  suggestions: boolean;
  /** Only the papers the reader's model rates well (src/feedback/model-pass.ts MODEL_KEEP). */
  modelOnly: boolean;
}

/** 0 or empty: no cap; otherwise a whole number from 1 to MAX_PAPERS_LIMIT. */
export function checkMaxPapers(n: number): number | null {
  if (!Number.isInteger(n) || n < 0 || n > MAX_PAPERS_LIMIT) {
    throw fieldInvalid('PREFERENCE_INVALID', 'maxPapers', `must be a whole number from 1 to ${MAX_PAPERS_LIMIT} (or 0 / empty for no limit)`);
  }
  return n === 0 ? null : n;
}
