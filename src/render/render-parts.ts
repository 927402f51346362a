// The subscriber-independent pieces of a paper card (escaped, highlighted, trimmed). The email's cards
// are built from them once per (paper, set of matched topics) and run, in card-cache.ts.
import type { Paper } from '../types.ts';
import type { Highlighter } from '../match/highlight.ts';
import { HIGHLIGHT_CLOSE, HIGHLIGHT_OPEN } from './card-highlight.ts';
import {
  authorsLine,
  displayDate,
  escapeHtml,
  leadSentences,
  plural,
  safeHref,
  tidy,
  trimOnWord,
  wrapText,
} from './render-format.ts';

/**
 * Abstracts in emails are their first sentence or two, at most about this many characters (the whole
 * abstract is on the web view): a card then reads in a few seconds on a phone.
 */
export const EMAIL_ABSTRACT_CHARS = 300;
/** Titles longer than this (broken feeds) are cut so one card can never fill an email. */
const TITLE_MAX_CHARS = 300;
/** Plain-text abstracts are wrapped at this width, indented under the paper number. */
const TEXT_WIDTH = 72;
const TEXT_INDENT = '   ';


export type Highlight = Highlighter;

/** What a card shows of a paper (no ids: the links are made by the caller). */
export type PaperInput = Pick<Paper, 'title' | 'url' | 'authors' | 'abstract' | 'upvotes' | 'categories' | 'publishedAt'> & {
  /** The paper's code repository: a "Code" link when present. */
  codeUrl?: string | null | undefined;
};

/** What the card templates need from a paper, already safe to insert. */
export interface PaperParts {
  /** Escaped HTML with highlight spans. */
  titleHtml: string;
  abstractHtml: string;
  /** Plain text (for the text part; escaped again by Handlebars when used in HTML). */
  title: string;
  abstractText: string;
  url: string;
  hasUrl: boolean;
  authors: string;
  categories: string;
  date: string;
  upvotes: number;
  /** "▲ 12 upvotes · cs.LG, cs.CL · 2025-11-24", parts left out when unknown. */
  meta: string;
  /** The code repository link ('#' when none or not http(s)). */
  codeUrl: string;
  hasCode: boolean;
}

/** A Map that forgets its oldest entries past `max`. */
export class BoundedCache<V> {
  private readonly map = new Map<string, V>();
  constructor(private readonly max: number) {}
  get(key: string): V | undefined {
    return this.map.get(key);
  }
  set(key: string, value: V): void {
    if (this.map.size >= this.max && !this.map.has(key)) {
      const oldest = this.map.keys().next();
      if (!oldest.done) this.map.delete(oldest.value);
    }
    this.map.set(key, value);
  }
  get size(): number {
    return this.map.size;
  }
}

/** Escaped HTML of `text` with the highlighter's hits wrapped in a highlight span. */
export function highlightHtml(text: string, highlight: Highlight | null): string {
  if (highlight === null || text === '') return escapeHtml(text);
  let segments: ReturnType<Highlight>;
  try {
    segments = highlight(text);
  } catch {
    return escapeHtml(text);
  }
  let out = '';
  let length = 0;
  for (const s of segments) {
    length += s.text.length;
    out += s.hit && s.text !== '' ? HIGHLIGHT_OPEN + escapeHtml(s.text) + HIGHLIGHT_CLOSE : escapeHtml(s.text);
  }
  // A highlighter that lost or invented text must not change what the reader sees.
  return length === text.length ? out : escapeHtml(text);
}

/** The abstract as a card shows it: whole (web view, max Infinity), or its lead sentences. */
export function emailAbstract(abstract: string, max: number = EMAIL_ABSTRACT_CHARS): string {
  const tidied = tidy(abstract);
  return Number.isFinite(max) ? leadSentences(tidied, max) : tidied;
}

export function buildParts(paper: PaperInput, highlight: Highlight | null, abstractMax: number): PaperParts {
  const title = trimOnWord(tidy(paper.title), TITLE_MAX_CHARS);
  const abstract = emailAbstract(paper.abstract, abstractMax);
  const url = safeHref(paper.url);
  const upvotes = Number.isFinite(paper.upvotes) ? Math.max(0, Math.trunc(paper.upvotes)) : 0;
  const categories = paper.categories.map(tidy).filter((c) => c !== '').join(', ');
  const date = displayDate(paper.publishedAt);
  const codeUrl = paper.codeUrl ? safeHref(paper.codeUrl) : '#';
  const meta = [upvotes > 0 ? `▲ ${plural(upvotes, 'upvote', 'upvotes')}` : '', categories, date]
    .filter((m) => m !== '')
    .join(' · ');
  return {
    titleHtml: highlightHtml(title, highlight),
    abstractHtml: highlightHtml(abstract, highlight),
    title,
    abstractText: wrapText(abstract, TEXT_WIDTH, TEXT_INDENT),
    url,
    hasUrl: url !== '#',
    authors: authorsLine(paper.authors),
    categories,
    date,
    upvotes,
    meta,
    codeUrl,
    hasCode: codeUrl !== '#',
  };
}

/** Same content: compared field by field (identical strings from one row compare by pointer). */
/**
 * A paper's own fields (those samePaper compares), copied: what the card cache keeps of the paper a digest
 * handed in, which is that digest's view (DigestLoader's LoadedPaper, whose feedback source holds the
 * whole digest: subscriber, token, topic maps). Kept as it was, every entry held one digest alive for the
 * run (a heap snapshot of a friendly sending thread: ~1,000 entries, ~1,000 digests' views).
 */
export function copyPaperInput(p: PaperInput): PaperInput {
  return {
    title: p.title,
    url: p.url,
    authors: p.authors,
    abstract: p.abstract,
    upvotes: p.upvotes,
    categories: p.categories,
    publishedAt: p.publishedAt,
    codeUrl: p.codeUrl,
  };
}

export function samePaper(a: PaperInput, b: PaperInput): boolean {
  return (
    a.title === b.title &&
    a.abstract === b.abstract &&
    a.upvotes === b.upvotes &&
    a.publishedAt === b.publishedAt &&
    (a.codeUrl ?? null) === (b.codeUrl ?? null) &&
    sameList(a.authors, b.authors) &&
    sameList(a.categories, b.categories)
  );
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
