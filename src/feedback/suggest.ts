// Suggestions: papers of the day no topic of the reader matched that their model rates well. The
// suggestions themselves are chosen by the reader's model when their row is planned (model-pass.ts) and
// read back by the loader (render/view.ts).
//
// A calibrated model's suggestions (probability >= SUGGEST_MIN) are ranked inside the digest's list with
// the topic matches (marked "suggested, because you liked …"), up to a bounded share of the list; the ones
// past that share, and those of a model without calibrated evidence yet (the liked papers' nearest), go to
// "You may also like" below it.

/** Suggested papers per digest, inside the list and below it together. */
export const MAX_SUGGESTIONS = 3;

/**
 * Share of the digest's list that suggestions may take at most: one suggestion per topic match (a list of
 * 1 topic paper gets 1, of 3 or more gets MAX_SUGGESTIONS). The reader's topics stay at least half of it.
 */
export const INLINE_SHARE = 0.5;

/** How many suggestions may be ranked inside a list of `topicPapers` topic matches. */
export function inlineBound(topicPapers: number): number {
  return Math.min(MAX_SUGGESTIONS, Math.floor((topicPapers * INLINE_SHARE) / (1 - INLINE_SHARE) + 1e-9));
}
