// A latent space fitted on the service's own papers: a truncated SVD of their tf-idf matrix (latent
// semantic analysis), so that papers saying the same thing in different words meet. Pure arithmetic over
// Float32Array/Float64Array, no database (latent-store.ts reads the rows and keeps the fit).
//
// Decision: randomized SVD (Halko, Martinsson & Tropp 2011: a Gaussian sketch, power iterations with
// re-orthonormalisation, then the small problem exactly) written here: the npm candidates are dense
// (ml-matrix's SVD is a full one of a dense matrix: 10k papers x 30k terms would not fit in memory).
// The work is a few sparse products of the matrix with a thin block, O(nnz x (k + oversampling)).

/** Sparse rows: row r holds entries rowStart[r] .. rowStart[r + 1] of col/val. */
export interface SparseRows {
  rows: number;
  cols: number;
  rowStart: Int32Array;
  col: Int32Array;
  val: Float32Array;
}

export interface LatentFit {
  /** Dimensions kept. */
  k: number;
  /** Term count (columns of the matrix fitted). */
  terms: number;
  /** Right singular vectors, term-major: basis[t * k + j] (terms x k). */
  basis: Float32Array;
  /** Singular values, largest first. */
  sigma: Float64Array;
}

export interface FitOptions {
  k: number;
  oversample?: number;
  powerIterations?: number;
  seed?: number;
}

/** A small deterministic generator (mulberry32) and Box-Muller normals: the same corpus gives the same fit. */
function normals(seed: number): () => number {
  let s = seed >>> 0;
  const uniform = (): number => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (((t ^ (t >>> 14)) >>> 0) + 1) / 4294967297;
  };
  return () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
}

/** Y (rows x l, row-major) = A X, X cols x l. */
function times(a: SparseRows, x: Float64Array, l: number): Float64Array {
  const y = new Float64Array(a.rows * l);
  for (let r = 0; r < a.rows; r++) {
    const yo = r * l;
    for (let e = a.rowStart[r]!; e < a.rowStart[r + 1]!; e++) {
      const v = a.val[e]!;
      const xo = a.col[e]! * l;
      for (let j = 0; j < l; j++) y[yo + j] = y[yo + j]! + v * x[xo + j]!;
    }
  }
  return y;
}

/** Z (cols x l) = Aᵀ Y, Y rows x l. */
function timesT(a: SparseRows, y: Float64Array, l: number): Float64Array {
  const z = new Float64Array(a.cols * l);
  for (let r = 0; r < a.rows; r++) {
    const yo = r * l;
    for (let e = a.rowStart[r]!; e < a.rowStart[r + 1]!; e++) {
      const v = a.val[e]!;
      const zo = a.col[e]! * l;
      for (let j = 0; j < l; j++) z[zo + j] = z[zo + j]! + v * y[yo + j]!;
    }
  }
  return z;
}

/** Orthonormalises the l columns of a row-major n x l block in place (modified Gram-Schmidt, twice). */
function orthonormalise(q: Float64Array, n: number, l: number): void {
  for (let pass = 0; pass < 2; pass++) {
    for (let j = 0; j < l; j++) {
      for (let i = 0; i < j; i++) {
        let d = 0;
        for (let r = 0; r < n; r++) d += q[r * l + i]! * q[r * l + j]!;
        for (let r = 0; r < n; r++) q[r * l + j] = q[r * l + j]! - d * q[r * l + i]!;
      }
      let norm = 0;
      for (let r = 0; r < n; r++) norm += q[r * l + j]! ** 2;
      norm = Math.sqrt(norm);
      // A column lost to rank deficiency stays zero (its singular value will be 0 and it is dropped).
      for (let r = 0; r < n; r++) q[r * l + j] = norm > 1e-10 ? q[r * l + j]! / norm : 0;
    }
  }
}

/** Eigen-decomposition of a symmetric l x l matrix (cyclic Jacobi): values and vectors (columns of v). */
function symmetricEigen(m: Float64Array, l: number): { values: Float64Array; v: Float64Array } {
  const a = m.slice();
  const v = new Float64Array(l * l);
  for (let i = 0; i < l; i++) v[i * l + i] = 1;
  let scale = 0;
  for (let i = 0; i < l * l; i++) scale += a[i]! ** 2;
  for (let sweep = 0; sweep < 60; sweep++) {
    let off = 0;
    for (let p = 0; p < l; p++) for (let q = p + 1; q < l; q++) off += a[p * l + q]! ** 2;
    // Relative to the matrix's size: an absolute bound is never reached by rounding on large values.
    if (off <= 1e-24 * scale) break;
    for (let p = 0; p < l; p++) {
      for (let q = p + 1; q < l; q++) {
        const apq = a[p * l + q]!;
        if (apq * apq <= 1e-30 * scale) continue;
        const theta = (a[q * l + q]! - a[p * l + p]!) / (2 * apq);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let k = 0; k < l; k++) {
          const akp = a[k * l + p]!;
          const akq = a[k * l + q]!;
          a[k * l + p] = c * akp - s * akq;
          a[k * l + q] = s * akp + c * akq;
        }
        for (let k = 0; k < l; k++) {
          const apk = a[p * l + k]!;
          const aqk = a[q * l + k]!;
          a[p * l + k] = c * apk - s * aqk;
          a[q * l + k] = s * apk + c * aqk;
        }
        for (let k = 0; k < l; k++) {
          const vkp = v[k * l + p]!;
          const vkq = v[k * l + q]!;
          v[k * l + p] = c * vkp - s * vkq;
          v[k * l + q] = s * vkp + c * vkq;
        }
      }
    }
  }
  const values = new Float64Array(l);
  for (let i = 0; i < l; i++) values[i] = a[i * l + i]!;
  return { values, v };
}

/**
 * The k leading right singular vectors and values of A (randomized). With fewer rows or columns than k,
 * k shrinks to fit.
 */
export function fitLatent(a: SparseRows, opts: FitOptions): LatentFit {
  const k = Math.max(1, Math.min(opts.k, a.rows, a.cols));
  const l = Math.min(k + (opts.oversample ?? 10), a.rows, a.cols);
  const gauss = normals(opts.seed ?? 1);
  const omega = new Float64Array(a.cols * l);
  for (let i = 0; i < omega.length; i++) omega[i] = gauss();
  const y = times(a, omega, l);
  orthonormalise(y, a.rows, l);
  let q = y;
  for (let it = 0; it < (opts.powerIterations ?? 2); it++) {
    const z = timesT(a, q, l);
    orthonormalise(z, a.cols, l);
    q = times(a, z, l);
    orthonormalise(q, a.rows, l);
  }
  // B = Qᵀ A (l x cols), kept transposed: bt = Aᵀ Q (cols x l). B Bᵀ = btᵀ bt (l x l).
  const bt = timesT(a, q, l);
  const gram = new Float64Array(l * l);
  for (let t = 0; t < a.cols; t++) {
    const o = t * l;
    for (let i = 0; i < l; i++) {
      const bi = bt[o + i]!;
      if (bi === 0) continue;
      for (let j = i; j < l; j++) gram[i * l + j] = gram[i * l + j]! + bi * bt[o + j]!;
    }
  }
  for (let i = 0; i < l; i++) for (let j = 0; j < i; j++) gram[i * l + j] = gram[j * l + i]!;
  const { values, v } = symmetricEigen(gram, l);
  const order = [...values.keys()].sort((x, y2) => values[y2]! - values[x]!).slice(0, k);
  const sigma = new Float64Array(k);
  const basis = new Float32Array(a.cols * k);
  order.forEach((e, j) => {
    const s = Math.sqrt(Math.max(0, values[e]!));
    sigma[j] = s;
    if (s < 1e-9) return;
    // V's column j = Bᵀ w / σ = bt w / σ.
    for (let t = 0; t < a.cols; t++) {
      let d = 0;
      for (let i = 0; i < l; i++) d += bt[t * l + i]! * v[i * l + e]!;
      basis[t * k + j] = d / s;
    }
  });
  return { k, terms: a.cols, basis, sigma };
}

/**
 * A sparse vector's place in the latent space (x V, i.e. its coordinates along the singular directions),
 * unit length; terms outside the fit are ignored. Zero when it shares no term with the fit.
 */
export function project(fit: LatentFit, idx: ArrayLike<number>, val: ArrayLike<number>, out = new Float32Array(fit.k)): Float32Array {
  out.fill(0);
  const { k, basis } = fit;
  for (let e = 0; e < idx.length; e++) {
    const t = idx[e]!;
    if (t < 0 || t >= fit.terms) continue;
    const v = val[e]!;
    for (let j = 0; j < k; j++) out[j] = out[j]! + v * basis[t * k + j]!;
  }
  let norm = 0;
  for (let j = 0; j < k; j++) norm += out[j]! * out[j]!;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let j = 0; j < k; j++) out[j] = out[j]! / norm;
  return out;
}

/** Cosine of two unit latent vectors. */
export function cosine(x: Float32Array, y: Float32Array): number {
  let s = 0;
  for (let j = 0; j < x.length; j++) s += x[j]! * y[j]!;
  return s;
}
