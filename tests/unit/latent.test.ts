// The latent space (src/feedback/latent.ts): the randomized truncated SVD finds the singular values of a
// matrix whose SVD is known, is deterministic for a seed, and brings two texts that share no word but
// share their neighbours' words closer than their tf-idf vectors are.
import { describe, expect, it } from 'vitest';
import { cosine, fitLatent, project, type SparseRows } from '../../src/feedback/latent.ts';

function rows(dense: number[][]): SparseRows {
  const col: number[] = [];
  const val: number[] = [];
  const rowStart = new Int32Array(dense.length + 1);
  dense.forEach((r, i) => {
    r.forEach((v, j) => {
      if (v !== 0) {
        col.push(j);
        val.push(v);
      }
    });
    rowStart[i + 1] = col.length;
  });
  return { rows: dense.length, cols: dense[0]!.length, rowStart, col: Int32Array.from(col), val: Float32Array.from(val) };
}

const vectorOf = (a: SparseRows, r: number) => ({
  idx: a.col.subarray(a.rowStart[r]!, a.rowStart[r + 1]!),
  val: a.val.subarray(a.rowStart[r]!, a.rowStart[r + 1]!),
});

describe('fitLatent', () => {
  it('finds the singular values of a diagonal-block matrix, largest first', () => {
    // Singular values 5, 3, 2, 1 (a scaled permutation has its scales as singular values).
    const a = rows([
      [0, 3, 0, 0, 0],
      [5, 0, 0, 0, 0],
      [0, 0, 0, 1, 0],
      [0, 0, 2, 0, 0],
    ]);
    const fit = fitLatent(a, { k: 3, seed: 3 });
    expect(fit.k).toBe(3);
    expect([...fit.sigma].map((s) => Math.round(s * 1e4) / 1e4)).toEqual([5, 3, 2]);
  });

  it('is the same fit for the same seed', () => {
    const a = rows([
      [1, 1, 0, 0],
      [0, 1, 1, 0],
      [0, 0, 1, 1],
    ]);
    expect([...fitLatent(a, { k: 2, seed: 9 }).basis]).toEqual([...fitLatent(a, { k: 2, seed: 9 }).basis]);
  });

  it('brings two texts with no word in common together through their shared neighbours', () => {
    // Terms: car, automobile, engine, wheel, poem, verse. Rows 0 and 1 share no term.
    const a = rows([
      [1, 0, 0.5, 0.5, 0, 0],
      [0, 1, 0.5, 0.5, 0, 0],
      [0.7, 0, 0.7, 0, 0, 0],
      [0, 0.7, 0, 0.7, 0, 0],
      [0, 0, 0, 0, 1, 0.8],
      [0, 0, 0, 0, 0.8, 1],
    ]);
    const fit = fitLatent(a, { k: 2, seed: 1 });
    const [car, automobile, poem] = [0, 1, 4].map((r) => project(fit, vectorOf(a, r).idx, vectorOf(a, r).val));
    expect(cosine(car!, automobile!)).toBeGreaterThan(0.9);
    expect(Math.abs(cosine(car!, poem!))).toBeLessThan(0.1);
  });

  it('projects to unit length, and a vector sharing no term with the fit to zero', () => {
    const a = rows([
      [1, 0.5, 0],
      [0.5, 1, 0],
    ]);
    const fit = fitLatent(a, { k: 2, seed: 1 });
    const z = project(fit, [0, 1], [0.6, 0.8]);
    expect(cosine(z, z)).toBeCloseTo(1, 5);
    expect([...project(fit, [7], [1])].every((x) => x === 0)).toBe(true);
  });
});
