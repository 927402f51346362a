// A configured paper source, as parsed from SOURCES (sources.ts) and fetched (source-fetchers.ts).
export type SourceKind = 'hf' | 'arxiv' | 'arxiv-api';

export interface SourceSpec {
  /** Canonical name, as recorded in batches.source and source_days.source: `hf`, `arxiv:cs.LG+cs.CL`. */
  name: string;
  kind: SourceKind;
  /** arXiv categories (empty for hf). */
  categories: string[];
}
