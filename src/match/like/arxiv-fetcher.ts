// Looks a like: example up through the arXiv query API (ARXIV_API_URL?id_list=<id>), when the paper is
// not in the database. Real HTTP through the shared fetch code (timeouts, retries, host spacing).
import { fetchText, type FetchOptions } from '../../ingest/fetch.ts';
import { readArxivFeed } from '../../ingest/readers/arxiv.ts';
import type { ExampleFetcher } from './like.ts';

export function arxivExampleFetcher(apiUrl: string, fo: FetchOptions): ExampleFetcher {
  return async (id) => {
    const url = `${apiUrl}?id_list=${encodeURIComponent(id)}&max_results=1`;
    const r = await fetchText(url, fo);
    if (r.status === 400 || r.status === 404) return null;
    if (r.status < 200 || r.status >= 300) throw new Error(`GET ${url} answered HTTP ${r.status}`);
    const feed = readArxivFeed(r.text, { includeCrossLists: true });
    const paper = feed.papers.find((p) => p.key === id);
    return paper ? { title: paper.title, abstract: paper.abstract } : null;
  };
}
