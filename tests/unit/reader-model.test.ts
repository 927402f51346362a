// The reader model's arithmetic (src/feedback/model.ts), its paper vectors (src/match/features.ts) and the packed
// lists the plan's model pass writes (src/ledger/pack.ts), apart from any database.
import { describe, expect, it } from 'vitest';
import { paperFeatures } from '../../src/match/features.ts';
import { fitPlatt, outOfFoldScores, rawScore, sigmoid, trainLogistic, type Example } from '../../src/feedback/model.ts';
import { packItems } from '../../src/ledger/pack.ts';
import { decodeItems, encodeItems } from '../../src/ledger/items.ts';

const unit = (pairs: Array<[number, number]>): Pick<Example, 'idx' | 'val'> => {
  const norm = Math.hypot(...pairs.map((p) => p[1]));
  return { idx: pairs.map((p) => p[0]), val: pairs.map((p) => p[1] / norm) };
};

/** Papers on "games" (feature 0) liked, papers on "LLM training" (feature 1) disliked or passed over; 2-5 noise. */
function games(n: number): Example[] {
  const out: Example[] = [];
  for (let i = 0; i < n; i++) {
    const noise = 2 + (i % 4);
    if (i % 3 === 0) out.push({ ...unit([[0, 1], [noise, 0.5]]), y: 1, c: 1 });
    else out.push({ ...unit([[1, 1], [noise, 0.5]]), y: 0, c: i % 2 === 0 ? 1 : 0.3 });
  }
  return out;
}

describe('the reader model', () => {
  it('learns which words a reader likes and rates an unseen paper on them above one on the other words', () => {
    const m = trainLogistic(games(30), 6);
    expect(m.w[0]).toBeGreaterThan(0);
    expect(m.w[1]).toBeLessThan(0);
    expect(rawScore(m, unit([[0, 1], [5, 1]]))).toBeGreaterThan(rawScore(m, unit([[1, 1], [5, 1]])));
  });

  it('is calibrated: liked-theme papers above one half, the others far below, from out-of-fold scores', () => {
    const ex = games(30);
    const m = trainLogistic(ex, 6);
    const cal = fitPlatt(outOfFoldScores(ex, 6, 4), ex);
    const p = (e: Pick<Example, 'idx' | 'val'>) => sigmoid(cal.a * rawScore(m, e) + cal.b);
    expect(p(unit([[0, 1], [3, 0.5]]))).toBeGreaterThan(0.5);
    expect(p(unit([[1, 1], [3, 0.5]]))).toBeLessThan(0.2);
  });

  it('a model whose held-out scores are backwards is flattened to its prior (no paper can pass a threshold on it)', () => {
    const ex = games(12);
    const backwards = ex.map((e) => (e.y === 1 ? -2 : 2));
    const cal = fitPlatt(backwards, ex);
    expect(cal.a).toBe(0);
    expect(sigmoid(cal.b)).toBeLessThan(0.5);
  });
});

describe('paper vectors', () => {
  const stats = { n: 1000, df: (stem: string) => ({ game: 40, poker: 5, play: 60, self: 80, agent: 200 })[stem] ?? 10 };

  it('hold words and two-word phrases, unit length', () => {
    const f = paperFeatures('Self-play for poker games', 'We study self-play in poker. Self-play agents learn poker games from self-play.', stats);
    expect(f.map((x) => x.term)).toEqual(expect.arrayContaining(['poker', 'self plai', 'poker game']));
    expect(Math.hypot(...f.map((x) => x.weight))).toBeCloseTo(1, 6);
  });
});

describe('packed lists written by the model pass', () => {
  it('read back as written, byte for byte what the planner would write', () => {
    const ids = [1050, 1003, 1401, 1020];
    const masks = [1, 3, 2, 5];
    const blob = packItems(ids, masks, 1000);
    expect(decodeItems(blob, 1000, '7,8,9')).toEqual([
      { paperId: 1050, topicIds: [7] },
      { paperId: 1003, topicIds: [7, 8] },
      { paperId: 1401, topicIds: [8] },
      { paperId: 1020, topicIds: [7, 9] },
    ]);
    const bits = (m: number) => [0, 1, 2].filter((b) => m & (1 << b));
    expect(blob).toEqual(encodeItems(ids.map((paperId, i) => ({ paperId, topicBits: bits(masks[i]!) })), 1000));
  });
});
