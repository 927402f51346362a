// The quality gate (src/feedback/quality.ts): a reader's model orders their digest and ranks suggestions
// inside it only when its held-out ranking is told apart from chance for the votes it has; the bar is one
// rule for every reader, stricter with fewer votes.
import { describe, expect, it } from 'vitest';
import { outOfFoldScores, type Example } from '../../src/feedback/model.ts';
import { heldOutQuality, qualityBar, trustedModel } from '../../src/feedback/quality.ts';

const unit = (pairs: Array<[number, number]>): Pick<Example, 'idx' | 'val'> => {
  const norm = Math.hypot(...pairs.map((p) => p[1]));
  return { idx: pairs.map((p) => p[0]), val: pairs.map((p) => p[1] / norm) };
};

/** Liked papers on feature 0, disliked on feature 1, noise on 2-5; `noisy` flips the labels' link to the words. */
function votes(n: number, noisy: boolean): Example[] {
  const out: Example[] = [];
  for (let i = 0; i < n; i++) {
    const liked = i % 3 === 0;
    const topic = noisy ? (Math.floor(i / 3) % 2) : liked ? 0 : 1;
    out.push({ ...unit([[topic, 1], [2 + (i % 4), 0.5]]), y: liked ? 1 : 0, c: 1 });
  }
  return out;
}

describe('the model quality gate', () => {
  it('trusts a model whose held-out scores separate what the reader liked from what they did not', () => {
    const ex = votes(30, false);
    const q = heldOutQuality(outOfFoldScores(ex, 6, 4), ex);
    expect(q.auc).toBeGreaterThan(0.9);
    expect(q.n1).toBe(10);
    expect(q.n0).toBe(20);
    expect(trustedModel(q)).toBe(true);
  });

  it('does not trust a model whose votes have nothing to do with the papers\' words', () => {
    const ex = votes(30, true);
    const q = heldOutQuality(outOfFoldScores(ex, 6, 4), ex);
    expect(trustedModel(q)).toBe(false);
  });

  it('asks more of a model with few votes than of one with many, for the same held-out AUC', () => {
    expect(trustedModel({ auc: 0.8, n1: 3, n0: 3 })).toBe(false);
    expect(trustedModel({ auc: 0.8, n1: 20, n0: 20 })).toBe(true);
    expect(qualityBar(3, 3)).toBeGreaterThan(qualityBar(20, 20));
    expect(qualityBar(1000, 1000)).toBeGreaterThan(0.5);
  });

  it('counts papers only shown as fewer than as many votes', () => {
    const shown: Array<Pick<Example, 'y' | 'c'>> = [
      ...Array.from({ length: 5 }, () => ({ y: 1 as const, c: 1 })),
      ...Array.from({ length: 5 }, () => ({ y: 0 as const, c: 1 })),
      ...Array.from({ length: 50 }, () => ({ y: 0 as const, c: 0.3 })),
    ];
    const q = heldOutQuality(shown.map((e) => e.y), shown);
    expect(q.auc).toBe(1);
    expect(q.n0).toBeLessThan(55);
    expect(q.n0).toBeGreaterThan(5);
  });

  it('does not trust a model stored before its quality was measured, nor one without a negative', () => {
    expect(trustedModel(undefined)).toBe(false);
    expect(trustedModel({ auc: 1, n1: 5, n0: 0 })).toBe(false);
  });
});
