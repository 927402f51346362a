// Offline probe (bench only): can any cut of a similarity ranking to ONE example paper give like: topics
// precision >= 0.6 with at least half of their theme found on the study's splits? For each split and
// theme (the example: the first paper whose title is of the theme, as bench/relevance-study.ts
// runLikeStudy picks it), the papers that arrive from the example's day on are ranked by a similarity to
// it, and the best precision of any cut that finds half the theme is printed (a threshold chosen in
// hindsight per example: an upper bound for every threshold rule on that similarity).
// `npx tsx bench/like-probe.ts`
import { paperFeatures, type Feature } from '../src/match/features.ts';
import { countStems, type CorpusStats } from '../src/match/like/terms.ts';
import { aboutTheme, dealDays, LIKE_THEMES, studyPapers, type StudyPaper } from './relevance-study.ts';

const papers = studyPapers();
type Vec = Map<string, number>;
const statsOf = (ps: StudyPaper[]): CorpusStats => {
  const df = new Map<string, number>();
  for (const p of ps) for (const s of countStems(p.title, p.abstract).keys()) df.set(s, (df.get(s) ?? 0) + 1);
  return { n: ps.length, df: (s) => df.get(s) ?? 0 };
};
const toVec = (f: Feature[], bigrams: boolean): Vec => {
  const v = new Map(f.filter((x) => bigrams || !x.term.includes(' ')).map((x) => [x.term, x.weight]));
  const n = Math.sqrt([...v.values()].reduce((s, w) => s + w * w, 0)) || 1;
  for (const [k, w] of v) v.set(k, w / n);
  return v;
};
const cos = (a: Vec, b: Vec) => {
  let s = 0;
  for (const [k, w] of a) s += w * (b.get(k) ?? 0);
  return s;
};
/** Best precision of a cut of `ranked` (relevance flags, best first) that finds at least half of `total`. */
function ceiling(ranked: boolean[], total: number): { precision: number; found: number; cut: number } {
  let hits = 0;
  let best = { precision: 0, found: 0, cut: 0 };
  ranked.forEach((rel, i) => {
    if (rel) hits++;
    if (hits * 2 >= total && hits / (i + 1) > best.precision) best = { precision: hits / (i + 1), found: hits, cut: i + 1 };
  });
  return best;
}

const variants: Array<[string, (ex: StudyPaper, held: StudyPaper[], stats: CorpusStats) => (p: StudyPaper) => number]> = [
  ['words', (ex, _h, st) => { const e = toVec(paperFeatures(ex.title, ex.abstract, st), false); return (p) => cos(e, toVec(paperFeatures(p.title, p.abstract, st), false)); }],
  ['words+bigrams', (ex, _h, st) => { const e = toVec(paperFeatures(ex.title, ex.abstract, st), true); return (p) => cos(e, toVec(paperFeatures(p.title, p.abstract, st), true)); }],
  // Pseudo-relevance feedback: the example plus its 3 nearest papers held that day (Rocchio, 0.5 each).
  ['words+bigrams, +3 neighbours', (ex, held, st) => {
    const v = (p: StudyPaper) => toVec(paperFeatures(p.title, p.abstract, st), true);
    const e = v(ex);
    const near = held.filter((p) => p.id !== ex.id).map((p) => ({ p, c: cos(e, v(p)) })).sort((a, b) => b.c - a.c).slice(0, 3);
    const q = new Map(e);
    for (const { p } of near) for (const [k, w] of v(p)) q.set(k, (q.get(k) ?? 0) + 0.5 * w);
    return (p) => cos(q, v(p));
  }],
];

// Two readings of "of the theme": the rule anywhere in title and abstract (the study's first), and
// aboutTheme (in the title, or named twice: a passing mention is not the paper's subject).
for (const reading of ['mentions', 'about'] as const)
for (const [name, make] of variants) {
  for (const hindsight of [false, true]) {
    const per: string[] = [];
    const pooled = { hits: 0, cut: 0, total: 0 };
    for (let split = 0; split < 3; split++) {
      const days = dealDays(papers, 6, split);
      let hits = 0;
      let cut = 0;
      let total = 0;
      for (const theme of LIKE_THEMES) {
        const d = days.findIndex((day) => day.some((p) => theme.rule.test(p.title)));
        if (d < 0) continue;
        const ex = days[d]!.find((p) => theme.rule.test(p.title))!;
        const held = days.slice(0, d + 1).flat();
        const stats = statsOf(hindsight ? papers : held);
        const score = make(ex, held, stats);
        const later = days.slice(d).flat().filter((p) => p.id !== ex.id);
        const of = (p: StudyPaper) => (reading === 'about' ? aboutTheme(theme, p) : theme.rule.test(`${p.title} ${p.abstract}`));
        const ranked = later.map((p) => ({ s: score(p), rel: of(p) })).sort((a, b) => b.s - a.s).map((x) => x.rel);
        const c = ceiling(ranked, ranked.filter(Boolean).length);
        hits += c.found;
        cut += c.cut;
        total += ranked.filter(Boolean).length;
      }
      per.push(`split ${split} ${(hits / cut).toFixed(2)} (${hits}/${cut}, found ${hits}/${total})`);
      pooled.hits += hits;
      pooled.cut += cut;
      pooled.total += total;
    }
    console.log(`${reading.padEnd(8)} ${name.padEnd(30)} idf ${hindsight ? 'all 71' : 'held '}: ${per.join('  ')}  pooled ${(pooled.hits / pooled.cut).toFixed(2)}`);
  }
}
