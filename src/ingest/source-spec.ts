// A configured paper source, as parsed from SOURCES (sources.ts); its kind is in source-kinds/.

export interface SourceSpec {
  /** Canonical name, as recorded in batches.source and source_days.source: `hf`, `arxiv:cs.LG+cs.CL`. */
  name: string;
  /** The kind's name (source-kinds/registry.ts): `hf`, `arxiv`, `arxiv-api`. */
  kind: string;
  /** arXiv categories (empty for kinds that take none). */
  categories: string[];
}
