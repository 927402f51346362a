// A reader's model's held-out quality and the bar it must clear before it is trusted with the digest's
// order (model-pass.ts): the same bar for every reader, set by statistics, not by any study's days.
//
// Quality is the AUC of the model's out-of-fold scores (model.ts outOfFoldScores: each labelled paper
// scored by a model trained without it) over the reader's own labelled papers: the chance that a paper they
// liked is scored above one they did not, each pair weighted by the two papers' weights (a vote 1, a paper
// only shown CONTEXT_WEIGHT). It is measured when the model is trained and stored with it (training.ts).
//
// The bar: a model that ranks at random has an AUC of 0.5 with a standard error, for n1 positives and n0
// negatives, of sqrt((n1 + n0 + 1) / (12 n1 n0)) (the Mann-Whitney statistic's variance under no
// difference). A model is trusted when its held-out AUC is above 0.5 by QUALITY_Z such errors, i.e. when
// "it ranks no better than chance" is rejected at one-sided 2.5%: with 5 liked and 5 disliked papers that
// takes an AUC above 0.875, with 10 and 10 above 0.76, with 20 and 100 above 0.64. The counts are effective ones (Kish:
// (Σc)² / Σc²), so a hundred papers only shown do not count as a hundred votes.
import type { Example } from './model.ts';

/** Standard errors above chance a held-out AUC must be (one-sided 2.5%). */
export const QUALITY_Z = 1.96;

/** A model's held-out ranking quality, stored with it (training.ts StoredWeights.q). */
export interface HeldOutQuality {
  /** Out-of-fold AUC, weighted. */
  auc: number;
  /** Effective numbers of positives and negatives. */
  n1: number;
  n0: number;
}

/** The weighted AUC of out-of-fold `scores` over `examples` (ties count half), with effective counts. */
export function heldOutQuality(scores: readonly number[], examples: readonly Pick<Example, 'y' | 'c'>[]): HeldOutQuality {
  const pos: number[] = [];
  const neg: number[] = [];
  examples.forEach((e, i) => (e.y === 1 ? pos : neg).push(i));
  let num = 0;
  let den = 0;
  for (const i of pos) {
    const ci = examples[i]!.c;
    for (const j of neg) {
      const w = ci * examples[j]!.c;
      den += w;
      if (scores[i]! > scores[j]!) num += w;
      else if (scores[i] === scores[j]) num += w / 2;
    }
  }
  const effective = (ids: number[]): number => {
    let s = 0;
    let s2 = 0;
    for (const i of ids) {
      s += examples[i]!.c;
      s2 += examples[i]!.c ** 2;
    }
    return s2 > 0 ? (s * s) / s2 : 0;
  };
  return { auc: den > 0 ? num / den : 0.5, n1: effective(pos), n0: effective(neg) };
}

/** The held-out AUC a model needs, for its effective counts, to be told apart from chance. */
export function qualityBar(n1: number, n0: number): number {
  if (!(n1 > 0 && n0 > 0)) return Infinity;
  return 0.5 + QUALITY_Z * Math.sqrt((n1 + n0 + 1) / (12 * n1 * n0));
}

/** Whether a model with this stored quality may order the digest and rank suggestions inside it. */
export function trustedModel(q: HeldOutQuality | undefined): boolean {
  return q !== undefined && q.auc > qualityBar(q.n1, q.n0);
}
