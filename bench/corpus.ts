// Synthetic but realistic benchmark data, derived from 71 real abstracts (bench/data/abstracts.json):
// - papers: each a variant of a real abstract (a few of its sentences, plus one or two borrowed from
//   another paper), so that topic phrases match a handful of papers each, as in a real day;
// - topic queries: 1-3 word n-grams of the real abstracts, typed as words (AND), "phrases" or
//   `"a" OR "b"`, drawn with a Zipf distribution so many subscribers share the popular ones.
//   Half of the subscribers get topics that match some of today's papers (5-30 per digest), the
//   other half topics from abstracts held out of today's papers (no digest today).
import { readFileSync } from 'node:fs';
import { stemToken, wordTokens } from '../src/match/normalize.ts';

export interface SourceAbstract {
  title: string;
  abstract: string;
  upvotes: number;
}

export interface BenchPaper {
  id: string;
  title: string;
  abstract: string;
  authors: string[];
  url: string;
  publishedAt: string;
  upvotes: number;
  categories: string[];
}

/** A topic as generated: the text a subscriber types, and its structure for the naive JS matcher. */
export interface BenchTopic {
  text: string;
  /** Alternatives (OR); each is a list of stemmed words, as a phrase or as words anywhere (AND). */
  any: Array<{ words: string[]; phrase: boolean }>;
}

export const ABSTRACTS_FILE = new URL('./data/abstracts.json', import.meta.url);

export function loadAbstracts(): SourceAbstract[] {
  return (JSON.parse(readFileSync(ABSTRACTS_FILE, 'utf8')) as { papers: SourceAbstract[] }).papers;
}

/** Small, fast, seeded PRNG (mulberry32): the same options give the same data. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Draws ranks 0..n-1 with probability proportional to 1/(rank+1)^s (inverse CDF over a table). */
export function zipf(n: number, s: number, random: () => number): () => number {
  const cdf = new Float64Array(n);
  let sum = 0;
  for (let i = 0; i < n; i++) cdf[i] = sum += 1 / Math.pow(i + 1, s);
  return () => {
    const x = random() * sum;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

const STOP = new Set(
  ('a an the and or of for in on to with by from as at is are was were be been being this that these those ' +
    'we our us it its their they them which who whom whose what when where how than then such via into onto ' +
    'can could may might will would should must has have had do does did not no nor but also both each ' +
    'other more most many much very only over under while using use used based new show shows shown propose ' +
    'proposed present paper work results approach method methods however furthermore moreover thus well ' +
    'across between within without two three one first second existing prior recent significantly state art')
    .split(' '),
);

const sentencesOf = (text: string): string[] => text.split(/(?<=[.!?])\s+(?=[A-Z0-9])/).filter((s) => s.length > 20);

const FIRST = ['Wei', 'Ana', 'Jonas', 'Priya', 'Kenji', 'Fatima', 'Lucas', 'Mei', 'Omar', 'Sofia', 'Ivan', 'Chloé', 'Arjun', 'Lena'];
const LAST = ['Zhang', 'García', 'Müller', 'Patel', 'Tanaka', 'Haddad', 'Silva', 'Chen', 'Rossi', 'Kowalski', 'Nguyen', 'Dubois'];
const CATEGORIES = ['cs.LG', 'cs.CL', 'cs.CV', 'cs.AI', 'stat.ML', 'cs.RO', 'cs.MA'];
/** How many of today's papers an active topic matches (a subscriber has several topics). */
const ACTIVE_MIN = 2;
const ACTIVE_MAX = 7;

const TITLE_TAILS = ['', '', '', ': An Empirical Study', ': A Closer Look', ' Revisited', ' at Scale', ': Lessons Learned'];

export interface Corpus {
  papers: BenchPaper[];
  /** Topics that match some of today's papers, most popular first. */
  activeTopics: BenchTopic[];
  /** Topics from held-out abstracts: they match none of today's papers. */
  quietTopics: BenchTopic[];
  /**
   * The broad profile (`--topics-profile broad`): common two-word phrases typed as words ("language
   * models", "reinforcement learning"), each matching BROAD_MIN-BROAD_MAX of today's papers, most
   * popular first: three of them give a digest of ~150-250 papers, as researchers' real topics do on a
   * big arXiv day (issue 10).
   */
  broadTopics: BenchTopic[];
  /**
   * The diverse profile (`--topics-profile diverse`): the DIVERSE_PHRASES two-word phrases found in the
   * most of today's papers (no stop word at either end), each typed quoted ("self play"), most frequent
   * first. Drawn with a mild Zipf skew (generate.ts), three of them give ~150-250 papers, and readers
   * rarely share all three: thousands of distinct phrases, nearly one topic set per reader.
   */
  diverseTopics: BenchTopic[];
}

/** Distinct phrases of the diverse profile (issue 41's population: the ~3,000 most frequent). */
export const DIVERSE_PHRASES = 3_000;

/** Share of today's papers a broad topic matches. */
const BROAD_MIN = 0.04;
const BROAD_MAX = 0.1;

/**
 * Builds `count` papers dated `date` and the topic pools. Every fifth abstract is held out of the papers
 * (its phrases make the quiet pool). A topic is active when it matches ACTIVE_MIN-ACTIVE_MAX of the papers
 * (by the same stemming as FTS5), so a subscriber with three of them gets about 5-30 papers.
 */
export function buildCorpus(abstracts: SourceAbstract[], count: number, date: string, random: () => number): Corpus {
  const bases = abstracts.filter((_, i) => i % 5 !== 4);
  const heldOut = abstracts.filter((_, i) => i % 5 === 4);
  const baseSentences = bases.map((b) => sentencesOf(b.abstract));
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;

  const papers: BenchPaper[] = [];
  for (let i = 0; i < count; i++) {
    const b = Math.floor(random() * bases.length);
    const own = baseSentences[b]!.filter(() => random() < 0.45);
    if (own.length === 0) own.push(baseSentences[b]![0]!);
    const borrowed = Array.from({ length: 1 + Math.floor(random() * 2) }, () => pick(pick(baseSentences)));
    const id = `2511.${String(10000 + i).padStart(5, '0')}`;
    papers.push({
      id,
      title: bases[b]!.title + pick(TITLE_TAILS),
      abstract: [...own, ...borrowed].join(' '),
      authors: Array.from({ length: 2 + Math.floor(random() * 5) }, () => `${pick(FIRST)} ${pick(LAST)}`),
      url: `https://arxiv.org/abs/${id}`,
      publishedAt: date,
      upvotes: Math.floor(Math.pow(random(), 3) * 200),
      categories: [...new Set([pick(CATEGORIES), pick(CATEGORIES)])],
    });
  }

  const index = new PaperIndex(papers);
  const popularity = documentFrequency(abstracts);
  // Most popular first: phrases found in more of the real abstracts, two-word phrases before longer ones and before single words.
  const shape = (g: string) => [0, 0, 2, 1][g.split(' ').length] ?? 0;
  const candidates = (texts: SourceAbstract[]) =>
    [...new Set(texts.flatMap((t) => ngrams(`${t.title}. ${t.abstract}`)))].sort(
      (a, b) => (popularity.get(b) ?? 0) - (popularity.get(a) ?? 0) || shape(b) - shape(a) || (a < b ? -1 : 1),
    );

  const activeTopics: BenchTopic[] = [];
  const quietTopics: BenchTopic[] = [];
  for (const gram of candidates(bases)) {
    const words = gram.split(' ');
    const asPhrase = words.length > 1 && random() < 0.4;
    const topic: BenchTopic = { text: asPhrase ? `"${gram}"` : gram, any: [{ words: words.map(stemToken), phrase: asPhrase }] };
    const n = index.count(topic);
    if (n >= ACTIVE_MIN && n <= ACTIVE_MAX) activeTopics.push(topic);
  }
  for (const gram of candidates(heldOut)) {
    const words = gram.split(' ');
    const topic: BenchTopic = { text: gram, any: [{ words: words.map(stemToken), phrase: false }] };
    if (index.count(topic) === 0) quietTopics.push(topic);
  }
  // Some subscribers write alternatives: "a" OR "b" from two neighbouring active topics.
  for (let i = 0; i + 1 < activeTopics.length; i += 10) {
    const [a, b] = [activeTopics[i]!, activeTopics[i + 1]!];
    const quote = (t: BenchTopic) => (t.text.startsWith('"') ? t.text : `"${t.text}"`);
    const topic: BenchTopic = {
      text: `${quote(a)} OR ${quote(b)}`,
      any: [...a.any, ...b.any].map((x) => ({ words: x.words, phrase: true })),
    };
    const n = index.count(topic);
    if (n >= ACTIVE_MIN && n <= ACTIVE_MAX + 2) activeTopics.splice(i + 2, 0, topic);
  }
  const broadTopics: BenchTopic[] = [];
  for (const gram of candidates(bases)) {
    const words = gram.split(' ');
    if (words.length !== 2 || (popularity.get(gram) ?? 0) < 3) continue;
    const topic: BenchTopic = { text: gram, any: [{ words: words.map(stemToken), phrase: false }] };
    const n = index.count(topic);
    if (n >= BROAD_MIN * count && n <= BROAD_MAX * count) broadTopics.push(topic);
  }
  return { papers, activeTopics, quietTopics, broadTopics, diverseTopics: diversePhrases(papers) };
}

/** Two-word phrases by the number of papers holding them (ties by text: deterministic), quoted. */
function diversePhrases(papers: readonly BenchPaper[]): BenchTopic[] {
  const held = new Map<string, number>();
  for (const p of papers) {
    const seen = new Set<string>();
    for (const sentence of `${p.title}. ${p.abstract}`.replace(/https?:\/\/\S+/g, ' ').split(/[.;:!?()]/)) {
      const words = wordTokens(sentence);
      for (let i = 0; i + 1 < words.length; i++) {
        const [a, b] = [words[i]!, words[i + 1]!];
        if (STOP.has(a) || STOP.has(b) || !/^[a-z]{3,}$/.test(a) || !/^[a-z]{3,}$/.test(b)) continue;
        seen.add(`${a} ${b}`);
      }
    }
    for (const g of seen) held.set(g, (held.get(g) ?? 0) + 1);
  }
  return [...held.entries()]
    .sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1))
    .slice(0, DIVERSE_PHRASES)
    .map(([gram]) => ({ text: `"${gram}"`, any: [{ words: gram.split(' ').map(stemToken), phrase: true }] }));
}

/** 1-3 word n-grams inside sentences, not starting or ending on a stop word, letters only. */
function ngrams(text: string): string[] {
  const out: string[] = [];
  for (const sentence of text.replace(/https?:\/\/\S+/g, ' ').split(/[.;:!?()]/)) {
    const words = wordTokens(sentence);
    for (let i = 0; i < words.length; i++) {
      for (let n = 1; n <= 3 && i + n <= words.length; n++) {
        const gram = words.slice(i, i + n);
        const first = gram[0]!;
        const last = gram[n - 1]!;
        if (STOP.has(first) || STOP.has(last) || gram.some((w) => !/^[a-z]{3,}$/.test(w))) continue;
        if (n === 1 && first.length < 6) continue;
        out.push(gram.join(' '));
      }
    }
  }
  return out;
}

function documentFrequency(abstracts: SourceAbstract[]): Map<string, number> {
  const df = new Map<string, number>();
  for (const a of abstracts) for (const g of new Set(ngrams(`${a.title}. ${a.abstract}`))) df.set(g, (df.get(g) ?? 0) + 1);
  return df;
}

/** Stemmed tokens of each paper, for counting matches the way FTS5 (porter, unicode61) does. */
export class PaperIndex {
  private readonly tokens: string[][];
  private readonly sets: Array<Set<string>>;
  private readonly postings = new Map<string, number[]>();

  constructor(papers: ReadonlyArray<{ title: string; abstract: string }>) {
    this.tokens = papers.map((p) => [...wordTokens(p.title), '\u0000', ...wordTokens(p.abstract)].map((w) => (w === '\u0000' ? w : stemToken(w))));
    this.sets = this.tokens.map((t) => new Set(t));
    this.tokens.forEach((_, i) => {
      for (const w of this.sets[i]!) {
        const list = this.postings.get(w);
        if (list) list.push(i);
        else this.postings.set(w, [i]);
      }
    });
  }

  get size(): number {
    return this.tokens.length;
  }

  matches(i: number, topic: BenchTopic): boolean {
    return topic.any.some((alt) => (alt.phrase ? hasPhrase(this.tokens[i]!, alt.words) : alt.words.every((w) => this.sets[i]!.has(w))));
  }

  /** Papers matching a topic, through posting lists (fast enough to score tens of thousands of candidates). */
  count(topic: BenchTopic): number {
    const hits = new Set<number>();
    for (const alt of topic.any) {
      let candidates: number[] | undefined;
      for (const w of alt.words) {
        const list = this.postings.get(w) ?? [];
        const inList = new Set(list);
        candidates = candidates === undefined ? list : candidates.filter((i) => inList.has(i));
      }
      for (const i of candidates ?? []) if (!alt.phrase || hasPhrase(this.tokens[i]!, alt.words)) hits.add(i);
    }
    return hits.size;
  }
}

function hasPhrase(tokens: string[], words: string[]): boolean {
  outer: for (let i = 0; i + words.length <= tokens.length; i++) {
    for (let j = 0; j < words.length; j++) if (tokens[i + j] !== words[j]) continue outer;
    return true;
  }
  return false;
}

/** The naive matcher's view of a typed topic (only the forms this generator produces). */
export function topicFromText(text: string): BenchTopic {
  return {
    text,
    any: text.split(' OR ').map((alt) => {
      const phrase = alt.startsWith('"');
      return { words: wordTokens(alt).map(stemToken), phrase };
    }),
  };
}
