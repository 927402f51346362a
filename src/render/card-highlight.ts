// Highlights that differ per reader inside card bytes that do not. A paper's card is built once per run
// with every topic known to have matched it (the run's topics for that paper, from the loader, plus any
// reader's topic seen since); each highlightable stretch of the title or abstract becomes a slot that
// names the topics whose words it is. Per reader, a slot is opened (the highlight span's bytes, encoded
// once, inserted) only when one of THEIR matched topics is among its topics: each reader sees exactly
// the highlights createHighlighter(their matched topics) would give, from one cache entry per paper.
//
// Why: keying the cache by (paper, reader's topic set) thrashed on broad topics, because the sets a paper
// is matched by are many; one entry per paper is ~1,000 entries for a 1,000-paper day.
// Measured: BENCHMARKS.md § Why the code is shaped this way, card-cache.ts.
import { highlightTerms, mergedRanges, termRanges, textWords, type HighlightTerms } from '../match/highlight.ts';
import { escapeHtml } from './render-format.ts';

/** Inline style so the highlight survives clients that drop <style> and <mark>. */
export const HIGHLIGHT_OPEN = '<span class="pd-hl" style="background-color:#fde68a;color:#111827;">';
export const HIGHLIGHT_CLOSE = '</span>';

/** Slot marks in filled template output; NUL cannot occur in escaped feed text. */
const MARK = /\u0000([oc])(\d+)\u0000/g;

/** One highlightable stretch: the topics (indices into the entry's topic list) whose words it is. */
export type SlotTopics = number[][];

/** The topic texts of a card, normalised for lookup (highlighting is case-insensitive anyway). */
export function topicKeyOf(text: string): string {
  // Asked for every matched topic of every paper shown (~100 times a digest) about a few thousand distinct
  // texts a run: remembered, as the regex pass cost ~1 µs each time.
  let key = topicKeys.get(text);
  if (key === undefined) {
    key = text.replace(/\s+/g, ' ').trim().toLowerCase();
    if (topicKeys.size >= TOPIC_KEYS_MAX) topicKeys.clear();
    topicKeys.set(text, key);
  }
  return key;
}

/** Distinct topic texts remembered by topicKeyOf (~100 bytes each); past it the memo starts over. */
const TOPIC_KEYS_MAX = 10_000;
const topicKeys = new Map<string, string>();

/** One topic's terms for markedHtml; null when they cannot be made (highlighting is decoration). */
export function makeTerms(text: string): HighlightTerms | null {
  try {
    return highlightTerms([text]);
  } catch {
    return null;
  }
}

/**
 * Escaped HTML of `text` with every stretch some topic's terms hit wrapped in open/close marks
 * of a new slot (appended to `slots` with the topics that hit it). Each topic's stretches are the ones
 * createHighlighter([topic]) marks; the text's words are read once for all of them.
 */
export function markedHtml(text: string, topics: ReadonlyArray<HighlightTerms | null>, slots: SlotTopics): string {
  if (text === '') return '';
  // Hit ranges per topic, as [start, end) character offsets.
  const words = wordsOf(text);
  const ranges: Array<Array<[number, number]>> = topics.map((terms) => hitRanges(words, terms));
  const cuts = new Set<number>([0, text.length]);
  for (const list of ranges) for (const [a, b] of list) cuts.add(a).add(b);
  const points = [...cuts].sort((x, y) => x - y);
  let out = '';
  for (let i = 0; i + 1 < points.length; i++) {
    const a = points[i]!;
    const b = points[i + 1]!;
    const piece = escapeHtml(text.slice(a, b));
    const hit: number[] = [];
    ranges.forEach((list, k) => {
      if (list.some(([s, e]) => s <= a && b <= e)) hit.push(k);
    });
    if (hit.length === 0 || text.slice(a, b).trim() === '') {
      out += piece;
      continue;
    }
    const id = slots.length;
    slots.push(hit);
    out += `\u0000o${id}\u0000${piece}\u0000c${id}\u0000`;
  }
  return out;
}

/** The text's words, or null when they cannot be read (then nothing is highlighted). */
function wordsOf(text: string): ReturnType<typeof textWords> | null {
  try {
    return textWords(text);
  } catch {
    return null;
  }
}

function hitRanges(words: ReturnType<typeof textWords> | null, terms: HighlightTerms | null): Array<[number, number]> {
  if (words === null || terms === null) return [];
  try {
    return mergedRanges(termRanges(words, terms));
  } catch {
    return [];
  }
}

/** Filled output cut at its slot marks: text pieces and slot references, in order. */
export function splitMarks(filled: string): Array<string | { slot: number; open: boolean }> {
  const out: Array<string | { slot: number; open: boolean }> = [];
  let at = 0;
  for (const m of filled.matchAll(MARK)) {
    out.push(filled.slice(at, m.index));
    out.push({ slot: Number(m[2]), open: m[1] === 'o' });
    at = m.index + m[0].length;
  }
  out.push(filled.slice(at));
  return out.filter((p) => p !== '');
}

/** The same text with the marks removed (for parts shown without highlights). */
export function withoutMarks(s: string): string {
  return s.replace(MARK, '');
}
