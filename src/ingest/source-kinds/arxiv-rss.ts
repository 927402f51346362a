// The arXiv RSS listing of some categories (rss.arxiv.org/rss/cs.LG+cs.CL): the latest announcement only,
// no date parameter, so the day is the one the feed names; an empty feed (weekend, holiday) is `empty`.
import { AppError } from '../../errors.ts';
import { fetchText } from '../fetch.ts';
import { readArxivFeed } from '../readers/arxiv.ts';
import { arxivHosts, arxivSettings } from './arxiv-settings.ts';
import { defineSourceKind, httpError } from './kind.ts';

export const arxivRssSource = defineSourceKind({
  name: 'arxiv',
  title: 'arXiv RSS listing (new announcements)',
  categories: true,
  settings: arxivSettings,
  schedule: { kind: 'latest' },
  spacing: arxivHosts,
  async fetchDay({ spec, today, settings, fetch }) {
    const url = `${settings.ARXIV_RSS_URL}/${spec.categories.join('+')}`;
    const r = await fetchText(url, fetch);
    if (r.status < 200 || r.status >= 300) throw httpError(url, r.status, r.text);
    const feed = readArxivFeed(r.text, { includeCrossLists: settings.ARXIV_INCLUDE_CROSSLISTS });
    if (feed.papers.length === 0) {
      return { outcome: 'empty', day: feed.day ?? today, detail: feed.skipped > 0 ? `only ${feed.skipped} replacements or cross-lists` : 'no announcements' };
    }
    if (!feed.day) throw new AppError('FEED_MALFORMED', `Invalid arXiv feed from ${url}: it names no day (no pubDate, lastBuildDate or updated)`);
    return { outcome: 'papers', day: feed.day, papers: feed.papers };
  },
});
