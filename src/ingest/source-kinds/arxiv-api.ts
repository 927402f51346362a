// The arXiv query API by submission day (UTC) in some categories, every page of it. Today's submissions
// are not announced yet, so the days asked end yesterday; a day is final 72 hours after it ended (a
// weekend's announcements), and asked again at most every 6 hours until then (arXiv asks for restraint).
import type { IncomingPaper } from '../../types.ts';
import { fetchText } from '../fetch.ts';
import { readArxivFeed } from '../readers/arxiv.ts';
import { arxivHosts, arxivSettings } from './arxiv-settings.ts';
import { defineSourceKind, httpError } from './kind.ts';

const HOUR = 3_600_000;
export const ARXIV_API_SETTLE_MS = 72 * HOUR;
export const ARXIV_API_REFRESH_MS = 6 * HOUR;
/** Results per query API request, and the most read for one day (cs.* days run to a few thousand). */
export const ARXIV_API_PAGE = 1000;
export const ARXIV_API_MAX_RESULTS = 10_000;

export const arxivApiSource = defineSourceKind({
  name: 'arxiv-api',
  title: 'arXiv query API (by submission day)',
  categories: true,
  settings: arxivSettings,
  schedule: { kind: 'dated', lastDay: -1, settleMs: ARXIV_API_SETTLE_MS, refreshMs: ARXIV_API_REFRESH_MS },
  spacing: arxivHosts,
  async fetchDay({ spec, settings, fetch }, day) {
    const compact = day.replace(/-/g, '');
    const cats = spec.categories.map((c) => `cat:${c}`).join(' OR ');
    const query = `(${cats}) AND submittedDate:[${compact}0000 TO ${compact}2359]`;
    const papers = new Map<string, IncomingPaper>();
    for (let start = 0; start < ARXIV_API_MAX_RESULTS; start += ARXIV_API_PAGE) {
      const url =
        `${settings.ARXIV_API_URL}?search_query=${encodeURIComponent(query)}` +
        `&start=${start}&max_results=${ARXIV_API_PAGE}&sortBy=submittedDate&sortOrder=ascending`;
      const r = await fetchText(url, fetch);
      if (r.status < 200 || r.status >= 300) throw httpError(url, r.status, r.text);
      const feed = readArxivFeed(r.text, { includeCrossLists: true });
      for (const p of feed.papers) if (!papers.has(p.key)) papers.set(p.key, p);
      const total = feed.total ?? 0;
      if (feed.papers.length === 0 || start + ARXIV_API_PAGE >= total) break;
    }
    return papers.size === 0 ? { outcome: 'empty', day, detail: 'no submissions found' } : { outcome: 'papers', day, papers: [...papers.values()] };
  },
});
