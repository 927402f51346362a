// The ledger row's parts as the loader (view.ts) reads them: its topics by bit, its suggestions and their
// reasons, the followed authors' bits, its record. Pure functions of the row's fields.
import { MAX_SUGGESTIONS } from '../feedback/suggest.ts';
import type { DigestRecord, DigestRowSql } from '../ledger/index.ts';
import type { DigestPaperView } from './render.ts';

/** A like: topic's terms (queries.like_terms) as a topic query whose words the highlighter marks. */
export function likeHighlightQuery(likeTerms: string): string {
  try {
    // Strongest terms first, as many as a topic query holds (200 characters): the highlighter parses it.
    const terms = JSON.parse(likeTerms) as Array<{ w: string }>;
    let query = '';
    for (const t of terms) {
      const next = `${query}${query === '' ? '' : ' OR '}"${t.w.replaceAll('"', '')}"`;
      if (next.length > 200) break;
      query = next;
    }
    return query;
  } catch {
    return '';
  }
}

/**
 * The row's known topic bits other than followed authors (`author:"Name"`, what the follow link adds), when
 * it has both kinds: a paper none of these matched is a followed author's alone, shown apart from the ranked
 * list, which stays the one without the follow. 0 (nothing apart) when the row follows no author or has no
 * other topic.
 */
export function listTopicBits(bitText: ReadonlyArray<string | undefined>, knownBits: number): number {
  let authors = 0;
  for (let bit = 0; bit < bitText.length; bit++) {
    const text = bitText[bit];
    if (text !== undefined && text.startsWith('author:"') && FOLLOWED_AUTHOR.test(text)) authors |= 1 << bit;
  }
  return authors === 0 ? 0 : knownBits & ~authors;
}

/** The ledger row's own fields, as LoadedDigest gives them. */
export function recordOf(r: DigestRowSql): DigestRecord {
  return {
    id: r.id,
    subscriberId: r.subscriber_id,
    edition: r.edition,
    status: r.status,
    fromPaper: r.from_paper,
    toPaper: r.to_paper,
    attempts: r.attempts,
    expired: r.items === null,
    verpNonce: r.verp_nonce,
  };
}
const FOLLOWED_AUTHOR = /^author:"[^"]*"$/;

/**
 * The row's suggested papers with their reasons, best first (score, then the lower id), from [[paper id,
 * score, reason], …]; without those the list already holds (`listed`: ranked inside it).
 */
export function bestSuggestions(json: string, listed?: ReadonlySet<number>): Array<[number, string | null]> {
  if (json === '[]') return [];
  let rows = JSON.parse(json) as Array<[number, number, string | null]>;
  if (listed !== undefined) rows = rows.filter((p) => !listed.has(p[0]));
  rows.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  return rows.slice(0, MAX_SUGGESTIONS).map((p) => [p[0], p[2] ?? null]);
}

/**
 * The row's topics by bit (bit i = rowTopics[i]) from the row's topics JSON: the text (undefined: deleted since
 * planning, not named) and a like: topic's highlight. Arrays of a few entries, not maps by topic id: a row has ~3 topics.
 */
export function topicsByBit(json: string, rowTopics: readonly number[]): { bitText: Array<string | undefined>; bitHighlight: Array<string | undefined> } {
  const bitText = new Array<string | undefined>(rowTopics.length).fill(undefined);
  const bitHighlight = new Array<string | undefined>(rowTopics.length).fill(undefined);
  for (const [id, text, likeTerms] of JSON.parse(json) as Array<[number, string, string | null]>) {
    for (let bit = 0; bit < rowTopics.length; bit++) {
      if (rowTopics[bit] !== id) continue;
      bitText[bit] = text;
      if (likeTerms !== null) bitHighlight[bit] = likeHighlightQuery(likeTerms);
    }
  }
  return { bitText, bitHighlight };
}

/** The texts of a mask's bits (bit i = texts[i]), in bit order, as maskIds gives the ids. */
export function textsOf(mask: number, texts: ReadonlyArray<string | undefined>): string[] {
  const out: string[] = [];
  for (let bit = 0; bit < texts.length; bit++) if (mask & (1 << bit)) out.push(texts[bit]!);
  return out;
}

/**
 * What a card of the list says of a suggestion instead of its matched topics: "suggested, because you liked
 * …" (the paper behind it), its link the preferences page (where suggestions are turned off), and nothing
 * highlighted ('' parses to no query).
 */
export function suggestedAs(because: string | null, preferences: string): DigestPaperView['matchedTopics'] {
  const text = because === null ? 'suggested by your model' : `suggested, because you liked \u201c${because}\u201d`;
  return [{ text, muteUrl: preferences, highlight: '', suggested: true }];
}
