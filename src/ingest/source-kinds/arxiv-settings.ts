// Settings both arXiv kinds read, and the spacing arXiv asks of every client (one request every 3 s).
import { bool, httpUrl, int } from '../../settings.ts';

export const arxivSettings = {
  ARXIV_RSS_URL: httpUrl.default('https://rss.arxiv.org/rss'),
  ARXIV_API_URL: httpUrl.default('https://export.arxiv.org/api/query'),
  ARXIV_INCLUDE_CROSSLISTS: bool.default(false),
  ARXIV_MIN_INTERVAL_MS: int(0, 60_000).default(3_000),
};

/** arXiv's hosts and the configured ones, each spaced by ARXIV_MIN_INTERVAL_MS. */
export function arxivHosts(s: { ARXIV_RSS_URL: string; ARXIV_API_URL: string; ARXIV_MIN_INTERVAL_MS: number }): Record<string, number> {
  const ms = s.ARXIV_MIN_INTERVAL_MS;
  const table: Record<string, number> = { 'arxiv.org': ms, 'export.arxiv.org': ms, 'rss.arxiv.org': ms, 'www.arxiv.org': ms };
  for (const u of [s.ARXIV_RSS_URL, s.ARXIV_API_URL]) table[new URL(u).host] = ms;
  return table;
}
