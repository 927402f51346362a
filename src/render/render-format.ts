// Small pure helpers the renderer uses to turn feed strings into safe, readable pieces:
// HTML escaping, http(s)-only links, abstract trimming, author lines, text wrapping, subjects.
import { plural } from '../words.ts';

/** One HTML escaper for the whole service (src/html.ts). */
export { escapeHtml } from '../html.ts';

/** A link for an href: http(s) only; anything else (javascript:, data:, relative, garbage) becomes '#'. */
/**
 * A URL that WHATWG URL parsing leaves exactly as it is: http(s), a lowercase host whose last label starts
 * with a letter (so never read as an IPv4 number) and no punycode label (URL validates those), no port, no userinfo, and a path of unreserved
 * characters with no "." or ".." segment, or a query of unreserved characters and =&. Parsing one costs
 * ~1 µs; a digest has three such links per paper (tests/unit/render-format.test.ts checks the claim
 * against URL on generated inputs).
 */
const CANONICAL_URL =
  /^https?:\/\/(?![^/]*xn--)(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)*[a-z](?:[a-z0-9-]*[a-z0-9])?\/(?:[A-Za-z0-9_~-][A-Za-z0-9._~-]*(?:\/[A-Za-z0-9_~-][A-Za-z0-9._~-]*)*\/?)?(?:\?[A-Za-z0-9._~=&-]*)?$/;

export function safeHref(url: string | null | undefined): string {
  if (typeof url !== 'string') return '#';
  // Our own links (PUBLIC_URL + token paths) and most feed URLs: already what URL would make of them.
  if (CANONICAL_URL.test(url)) return url;
  const trimmed = url.trim();
  if (!/^https?:\/\//i.test(trimmed)) return '#';
  try {
    const parsed = new URL(trimmed);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.href : '#';
  } catch {
    return '#';
  }
}

/** Whitespace tidy() would change: any but a plain space, two spaces, or a space at either end. */
const UNTIDY = /[^\S ]| {2}|^ | $/;

/**
 * Collapses runs of whitespace (newlines and tabs from feeds included) into single spaces. Most texts it
 * sees are tidy already (a digest asks for each paper's first author, ~50 times): those are returned as
 * they are, found by one scan that makes nothing, instead of a copy made by replace() and trim().
 */
export function tidy(text: string): string {
  return UNTIDY.test(text) ? text.replace(/\s+/g, ' ').trim() : text;
}

/**
 * Shortens text to about `max` characters, cutting on a word boundary and adding "…".
 * Text up to 10% longer than `max` is kept whole: cutting three words helps nobody.
 */
export function trimOnWord(text: string, max: number): string {
  if (text.length <= max * 1.1) return text;
  const cut = text.slice(0, max + 1);
  const lastSpace = cut.lastIndexOf(' ');
  const head = lastSpace > max * 0.6 ? cut.slice(0, lastSpace) : text.slice(0, max);
  return `${head.replace(/[\s,;:.\-–—]+$/, '')}…`;
}

/**
 * The first sentence or two of an abstract, at most about `max` characters: as many whole sentences as
 * fit, or the first one cut on a word when even it is longer. A sentence ends at . ! or ? followed by a
 * space and a capital letter or digit ("e.g. this" and "Fig. 3a" rarely fool it; a cut is still a cut).
 */
export function leadSentences(text: string, max: number): string {
  if (text.length <= max) return text;
  const ends = /[.!?](?=\s+[\p{Lu}\d(])/gu;
  let best = 0;
  for (const m of text.matchAll(ends)) {
    const end = m.index + 1;
    if (end > max) break;
    best = end;
  }
  // One short sentence alone reads as a teaser, not a summary: then the cut text is the better lead.
  return best >= max * 0.4 ? `${text.slice(0, best)} …` : trimOnWord(text, max);
}

/** "A, B, C et al." for long author lists; the whole list otherwise. */
export function authorsLine(authors: readonly string[], shown = 3): string {
  const names = authors.map(tidy).filter((a) => a !== '');
  if (names.length <= shown + 1) return names.join(', ');
  return `${names.slice(0, shown).join(', ')} et al.`;
}

/** "2025-11-24" from an ISO date or date-time; other shapes are shown as given. */
export function displayDate(publishedAt: string | null): string {
  if (publishedAt === null) return '';
  const t = tidy(publishedAt);
  return /^\d{4}-\d{2}-\d{2}/.test(t) ? t.slice(0, 10) : t;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/**
 * The batch days of a digest's papers, as metadata: "papers of 25 Nov", "papers of 24–25 Nov",
 * "papers of 28 Nov – 2 Dec", "papers of 30 Dec 2025 – 2 Jan 2026". Empty for dates it cannot read.
 */
export function paperDaysLabel(days: { first: string; last: string } | undefined): string {
  if (!days) return '';
  const parse = (d: string) => {
    const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(d);
    return m && Number(m[2]) >= 1 && Number(m[2]) <= 12 ? { y: m[1]!, m: MONTHS[Number(m[2]) - 1]!, d: String(Number(m[3])) } : undefined;
  };
  const a = parse(days.first);
  const b = parse(days.last);
  if (!a || !b) return '';
  if (days.first === days.last) return `papers of ${a.d} ${a.m}`;
  if (a.y !== b.y) return `papers of ${a.d} ${a.m} ${a.y} – ${b.d} ${b.m} ${b.y}`;
  if (a.m !== b.m) return `papers of ${a.d} ${a.m} – ${b.d} ${b.m}`;
  return `papers of ${a.d}–${b.d} ${a.m}`;
}

/** Hard-wraps plain text at `width` columns on spaces, each line prefixed with `indent`. */
export function wrapText(text: string, width: number, indent = ''): string {
  const words = text.split(' ');
  const lines: string[] = [];
  let line = '';
  for (const word of words) {
    if (line === '') line = word;
    else if (line.length + 1 + word.length <= width) line += ` ${word}`;
    else {
      lines.push(line);
      line = word;
    }
  }
  if (line !== '') lines.push(line);
  return lines.map((l) => indent + l).join('\n');
}

export { plural };

/** Topic texts that matched, distinct, in order of first appearance (the display order of papers). */
export function topicsInOrder(papers: ReadonlyArray<{ matchedTopics: ReadonlyArray<{ text: string }> }>): string[] {
  // Distinct texts first (a broad digest names the same two or three topics ~200 times), then tidied.
  const raw = new Set<string>();
  for (const p of papers) for (const t of p.matchedTopics) raw.add(t.text);
  return distinctTopics(raw);
}

/** Topic texts tidied, each once, in order, none empty. */
export function distinctTopics(texts: Iterable<string>): string[] {
  const seen = new Set<string>();
  for (const t of texts) seen.add(tidy(t));
  seen.delete('');
  return [...seen];
}

const SUBJECT_TOPIC_MAX = 40;
const SUBJECT_TOPICS_MAX_CHARS = 60;

/**
 * "3 new papers on speculative decoding, MoE — 2025-11-25": the count, the first one or two topics
 * (shortened), "and more" when there are others, and the edition date. One line, short.
 */
export function digestSubject(paperCount: number, topics: readonly string[], edition: string): string {
  const count = plural(paperCount, 'new paper', 'new papers');
  const named: string[] = [];
  let chars = 0;
  for (const topic of topics.slice(0, 2)) {
    const short = trimOnWord(topic, SUBJECT_TOPIC_MAX);
    if (named.length > 0 && chars + short.length > SUBJECT_TOPICS_MAX_CHARS) break;
    named.push(short);
    chars += short.length + 2;
  }
  const rest = topics.length > named.length ? ' and more' : '';
  const on = named.length > 0 ? ` on ${named.join(', ')}${rest}` : '';
  return `${count}${on} — ${tidy(edition)}`;
}
