// How each kind of source is asked for a day: Hugging Face by date, arXiv RSS/Atom for its latest
// announcement (the feed names the day), the arXiv query API by submission date.
import type { Config } from '../config.ts';
import { AppError } from '../errors.ts';
import type { IncomingPaper } from '../types.ts';
import { parseFeed } from './detect.ts';
import { fetchText, type FetchOptions } from './fetch.ts';
import { readArxivFeed } from './readers/arxiv.ts';
import type { SourceSpec } from './source-spec.ts';

/** What one fetch found. `not-yet`: the source says the day has not come (Hugging Face's 400 for a future date). */
export type DayFetch =
  | { outcome: 'papers'; day: string; papers: IncomingPaper[] }
  | { outcome: 'empty'; day: string; detail?: string }
  | { outcome: 'not-yet'; day: string; detail: string };

export type SourceConfig = Pick<
  Config,
  'HF_API_URL' | 'ARXIV_RSS_URL' | 'ARXIV_API_URL' | 'ARXIV_INCLUDE_CROSSLISTS' | 'FETCH_TIMEOUT_MS' | 'FETCH_RETRIES'
>;

/** Results per query API request, and the most read for one day (cs.* days run to a few thousand). */
export const ARXIV_API_PAGE = 1000;
export const ARXIV_API_MAX_RESULTS = 10_000;

function snippet(text: string): string {
  const s = text.replace(/\s+/g, ' ').trim();
  return s.length > 160 ? `${s.slice(0, 160)}…` : s;
}

function httpError(url: string, status: number, body: string): AppError {
  return new AppError('SOURCE_HTTP_ERROR', `GET ${url} answered HTTP ${status}${body ? `: ${snippet(body)}` : ''}`, {
    temporary: status === 408,
  });
}

/** How Hugging Face refuses a day that has not come (for today or later only; for a past day they are errors). */
const NOT_YET_STATUSES = new Set([400, 404, 422]);

/** Hugging Face daily papers for one day. */
export async function fetchHfDay(spec: SourceSpec, day: string, today: string, config: SourceConfig, fo: FetchOptions): Promise<DayFetch> {
  const url = `${config.HF_API_URL}?date=${day}`;
  const r = await fetchText(url, fo);
  if (NOT_YET_STATUSES.has(r.status) && day >= today) return { outcome: 'not-yet', day, detail: `HTTP ${r.status}: ${snippet(r.text)}` };
  if (r.status < 200 || r.status >= 300) throw httpError(url, r.status, r.text);
  const batch = parseFeed(r.text, 'hf', { source: spec.name, date: day });
  return batch.papers.length === 0 ? { outcome: 'empty', day, detail: 'no papers listed' } : { outcome: 'papers', day, papers: batch.papers };
}

/**
 * The latest arXiv announcement for the spec's categories (rss.arxiv.org/rss/cs.LG+cs.CL). RSS has no date
 * parameter: the day is the one the feed names; an empty feed (weekend, holiday) is `empty` for `today`.
 */
export async function fetchArxivListing(spec: SourceSpec, today: string, config: SourceConfig, fo: FetchOptions): Promise<DayFetch> {
  const url = `${config.ARXIV_RSS_URL}/${spec.categories.join('+')}`;
  const r = await fetchText(url, fo);
  if (r.status < 200 || r.status >= 300) throw httpError(url, r.status, r.text);
  const feed = readArxivFeed(r.text, { includeCrossLists: config.ARXIV_INCLUDE_CROSSLISTS });
  if (feed.papers.length === 0) {
    return { outcome: 'empty', day: feed.day ?? today, detail: feed.skipped > 0 ? `only ${feed.skipped} replacements or cross-lists` : 'no announcements' };
  }
  if (!feed.day) throw new AppError('FEED_MALFORMED', `Invalid arXiv feed from ${url}: it names no day (no pubDate, lastBuildDate or updated)`);
  return { outcome: 'papers', day: feed.day, papers: feed.papers };
}

/** The query API's search for one submission day (UTC) in the spec's categories, every page of it. */
export async function fetchArxivApiDay(spec: SourceSpec, day: string, config: SourceConfig, fo: FetchOptions): Promise<DayFetch> {
  const compact = day.replace(/-/g, '');
  const cats = spec.categories.map((c) => `cat:${c}`).join(' OR ');
  const query = `(${cats}) AND submittedDate:[${compact}0000 TO ${compact}2359]`;
  const papers = new Map<string, IncomingPaper>();
  for (let start = 0; start < ARXIV_API_MAX_RESULTS; start += ARXIV_API_PAGE) {
    const url =
      `${config.ARXIV_API_URL}?search_query=${encodeURIComponent(query)}` +
      `&start=${start}&max_results=${ARXIV_API_PAGE}&sortBy=submittedDate&sortOrder=ascending`;
    const r = await fetchText(url, fo);
    if (r.status < 200 || r.status >= 300) throw httpError(url, r.status, r.text);
    const feed = readArxivFeed(r.text, { includeCrossLists: true });
    for (const p of feed.papers) if (!papers.has(p.key)) papers.set(p.key, p);
    const total = feed.total ?? 0;
    if (feed.papers.length === 0 || start + ARXIV_API_PAGE >= total) break;
  }
  return papers.size === 0 ? { outcome: 'empty', day, detail: 'no submissions found' } : { outcome: 'papers', day, papers: [...papers.values()] };
}
