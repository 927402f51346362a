// A paper's feature vector for reader models: tf-idf over its stems (words) and adjacent stem pairs
// (bigrams), unit length, the strongest PAPER_WORDS words and PAPER_BIGRAMS bigrams kept. Words are
// weighed as src/match/like/terms.ts does (saturated tf, title x3, idf from the FTS5 index). FTS5 keeps no
// document frequency for pairs; a pair is in at most as many papers as its rarer word, so that word's
// idf is used: a lower bound on the pair's own, which keeps pairs from outweighing their words.
import { BM25_TITLE_WEIGHT, cachedStem, distinctiveTerms, usable, type CorpusStats } from './like/terms.ts';
import { foldToken, tokenRegex } from './normalize.ts';

export const PAPER_WORDS = 128;
export const PAPER_BIGRAMS = 16;
const K1 = 1.2;

export interface Feature {
  /** A stem, or two stems joined by one space (a bigram). */
  term: string;
  weight: number;
}

/** Adjacent usable stems of a text, counted (a function word or number between two words breaks the pair). */
function countBigrams(title: string, abstract: string): Map<string, number> {
  const counts = new Map<string, number>();
  const add = (text: string, weight: number): void => {
    let prev: string | undefined;
    for (const m of text.matchAll(tokenRegex())) {
      const folded = foldToken(m[0]);
      if (!usable(folded)) {
        prev = undefined;
        continue;
      }
      const stem = cachedStem(folded);
      if (prev !== undefined && prev !== stem) {
        const pair = `${prev} ${stem}`;
        counts.set(pair, (counts.get(pair) ?? 0) + weight);
      }
      prev = stem;
    }
  };
  add(title, BM25_TITLE_WEIGHT);
  add(abstract, 1);
  return counts;
}

/** The paper's unit-length feature vector (words and bigrams), strongest first. */
export function paperFeatures(title: string, abstract: string, stats: CorpusStats): Feature[] {
  const words = distinctiveTerms(title, abstract, stats, { k: PAPER_WORDS, maxDocShare: 1, minDf: 2, smoothIdf: true });
  const out: Feature[] = words.map((t) => ({ term: t.stem, weight: t.weight }));
  const pairs: Feature[] = [];
  for (const [pair, tf] of countBigrams(title, abstract)) {
    // A pair said once in the abstract is usually chance adjacency; twice, or in the title, it is a phrase.
    if (tf < 2) continue;
    const [a, b] = pair.split(' ') as [string, string];
    const df = Math.min(stats.df(a), stats.df(b));
    if (df < 2) continue;
    pairs.push({ term: pair, weight: ((tf * (K1 + 1)) / (tf + K1)) * Math.log(1 + stats.n / df) });
  }
  pairs.sort((x, y) => y.weight - x.weight || (x.term < y.term ? -1 : 1));
  out.push(...pairs.slice(0, PAPER_BIGRAMS));
  const norm = Math.sqrt(out.reduce((s, f) => s + f.weight * f.weight, 0)) || 1;
  for (const f of out) f.weight /= norm;
  return out.sort((x, y) => y.weight - x.weight || (x.term < y.term ? -1 : 1));
}
