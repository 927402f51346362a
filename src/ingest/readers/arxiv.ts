// Reader for arXiv listings: RSS 2.0 and Atom from rss.arxiv.org/{rss|atom}/<cats>, and the Atom
// of the query API (export.arxiv.org/api/query). The shapes are described in the README, "Paper sources".
// A feed with any malformed entry is refused whole (FEED_MALFORMED naming the entry and field).
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { AppError } from '../../errors.ts';
import type { IncomingBatch, IncomingPaper } from '../../types.ts';
import { LIMITS } from '../batch-schema.ts';
import { dayOf, normalizeArxivId, splitAuthors, tidyAbstract, tidyTitle, tidyWhitespace } from '../normalize.ts';

export type ArxivFeedKind = 'rss' | 'atom' | 'api';

export interface ArxivFeed {
  kind: ArxivFeedKind;
  /** The announcement day the feed names (its pubDate / updated), or null when it names none. */
  day: string | null;
  /** The categories of the listing when the feed says (rss.arxiv.org/rss/cs.LG+cs.CL -> ["cs.LG", "cs.CL"]). */
  categories: string[];
  papers: IncomingPaper[];
  /** Entries left out by announce type (replacements, and cross-lists unless asked for). */
  skipped: number;
  /** The query API's opensearch:totalResults (all pages), or null for listings. */
  total: number | null;
}

export interface ArxivReadOptions {
  source?: string;
  date?: string;
  /** Take `cross` announcements too (default: only `new`). Replacements are always left out. */
  includeCrossLists?: boolean;
}

export const ARXIV_ABS = 'https://arxiv.org/abs/';

/** Announce types of rss.arxiv.org: new | cross | replace | replace-cross | absonly. */
const ALWAYS_TAKEN = new Set(['new']);
/** An arXiv category (cs.LG, hep-th, astro-ph.CO); ACM and MSC classes in the API's category list are not. */
const CATEGORY = /^[a-z][a-z-]*(?:\.[A-Za-z][A-Za-z-]*)?$/;
/** Elements that may repeat; always read as arrays (namespace prefixes are removed: dc:creator -> creator). */
const REPEATED = new Set(['item', 'entry', 'author', 'category', 'link', 'creator']);

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  // Keep text as text: the id 2501.00010 must not become the number 2501.0001.
  parseTagValue: false,
  parseAttributeValue: false,
  removeNSPrefix: true,
  trimValues: true,
  isArray: (name) => REPEATED.has(name),
});

type Node = Record<string, unknown>;

function malformed(detail: string): AppError {
  return new AppError('FEED_MALFORMED', `Invalid arXiv feed: ${detail}`);
}

/** The text of an element, whether it came as a string, an array of one, or an object with attributes. */
function text(node: unknown): string | undefined {
  if (node === undefined || node === null) return undefined;
  if (typeof node === 'string') return node;
  if (typeof node === 'number' || typeof node === 'boolean') return String(node);
  if (Array.isArray(node)) return text(node[0]);
  if (typeof node === 'object' && '#text' in node) return text((node as Node)['#text']);
  return undefined;
}

function list(node: unknown): unknown[] {
  if (node === undefined || node === null || node === '') return [];
  return Array.isArray(node) ? node : [node];
}

function attr(node: unknown, name: string): string | undefined {
  if (node && typeof node === 'object' && !Array.isArray(node)) {
    const v = (node as Node)[`@_${name}`];
    return typeof v === 'string' ? v : undefined;
  }
  return undefined;
}

function parseXml(xml: string): Node {
  const valid = XMLValidator.validate(xml);
  if (valid !== true) {
    const { line, col, msg } = valid.err;
    // Several unclosed elements at the end: the validator lists them as a JSON array.
    const unclosed = /^Invalid '(\[.*\])' found\.$/.exec(msg);
    if (unclosed) {
      const names = (JSON.parse(unclosed[1]!) as string[]).map((n) => `<${n}>`).join(', ');
      throw malformed(`not well-formed XML: the document ends inside ${names} (truncated?)`);
    }
    if (/^Unclosed tag/.test(msg)) throw malformed(`not well-formed XML at line ${line}: ${msg} (truncated?)`);
    throw malformed(`not well-formed XML at line ${line} column ${col}: ${msg}`);
  }
  try {
    return parser.parse(xml) as Node;
  } catch (e) {
    // Well-formed but refused by the parser (for example entity expansion limits).
    throw malformed(`cannot read the XML: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** The most frequent value (ties: the latest), or null. */
function mostCommon(values: (string | null)[]): string | null {
  const counts = new Map<string, number>();
  for (const v of values) if (v) counts.set(v, (counts.get(v) ?? 0) + 1);
  let best: string | null = null;
  let bestCount = 0;
  for (const [v, n] of counts) if (n > bestCount || (n === bestCount && best !== null && v > best)) [best, bestCount] = [v, n];
  return best;
}

/** "cs.LG+cs.CL" from a listing URL such as http://rss.arxiv.org/rss/cs.LG+cs.CL. */
function categoriesFromUrl(url: string | undefined): string[] {
  const last = url?.split(/[?#]/)[0]?.split('/').filter(Boolean).at(-1);
  if (!last) return [];
  const cats = last.split('+');
  return cats.every((c) => CATEGORY.test(c)) ? cats : [];
}

/** "arXiv:2511.01234v1 Announce Type: new \nAbstract: …" -> "…" */
function stripAnnouncePrefix(summary: string): string {
  return summary.replace(/^\s*arXiv:\S+\s+Announce Type:\s*\S+\s*/i, '').replace(/^\s*Abstract:\s*/i, '');
}

interface RawEntry {
  place: string;
  id: string | undefined;
  title: string | undefined;
  summary: string;
  authors: string[];
  categories: string[];
  announceType: string | undefined;
  published: string | null;
}

function toPaper(e: RawEntry): IncomingPaper {
  if (!e.id) throw malformed(`${e.place}.id: required`);
  const key = normalizeArxivId(e.id);
  if (!key) throw malformed(`${e.place}.id: not an arXiv id (${JSON.stringify(e.id.slice(0, 80))})`);
  const title = tidyTitle(e.title ?? '');
  if (title === '') throw malformed(`${e.place}.title: required`);
  if (title.length > LIMITS.title) throw malformed(`${e.place}.title: too long (at most ${LIMITS.title} characters)`);
  const abstract = tidyAbstract(stripAnnouncePrefix(e.summary));
  if (abstract.length > LIMITS.abstract) throw malformed(`${e.place}.summary: too long (at most ${LIMITS.abstract} characters)`);
  const categories = [...new Set(e.categories.map((c) => c.trim()).filter((c) => CATEGORY.test(c)))];
  return {
    key,
    title,
    abstract,
    authors: e.authors.slice(0, LIMITS.authors),
    url: ARXIV_ABS + key,
    publishedAt: e.published,
    upvotes: 0,
    categories: categories.slice(0, LIMITS.categories),
  };
}

function rssEntries(channel: Node): RawEntry[] {
  return list(channel.item).map((raw, i) => {
    const item = (raw ?? {}) as Node;
    return {
      place: `item[${i}]`,
      id: text(item.guid) ?? text(item.link),
      title: text(item.title),
      summary: text(item.description) ?? '',
      authors: list(item.creator).flatMap((c) => splitAuthors(text(c) ?? '')),
      categories: list(item.category).map((c) => text(c) ?? ''),
      announceType: text(item.announce_type)?.trim().toLowerCase(),
      published: dayOf(text(item.pubDate)),
    };
  });
}

function atomEntries(feed: Node): RawEntry[] {
  return list(feed.entry).map((raw, i) => {
    const entry = (raw ?? {}) as Node;
    const creators = list(entry.creator).flatMap((c) => splitAuthors(text(c) ?? ''));
    const names = list(entry.author).map((a) => text((a as Node | undefined)?.name) ?? '');
    // rss.arxiv.org's Atom lists every author in one dc:creator; the API gives one <author> each.
    const authors = creators.length > 0 ? creators : names.length === 1 ? splitAuthors(names[0]!) : names.map(tidyWhitespace);
    const primary = attr(entry.primary_category, 'term');
    return {
      place: `entry[${i}]`,
      id: text(entry.id),
      title: text(entry.title),
      summary: text(entry.summary) ?? '',
      authors: authors.filter((a) => a !== ''),
      categories: [...(primary ? [primary] : []), ...list(entry.category).map((c) => attr(c, 'term') ?? text(c) ?? '')],
      announceType: text(entry.announce_type)?.trim().toLowerCase(),
      published: dayOf(text(entry.published)) ?? dayOf(text(entry.updated)),
    };
  });
}

/** Parses an arXiv RSS/Atom/API document: the papers to take, the day it names, what was skipped. */
export function readArxivFeed(xml: string, opts: { includeCrossLists?: boolean } = {}): ArxivFeed {
  const doc = parseXml(xml);
  let kind: ArxivFeedKind;
  let entries: RawEntry[];
  let day: string | null;
  let categories: string[];
  let total: number | null = null;
  if (doc.rss !== undefined) {
    const channel = ((doc.rss as Node | undefined)?.channel ?? undefined) as Node | undefined;
    if (!channel || typeof channel !== 'object') throw malformed('rss: no <channel>');
    kind = 'rss';
    entries = rssEntries(channel);
    day = dayOf(text(channel.pubDate)) ?? dayOf(text(channel.lastBuildDate)) ?? mostCommon(entries.map((e) => e.published));
    const links = list(channel.link).map((l) => attr(l, 'href') ?? text(l));
    categories = links.map(categoriesFromUrl).find((c) => c.length > 0) ?? [];
  } else if (doc.feed !== undefined) {
    const feed = (typeof doc.feed === 'object' && doc.feed !== null ? doc.feed : {}) as Node;
    entries = atomEntries(feed);
    const errorEntry = list(feed.entry).find((e) => /\/api\/errors/.test(text((e as Node).id) ?? ''));
    if (errorEntry) throw malformed(`the arXiv API answered an error: ${tidyWhitespace(text((errorEntry as Node).summary) ?? '')}`);
    const isApi = feed.totalResults !== undefined || /\/api\//.test(text(feed.id) ?? '');
    kind = isApi ? 'api' : 'atom';
    const totalText = text(feed.totalResults);
    total = totalText !== undefined && /^\d+$/.test(totalText.trim()) ? Number(totalText) : null;
    const updated = dayOf(text(feed.updated));
    day = isApi
      ? (updated ?? ([...entries.map((e) => e.published)].sort().at(-1) ?? null))
      : (mostCommon(entries.map((e) => e.published)) ?? updated);
    categories = [text(feed.id), ...list(feed.link).map((l) => attr(l, 'href'))].map(categoriesFromUrl).find((c) => c.length > 0) ?? [];
  } else {
    throw malformed(`not an RSS or Atom document (root element <${Object.keys(doc).find((k) => !k.startsWith('?')) ?? 'none'}>)`);
  }

  const papers: IncomingPaper[] = [];
  const seen = new Set<string>();
  let skipped = 0;
  for (const e of entries) {
    const paper = toPaper(e); // validate every entry, taken or not: a partial feed is refused whole
    const type = e.announceType;
    const taken = type === undefined || ALWAYS_TAKEN.has(type) || (type === 'cross' && opts.includeCrossLists === true);
    if (!taken || seen.has(paper.key)) {
      skipped++;
      continue;
    }
    seen.add(paper.key);
    papers.push(paper);
  }
  if (papers.length > LIMITS.papers) throw malformed(`too many entries (at most ${LIMITS.papers})`);
  return { kind, day, categories, papers, skipped, total };
}

/** An arXiv feed as an IncomingBatch. The date is opts.date, else the day the feed names. */
export function readArxiv(xml: string, opts: ArxivReadOptions = {}): IncomingBatch {
  const feed = readArxivFeed(xml, opts);
  const date = opts.date ?? feed.day;
  if (!date) throw malformed('the feed names no day (no pubDate, lastBuildDate or updated): pass a date');
  const source = opts.source ?? (feed.kind === 'api' ? 'arxiv-api' : feed.categories.length > 0 ? `arxiv:${feed.categories.join('+')}` : 'arxiv');
  return { source, date, papers: feed.papers };
}
