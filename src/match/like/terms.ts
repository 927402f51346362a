// Distinctive terms of a text, weighed against the FTS5 index: the shared core of like: topics
// (an example paper's terms) and of feedback profiles (a paper's terms, see src/feedback/).
//
// A term is a Porter stem as FTS5 stores it (stemToken mirrors the tokenizer). Its weight is a
// saturated term frequency (title words count BM25_TITLE_WEIGHT times, as in matching) times its
// inverse document frequency from the fts5vocab table papers_vocab: common words ("model",
// "learning" in an ML listing) weigh little, the words that tell a paper's problem apart weigh most.
import type { Db } from '../../db/open.ts';
import { statement } from '../../db/statements.ts';
import { foldToken, stemToken, tokenRegex } from '../normalize.ts';

/** Title column weight of bm25 in matching (match/matcher.ts): a title word counts this many times. */
export const BM25_TITLE_WEIGHT = 3;
const K1 = 1.2;

export interface WeightedTerm {
  /** A word of the text that stems to `stem` (searching for it finds the stem). */
  word: string;
  stem: string;
  /** tf (title x3) in the text. */
  tf: number;
  /** Documents of the index holding the stem. */
  df: number;
  weight: number;
}

export interface CorpusStats {
  /** Papers in the index. */
  n: number;
  /** Document frequency of a stem (0 when no paper has it). */
  df(stem: string): number;
}

const SQL_PAPER_COUNT = `SELECT count(*) AS n FROM papers`;
/** One term's document frequency: fts5vocab answers an equality on term from the index, not by a scan. */
const SQL_TERM_DF = `SELECT doc FROM papers_vocab WHERE term = ?`;

/** Index statistics, with a per-call cache of document frequencies. */
export function corpusStats(db: Db): CorpusStats {
  const n = (statement(db, SQL_PAPER_COUNT).get() as { n: number }).n;
  const dfStmt = statement<[string], { doc: number }>(db, SQL_TERM_DF);
  const cache = new Map<string, number>();
  return {
    n,
    df(stem) {
      let df = cache.get(stem);
      if (df === undefined) {
        df = dfStmt.get(stem)?.doc ?? 0;
        cache.set(stem, df);
      }
      return df;
    },
  };
}

/** bm25's idf as FTS5 computes it (never below a tiny positive floor). */
export function idf(n: number, df: number): number {
  return Math.max(1e-6, Math.log((n - df + 0.5) / (df + 0.5)));
}

/**
 * Function words and connectives. In a large index their document frequency already rules them out;
 * in a young one (a few days of papers) "whether" or "cannot" can look rare, so they are never terms.
 */
const STOP = new Set(
  ('about above after again against all also although always among and any are because been before being below between both but ' +
    'can cannot could did does doing done down during each either end even ever every few for from further had has have having ' +
    'here how however into its itself just least less let like made make many may might more most much must neither not now ' +
    'often only other otherwise our ours out over own per rather same several should since some still such than that the their ' +
    'them then there these they this those though through thus too under until upon very was were what when where whether which ' +
    'while who whom whose why will with within without would yet you your heavily highly higher lower').split(' '),
);

/** Words no term is made of: too short, numbers (years, sizes, table numbers), function words. */
export function usable(folded: string): boolean {
  return folded.length >= 3 && !/^\d/.test(folded) && !STOP.has(folded);
}

/**
 * Stems by folded word, shared by every call: a day's papers repeat the same few thousand words, and
 * Porter stemming each occurrence again was a third of the time of indexing paper terms. Bounded.
 */
const stemCache = new Map<string, string>();
const STEM_CACHE_LIMIT = 50_000;

export function cachedStem(folded: string): string {
  let stem = stemCache.get(folded);
  if (stem === undefined) {
    if (stemCache.size >= STEM_CACHE_LIMIT) stemCache.clear();
    stem = stemToken(folded);
    stemCache.set(folded, stem);
  }
  return stem;
}

/** Stems of a text with their counts and the first word seen for each. */
export function countStems(title: string, abstract: string): Map<string, { word: string; tf: number }> {
  const counts = new Map<string, { word: string; tf: number }>();
  const add = (text: string, weight: number): void => {
    for (const m of text.matchAll(tokenRegex())) {
      const folded = foldToken(m[0]);
      if (!usable(folded)) continue;
      const stem = cachedStem(folded);
      const c = counts.get(stem);
      if (c) c.tf += weight;
      else counts.set(stem, { word: folded, tf: weight });
    }
  };
  add(title, BM25_TITLE_WEIGHT);
  add(abstract, 1);
  return counts;
}

export interface SelectOptions {
  /** At most this many terms. */
  k: number;
  /** Terms held by more than this share of the papers are common words, never chosen. */
  maxDocShare?: number;
  /** Terms held by fewer papers are skipped (default 1: at least one paper of the index). */
  minDf?: number;
  /**
   * ln(1 + N/df) instead of bm25's idf: topic words held by many papers ("game" in a day of game
   * papers) keep real weight. Paper vectors for profiles use it; like: queries use bm25's own idf.
   */
  smoothIdf?: boolean;
}

/**
 * The k most distinctive terms of a text by tf-idf (tf saturated as in bm25). Terms no indexed paper
 * holds are skipped: they cannot connect the text to any paper.
 */
export function distinctiveTerms(title: string, abstract: string, stats: CorpusStats, opts: SelectOptions): WeightedTerm[] {
  const maxShare = opts.maxDocShare ?? 0.25;
  const out: WeightedTerm[] = [];
  for (const [stem, { word, tf }] of countStems(title, abstract)) {
    const df = stats.df(stem);
    if (df < Math.max(1, opts.minDf ?? 1) || df > Math.max(2, stats.n * maxShare)) continue;
    const inverse = opts.smoothIdf ? Math.log(1 + stats.n / df) : idf(stats.n, df);
    const weight = ((tf * (K1 + 1)) / (tf + K1)) * inverse;
    out.push({ word, stem, tf, df, weight });
  }
  out.sort((a, b) => b.weight - a.weight || (a.stem < b.stem ? -1 : a.stem > b.stem ? 1 : 0));
  return out.slice(0, opts.k);
}

/**
 * bm25 of a text against an OR query of `terms`, as FTS5 would score it if the text were an indexed
 * row of average length (examples looked up from arXiv are not in the index). Negative, lower is better.
 */
export function estimatedSelfScore(terms: WeightedTerm[], n: number): number {
  let score = 0;
  for (const t of terms) score += (idf(n, t.df) * (t.tf * (K1 + 1))) / (t.tf + K1);
  return -score;
}
