// A reader's model, pure arithmetic (no database): L2-regularised logistic regression over sparse
// tf-idf vectors (arxiv-sanity's baseline, with logistic loss instead of a hinge so the scores are
// probabilities), then Platt scaling fitted on out-of-fold scores so that "probability 0.5" means the
// same for a reader with 3 votes as for one with 300.
//
// Decision: written here (about 150 lines) rather than taken from npm: the candidates (ml-logistic-
// regression, ml.js) are dense-matrix libraries without sample weights or sparse input; a reader's
// problem has a few hundred examples of ~64 non-zeros each, which plain accelerated gradient descent
// solves in a few milliseconds.

/** One training paper: its feature indices and values (unit length), label and weight. */
export interface Example {
  idx: readonly number[];
  val: readonly number[];
  y: 0 | 1;
  /** Sample weight (explicit votes 1, papers only shown less). */
  c: number;
}

export interface TrainOptions {
  /** L2 strength on the weights (not the bias), relative to the mean loss. */
  lambda?: number;
  iterations?: number;
}

export interface Linear {
  /** Weight per feature index (dense over the features seen in training). */
  w: Float64Array;
  bias: number;
}

export interface Calibration {
  a: number;
  b: number;
}

export const DEFAULT_LAMBDA = 0.005;
const DEFAULT_ITERATIONS = 200;

const sigmoid = (z: number): number => 1 / (1 + Math.exp(-z));

function dot(w: Float64Array, e: Example): number {
  let s = 0;
  for (let k = 0; k < e.idx.length; k++) s += w[e.idx[k]!]! * e.val[k]!;
  return s;
}

/**
 * Fits w and bias minimising Σ c·logloss / Σ c + λ/2·|w|² with Nesterov-accelerated gradient descent.
 * Positive and negative classes are balanced (each class carries half the total weight): a reader has
 * few "more" votes and many papers merely shown; calibration puts the probabilities back.
 */
export function trainLogistic(examples: readonly Example[], features: number, opts: TrainOptions = {}): Linear {
  const lambda = opts.lambda ?? DEFAULT_LAMBDA;
  const iterations = opts.iterations ?? DEFAULT_ITERATIONS;
  let pos = 0;
  let neg = 0;
  for (const e of examples) (e.y === 1 ? (pos += e.c) : (neg += e.c));
  const scale = examples.map((e) => (e.y === 1 ? (pos > 0 ? 0.5 / pos : 0) : neg > 0 ? 0.5 / neg : 0) * e.c);
  const w = new Float64Array(features);
  const prev = new Float64Array(features);
  const look = new Float64Array(features);
  const grad = new Float64Array(features);
  let bias = 0;
  let prevBias = 0;
  // Rows are unit length: the mean loss's gradient is (1/4)-Lipschitz in w, plus λ.
  const step = 1 / (0.25 + lambda);
  for (let it = 1; it <= iterations; it++) {
    const momentum = (it - 1) / (it + 2);
    for (let j = 0; j < features; j++) look[j] = w[j]! + momentum * (w[j]! - prev[j]!);
    const lookBias = bias + momentum * (bias - prevBias);
    grad.fill(0);
    let gBias = 0;
    for (let i = 0; i < examples.length; i++) {
      const e = examples[i]!;
      const r = (sigmoid(lookBias + dot(look, e)) - e.y) * scale[i]!;
      gBias += r;
      for (let k = 0; k < e.idx.length; k++) grad[e.idx[k]!] = grad[e.idx[k]!]! + r * e.val[k]!;
    }
    prev.set(w);
    prevBias = bias;
    for (let j = 0; j < features; j++) w[j] = look[j]! - step * (grad[j]! + lambda * look[j]!);
    bias = lookBias - step * gBias;
  }
  return { w, bias };
}

/** The raw score (log-odds before calibration) of one example. */
export function rawScore(m: Linear, e: Pick<Example, 'idx' | 'val'>): number {
  let s = m.bias;
  for (let k = 0; k < e.idx.length; k++) s += (m.w[e.idx[k]!] ?? 0) * e.val[k]!;
  return s;
}

/**
 * Platt scaling: a, b minimising the weighted log loss of sigmoid(a·s + b) against Platt's smoothed
 * targets, with a weak pull of the slope towards 0: a model earns its slope from held-out evidence, so a
 * reader with one vote gets a nearly flat curve (their digest keeps its usual order) and no suggestion
 * passes the threshold on a guess. Newton's method on two parameters.
 */
export function fitPlatt(scores: readonly number[], examples: readonly Example[], prior = 1): Calibration {
  let npos = 0;
  let nneg = 0;
  for (const e of examples) (e.y === 1 ? (npos += e.c) : (nneg += e.c));
  const hi = (npos + 1) / (npos + 2);
  const lo = 1 / (nneg + 2);
  let a = 0;
  let b = 0;
  for (let it = 0; it < 50; it++) {
    let ga = prior * a;
    let gb = 0;
    let haa = prior;
    let hab = 0;
    let hbb = 1e-6;
    for (let i = 0; i < scores.length; i++) {
      const e = examples[i]!;
      const s = scores[i]!;
      const p = sigmoid(a * s + b);
      const d = (p - (e.y === 1 ? hi : lo)) * e.c;
      const h = Math.max(p * (1 - p), 1e-9) * e.c;
      ga += d * s;
      gb += d;
      haa += h * s * s;
      hab += h * s;
      hbb += h;
    }
    const det = haa * hbb - hab * hab;
    if (!(det > 1e-12)) break;
    const da = (hbb * ga - hab * gb) / det;
    const db = (haa * gb - hab * ga) / det;
    a -= da;
    b -= db;
    if (Math.abs(da) + Math.abs(db) < 1e-7) break;
  }
  // A model that ranks backwards on held-out papers is no model: flat, its prior only.
  if (!(a > 0)) a = 0;
  return { a, b };
}

/**
 * Out-of-fold raw scores: each example scored by a model trained without its fold (k folds, by index
 * mod k). Only these are honest inputs for calibration; in-sample scores are too confident.
 */
export function outOfFoldScores(examples: readonly Example[], features: number, folds: number, opts: TrainOptions = {}): number[] {
  const scores = new Array<number>(examples.length).fill(0);
  const k = Math.max(2, Math.min(folds, examples.length));
  for (let f = 0; f < k; f++) {
    const train = examples.filter((_, i) => i % k !== f);
    const m = trainLogistic(train, features, opts);
    for (let i = f; i < examples.length; i += k) scores[i] = rawScore(m, examples[i]!);
  }
  return scores;
}

export { sigmoid };

/** Bits set in a topic mask: the topics that matched a paper. */
export function popcount(mask: number): number {
  let n = 0;
  for (let m = mask; m !== 0; m &= m - 1) n++;
  return n;
}
