// Marks the words of a title or abstract that a subscriber's topics matched, the way FTS5 did:
// case- and accent-insensitive, Porter-stemmed, prefix terms, whole phrases (consecutive words).
import { parseTopic } from './parse.ts';
import { foldToken, stemToken, tokenRegex } from './normalize.ts';

export interface Segment {
  text: string;
  hit: boolean;
}

export type Highlighter = (text: string) => Segment[];

/** A term as stems; when `prefix`, the last stem only has to start a word's stem (FTS5 stems prefixes too). */
export interface StemmedTerm {
  stems: string[];
  prefix: boolean;
}

export interface Word {
  start: number;
  end: number;
  key: string;
}

/** Words whose key is remembered (per thread, for every highlighter); past this the memo starts over. */
const KEY_CACHE_LIMIT = 20_000;

/**
 * Words never marked alone: operators typed in lower case ("diffusion or flow" searches for the word
 * "or") and function words. A reader reads a marked word as "this is why it matched"; 4 of 75 marks in
 * one digest were "or" ("To Backtrack or Not to Backtrack"). Inside a phrase they are still marked
 * ("mixture of experts"): there the phrase matched, not the word.
 */
const NEVER_ALONE = new Set(
  ('a an and are as at be but by for from if in into is it its no nor not of on or so than that the their then there these ' +
    'this those to was were which with via vs versus').split(' '),
);

/**
 * A word's key: its folded stem ('' for a word of combining marks only). The same for every highlighter,
 * so one memo serves them all. Decision: each highlighter had its own memo (up to 20,000 words); a run
 * whose readers type thousands of distinct phrases keeps a highlighter per phrase, and their memos of the
 * same words were most of a sending thread's heap (the bench's diverse population: see BENCHMARKS.md).
 */
const wordKeys = new Map<string, string>();
function keyOf(word: string): string {
  let key = wordKeys.get(word);
  if (key === undefined) {
    if (wordKeys.size >= KEY_CACHE_LIMIT) wordKeys.clear();
    const folded = foldToken(word);
    key = folded === '' ? '' : stemToken(folded);
    wordKeys.set(word, key);
  }
  return key;
}

/** A topic list's terms, prepared once: looked up by their first word's stem, one-word prefixes apart. */
export interface HighlightTerms {
  byFirstStem: Map<string, StemmedTerm[]>;
  /** One-word prefix terms (`token*`): they cannot be looked up by exact stem. */
  prefixWords: string[];
}

/** The words of a text, each with its key (keyOf), in order: what every topic's terms are matched against. */
export type TextWords = Word[];

/**
 * Builds a highlighter for a subscriber's topics (invalid topics are ignored). Build it once per
 * subscriber and call it for every title and abstract: the terms and the word regex are prepared here.
 */
export function createHighlighter(topicTexts: string[]): Highlighter {
  const terms = highlightTerms(topicTexts);
  const wordRegex = tokenRegex();
  return (text: string): Segment[] => {
    if (text === '') return [];
    if (terms.byFirstStem.size === 0 && terms.prefixWords.length === 0) return [{ text, hit: false }];
    return segments(text, termRanges(textWords(text, wordRegex), terms));
  };
}

/** The terms of `topicTexts` (invalid topics are ignored), for termRanges. */
export function highlightTerms(topicTexts: readonly string[]): HighlightTerms {
  const byFirstStem = new Map<string, StemmedTerm[]>();
  const prefixWords: string[] = [];
  const seen = new Set<string>();
  for (const text of topicTexts) {
    let terms;
    try {
      terms = parseTopic(text).terms;
    } catch {
      continue;
    }
    for (const t of terms) {
      if (t.tokens.every((w) => NEVER_ALONE.has(w))) continue;
      const term: StemmedTerm = { stems: t.tokens.map(stemToken), prefix: t.prefix };
      const key = `${term.stems.join(' ')}${term.prefix ? '*' : ''}`;
      if (seen.has(key)) continue;
      seen.add(key);
      if (term.prefix && term.stems.length === 1) prefixWords.push(term.stems[0]!);
      else {
        const list = byFirstStem.get(term.stems[0]!) ?? [];
        list.push(term);
        byFirstStem.set(term.stems[0]!, list);
      }
    }
  }
  return { byFirstStem, prefixWords };
}

/**
 * A text's words, read once: a card is highlighted for every topic that matched its paper (~50 on a day
 * whose readers typed thousands of phrases), and scanning the abstract once per topic was most of a
 * card's build (BENCHMARKS.md, issue 41's fourth pass).
 */
export function textWords(text: string, wordRegex: RegExp = WORDS): TextWords {
  const words: Word[] = [];
  for (const m of text.matchAll(wordRegex)) {
    const key = keyOf(m[0]);
    if (key === '') continue; // only combining marks: not a token for FTS5 either
    words.push({ start: m.index, end: m.index + m[0].length, key });
  }
  return words;
}
/** textWords' default scanner (matchAll scans a copy: its lastIndex stays 0). */
const WORDS = tokenRegex();

/** Where `terms` hit `words`, as [start, end) character offsets, in word order, overlaps not merged. */
export function termRanges(words: TextWords, terms: HighlightTerms): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  const { byFirstStem, prefixWords } = terms;
  words.forEach((w, i) => {
    if (prefixWords.some((p) => w.key.startsWith(p))) ranges.push([w.start, w.end]);
    for (const term of byFirstStem.get(w.key) ?? []) {
      const last = words[i + term.stems.length - 1];
      if (last !== undefined && matchesAt(words, i, term)) ranges.push([w.start, last.end]);
    }
  });
  return ranges;
}

/** The stretches a highlighter marks, from termRanges: sorted, overlapping or touching ones merged (as segments() does). */
export function mergedRanges(ranges: Array<[number, number]>): Array<[number, number]> {
  if (ranges.length === 0) return ranges;
  ranges.sort((a, b) => a[0] - b[0]);
  const out: Array<[number, number]> = [];
  let [start, end] = ranges[0]!;
  for (let k = 1; k < ranges.length; k++) {
    const [s, e] = ranges[k]!;
    if (s <= end) end = Math.max(end, e);
    else {
      if (end > start) out.push([start, end]);
      [start, end] = [s, e];
    }
  }
  if (end > start) out.push([start, end]);
  return out;
}

function matchesAt(words: Word[], i: number, term: StemmedTerm): boolean {
  return term.stems.every((stem, j) => {
    const key = words[i + j]!.key;
    return term.prefix && j === term.stems.length - 1 ? key.startsWith(stem) : key === stem;
  });
}

/** Splits text into alternating plain and hit segments; overlapping or touching hits merge. */
function segments(text: string, ranges: Array<[number, number]>): Segment[] {
  if (ranges.length === 0) return [{ text, hit: false }];
  ranges.sort((a, b) => a[0] - b[0]);
  const out: Segment[] = [];
  let cursor = 0;
  let [start, end] = ranges[0]!;
  const flush = (): void => {
    if (start > cursor) out.push({ text: text.slice(cursor, start), hit: false });
    out.push({ text: text.slice(start, end), hit: true });
    cursor = end;
  };
  for (const [s, e] of ranges.slice(1)) {
    if (s <= end) end = Math.max(end, e);
    else {
      flush();
      [start, end] = [s, e];
    }
  }
  flush();
  if (cursor < text.length) out.push({ text: text.slice(cursor), hit: false });
  return out;
}
