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
interface StemmedTerm {
  stems: string[];
  prefix: boolean;
}

interface Word {
  start: number;
  end: number;
  key: string;
}

/** Words whose key is cached per highlighter; past this the cache starts over. */
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

/** The key of a word no term can match (keeps its place, so phrases still need consecutive words). */
const NO_MATCH = '\u0000';

/**
 * Builds a highlighter for a subscriber's topics (invalid topics are ignored). Build it once per
 * subscriber and call it for every title and abstract: the terms and the word regex are prepared here.
 */
export function createHighlighter(topicTexts: string[]): Highlighter {
  const byFirstStem = new Map<string, StemmedTerm[]>();
  /** One-word prefix terms (`token*`): they cannot be looked up by exact stem. */
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

  // Porter only rewrites endings and never leaves fewer than two letters, so a word's stem starts with
  // the same two letters as the word: only words starting like some term stem are worth stemming.
  const heads = new Set<string>();
  for (const term of [...byFirstStem.values()].flat()) for (const stem of term.stems) heads.add(stem.slice(0, 2));
  for (const stem of prefixWords) heads.add(stem.slice(0, 2));
  const couldMatch = (folded: string): boolean => heads.has(folded.slice(0, 2)) || heads.has(folded.slice(0, 1));

  const wordRegex = tokenRegex();
  const keys = new Map<string, string>();
  const keyOf = (word: string): string => {
    let key = keys.get(word);
    if (key === undefined) {
      if (keys.size >= KEY_CACHE_LIMIT) keys.clear();
      const folded = foldToken(word);
      key = folded === '' ? '' : couldMatch(folded) ? stemToken(folded) : NO_MATCH;
      keys.set(word, key);
    }
    return key;
  };

  return (text: string): Segment[] => {
    if (text === '') return [];
    if (byFirstStem.size === 0 && prefixWords.length === 0) return [{ text, hit: false }];
    const words: Word[] = [];
    for (const m of text.matchAll(wordRegex)) {
      const key = keyOf(m[0]);
      if (key === '') continue; // only combining marks: not a token for FTS5 either
      words.push({ start: m.index, end: m.index + m[0].length, key });
    }
    const ranges: Array<[number, number]> = [];
    words.forEach((w, i) => {
      if (prefixWords.some((p) => w.key.startsWith(p))) ranges.push([w.start, w.end]);
      for (const term of byFirstStem.get(w.key) ?? []) {
        const last = words[i + term.stems.length - 1];
        if (last !== undefined && matchesAt(words, i, term)) ranges.push([w.start, last.end]);
      }
    });
    return segments(text, ranges);
  };
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
