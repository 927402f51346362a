// like: topics' term selection and scoring on real abstracts (the 71 of the shared Daily Papers fixture),
// without a database: document frequencies counted here the way FTS5's fts5vocab counts them
// (documents holding the stem), so the choice of terms is checked on its own.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { countStems, distinctiveTerms, estimatedSelfScore, idf, type CorpusStats } from '../../src/match/like/terms.ts';

const page = JSON.parse(readFileSync('/work/shared/fixtures/daily-papers-page.json', 'utf8')) as {
  papers: Array<{ title: string; abstract: string }>;
};
const docs = page.papers.map((p) => countStems(p.title, p.abstract));
const stats: CorpusStats = {
  n: docs.length,
  df: (stem) => docs.filter((d) => d.has(stem)).length,
};
const paper = (start: string) => page.papers.find((p) => p.title.startsWith(start))!;

describe('countStems', () => {
  it('stems as FTS5 does, counts title words three times, and skips numbers and function words', () => {
    const c = countStems('Learning to Play Poker', 'We learned poker in 2024 because it is hard.');
    expect(c.get('learn')).toEqual({ word: 'learning', tf: 4 });
    expect(c.get('poker')?.tf).toBe(4);
    expect(c.has('2024')).toBe(false);
    expect(c.has('becaus')).toBe(false);
    expect(c.has('we')).toBe(false); // shorter than 3 letters
  });
});

describe('distinctiveTerms on the fixture abstracts', () => {
  it("picks the words of the paper's own problem, not the field's common words", () => {
    const p = paper('PokerGPT');
    const words = distinctiveTerms(p.title, p.abstract, stats, { k: 12, minDf: 2 }).map((t) => t.word);
    expect(words).toEqual(expect.arrayContaining(['poker', 'solver']));
    for (const common of ['reinforcement', 'learning', 'language', 'model', 'large', 'the']) expect(words).not.toContain(common);
  });

  it('the LaTeX-tidied Pokémon abstract yields pokemon as a term (accent-folded, as FTS5 indexes it)', () => {
    const p = paper('A Benchmark for Generalizing');
    const tidied = p.abstract.replaceAll("Pok\\'emon", 'Pokémon');
    const stems = distinctiveTerms(p.title, tidied, stats, { k: 16 }).map((t) => t.stem);
    expect(stems).toContain('pokemon');
  });

  it('orders by weight: saturated tf times idf, rarer words first at equal tf', () => {
    const p = paper('Iterative Nash Policy Optimization');
    const terms = distinctiveTerms(p.title, p.abstract, stats, { k: 16, minDf: 2 });
    for (let i = 1; i < terms.length; i++) expect(terms[i - 1]!.weight).toBeGreaterThanOrEqual(terms[i]!.weight);
    const nash = terms.find((t) => t.stem === 'nash')!;
    expect(nash.weight).toBeCloseTo(((nash.tf * 2.2) / (nash.tf + 1.2)) * idf(stats.n, nash.df), 10);
  });

  it('never picks a word held by more than a quarter of the papers (by default)', () => {
    for (const p of page.papers.slice(0, 20)) {
      for (const t of distinctiveTerms(p.title, p.abstract, stats, { k: 16 })) expect(t.df).toBeLessThanOrEqual(stats.n * 0.25);
    }
  });
});

describe('estimatedSelfScore', () => {
  it('is negative (bm25 convention) and grows with shared rare terms', () => {
    const p = paper('CRAFT-GUI');
    const terms = distinctiveTerms(p.title, p.abstract, stats, { k: 16, minDf: 2 });
    const all = estimatedSelfScore(terms, stats.n);
    const half = estimatedSelfScore(terms.slice(0, 8), stats.n);
    expect(all).toBeLessThan(half);
    expect(half).toBeLessThan(0);
  });
});
