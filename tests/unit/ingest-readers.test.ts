import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectFormat, parseFeed } from '../../src/ingest/detect.ts';
import { readArxivFeed } from '../../src/ingest/readers/arxiv.ts';

const FEEDS = join(import.meta.dirname, '..', 'fixtures', 'feeds');
const feed = (name: string) => readFileSync(join(FEEDS, name), 'utf8');

describe('Hugging Face daily papers JSON', () => {
  const b = parseFeed(feed('hf-2025-11-24.json'), 'auto');

  it('reads every paper with id, authors, upvotes and a Hugging Face link', () => {
    expect(b.source).toBe('hf');
    expect(b.date).toBe('2025-11-24'); // from the submission dates when no date is given
    expect(b.papers.map((p) => p.key)).toEqual(['2511.17001', '2501.00010', '2511.17003']);
    const first = b.papers[0]!;
    expect(first.title).toBe('Self-Play Fine-Tuning Turns Weak Language Models into Strong Negotiators');
    expect(first.authors).toEqual(['Mira Okafor', 'Tomás Lindqvist', 'Priya Raman']);
    expect(first.upvotes).toBe(42);
    expect(first.url).toBe('https://huggingface.co/papers/2511.17001');
    expect(first.publishedAt).toBe('2025-11-21');
    expect(first.categories).toEqual([]);
  });

  it('keeps the numeric-looking id 2501.00010 as text', () => {
    expect(b.papers[1]!.key).toBe('2501.00010');
  });

  it('uses the date asked for when given, and refuses a malformed item whole, naming it', () => {
    expect(parseFeed('[]', 'hf', { date: '2025-11-23' })).toEqual({ source: 'hf', date: '2025-11-23', papers: [] });
    const items = JSON.parse(feed('hf-2025-11-24.json')) as { paper: Record<string, unknown> }[];
    delete items[2]!.paper.id;
    expect(() => parseFeed(JSON.stringify(items), 'hf')).toThrow('Invalid Hugging Face daily papers JSON: [2].paper.id: required');
    items[2]!.paper.id = 2501.0001;
    expect(() => parseFeed(JSON.stringify(items), 'hf')).toThrow('[2].paper.id: must be a string, not the number 2501.0001');
  });

  it('reports truncated JSON with its place', () => {
    const text = feed('hf-2025-11-24.json');
    expect(() => parseFeed(text.slice(0, 500), 'hf')).toThrow(/^Invalid Hugging Face daily papers JSON: not valid JSON at line \d+ column \d+/);
  });
});

describe('arXiv RSS', () => {
  const b = parseFeed(feed('arxiv-rss-cs.LG+cs.CL.xml'), 'auto');

  it('takes only new announcements by default, with the day and categories of the feed', () => {
    expect(b.source).toBe('arxiv:cs.LG+cs.CL');
    expect(b.date).toBe('2025-11-24');
    expect(b.papers.map((p) => p.key)).toEqual(['2511.17003', '2511.17010']);
  });

  it('strips the announce prefix, splits authors, tidies LaTeX titles, stores categories', () => {
    const [flow, alpha] = b.papers;
    expect(flow!.abstract).toMatch(/^We replace the denoising objective/);
    expect(flow!.abstract).not.toMatch(/Announce Type|Abstract:/);
    expect(flow!.authors).toEqual(['Lena Fischer', 'Kenji Watanabe', 'Rosa Delgado']);
    expect(flow!.categories).toEqual(['cs.LG', 'cs.RO']);
    expect(flow!.url).toBe('https://arxiv.org/abs/2511.17003');
    expect(flow!.upvotes).toBe(0);
    expect(alpha!.title).toBe('α-Flow: Unifying Consistency Models and Flow Matching via O(1) Sampling');
    expect(alpha!.abstract).toContain('$\\alpha$-Flow'); // math in abstracts is left as written
  });

  it('takes cross-lists when asked, never replacements', () => {
    const withCross = parseFeed(feed('arxiv-rss-cs.LG+cs.CL.xml'), 'arxiv', { includeCrossLists: true });
    expect(withCross.papers.map((p) => p.key)).toEqual(['2511.17003', '2511.17010', '2511.17011']);
    expect(withCross.papers[2]!.authors).toEqual(['Hannah Berg', 'Omar Haddad']);
  });

  it('reads an empty day (weekend) as an empty batch for the day the feed names', () => {
    const f = readArxivFeed(feed('arxiv-rss-empty.xml'));
    expect(f.day).toBe('2025-11-22');
    expect(f.papers).toEqual([]);
  });

  it('refuses truncated XML, and an entry without title, naming the place', () => {
    const text = feed('arxiv-rss-cs.LG+cs.CL.xml');
    expect(() => parseFeed(text.slice(0, text.length / 2), 'arxiv')).toThrow(/^Invalid arXiv feed: not well-formed XML: the document ends inside .*<item>/);
    const noTitle = text.replace('<title>Token-Level Reward Models for Machine Translation</title>', '');
    // Even an entry that would be skipped (a cross-list) makes the feed partial: nothing of it is taken.
    expect(() => parseFeed(noTitle, 'arxiv')).toThrow('Invalid arXiv feed: item[2].title: required');
    const badId = text.replace('oai:arXiv.org:2511.17010v1', 'not-an-id');
    expect(() => parseFeed(badId, 'arxiv')).toThrow('Invalid arXiv feed: item[1].id: not an arXiv id ("not-an-id")');
  });
});

describe('arXiv Atom (rss.arxiv.org/atom)', () => {
  it('reads entries with dc:creator authors and category terms, new only', () => {
    const b = parseFeed(feed('arxiv-atom-cs.LG.xml'), 'auto');
    expect(b.source).toBe('arxiv:cs.LG');
    expect(b.date).toBe('2025-11-25');
    expect(b.papers).toHaveLength(1);
    expect(b.papers[0]).toMatchObject({
      key: '2511.18020',
      authors: ['Grace Kim', 'Daniel Osei', 'Marta Nowak'],
      categories: ['cs.LG', 'cs.AI'],
      abstract: 'We measure how policy quality degrades as self-play optimisation pushes against a learned reward model.',
    });
  });
});

describe('arXiv query API Atom', () => {
  const b = parseFeed(feed('arxiv-api-query.xml'), 'auto');

  it('reads one author element per author, the primary category first, arXiv categories only', () => {
    expect(b.source).toBe('arxiv-api');
    const p = b.papers[0]!;
    expect(p.key).toBe('2501.00010'); // not the number 2501.0001
    expect(p.authors).toEqual(['Jonas Weber', 'Aiko Tanaka']);
    expect(p.categories).toEqual(['cs.DL', 'cs.LG']); // H.3.7 (ACM class) left out
    expect(p.title).toBe('Trailing Zeros Matter: A Note on Identifier Hygiene in Scholarly Pipelines');
    expect(p.publishedAt).toBe('2025-01-01');
  });

  it('keeps a name with a comma whole when authors come one per element, and reads old-style ids', () => {
    expect(b.papers[1]).toMatchObject({ key: 'hep-th/9901001', authors: ['E. Witten, Jr.', 'N. Seiberg'], url: 'https://arxiv.org/abs/hep-th/9901001' });
  });

  it('reports the API\'s own error entry', () => {
    expect(() => parseFeed(feed('arxiv-api-error.xml'), 'arxiv')).toThrow('Invalid arXiv feed: the arXiv API answered an error: incorrect id format for 1234.12345');
  });
});

describe('format detection', () => {
  it('tells the formats apart by shape', () => {
    expect(detectFormat('\uFEFF  {"source": "x"}')).toBe('batch');
    expect(detectFormat('[]')).toBe('hf');
    expect(detectFormat('<?xml version="1.0"?><rss/>')).toBe('arxiv');
    expect(() => parseFeed('<html><body>Not found</body></html>', 'auto')).toThrow('Invalid arXiv feed: not an RSS or Atom document (root element <html>)');
  });
});
