// The model pass's weights and thresholds (model-pass.ts), each with the measurement that set it.

/**
 * What a suggestion ranked inside the list counts for in place of topics matched: one, as a paper one topic
 * brought, placed as the starting order's first (no prior against it: the model's confidence stands in for
 * the topic and its rank). On the relevance study, voters' P@5 / AUC pooled over days 4-6: counting 0,
 * placed last, 0.56 / 0.53 (below every topic paper); 1, placed last, 0.67 / 0.76; 1, placed first, 0.74 /
 * 0.88 (BENCHMARKS.md, reader models).
 */
export const SUGGESTION_MATCH = 1;
/** Calibrated probability a suggestion needs: the reader more likely wants it than not. */
export const SUGGEST_MIN = 0.5;
/** What "rates well" means for model_only digests. */
export const MODEL_KEEP = 0.4;
export const MODEL_KEEP_MIN = 3;
/** How much the model's probability weighs against one matched topic in the digest's order. */
export const RANK_WEIGHT = 1.5;
/**
 * The planner's order (topics matched, upvotes, relevance) weighs up to this much, from 0 for its first paper
 * to this for its last: the model reorders two papers only when 1.5 x their probabilities differ by more
 * than their distance in that order. On the relevance study, without it voters' digests were worse than a
 * non-clicking reader's on 5 of 54 days (small lists the planner happened to order right); see BENCHMARKS.md.
 */
export const PLANNER_WEIGHT = 0.3;
/** Readers who voted before models existed, trained during one plan run at most (each a few ms). */
export const LAZY_TRAIN_MAX = 200;
