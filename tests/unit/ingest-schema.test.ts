import { describe, expect, it } from 'vitest';
import { parseFeed } from '../../src/ingest/detect.ts';
import { appErrorFrom } from '../helpers/app-error.ts';

const paper = (over: Record<string, unknown> = {}) => ({
  id: '2511.01234',
  title: 'A Title',
  abstract: 'An abstract.',
  authors: ['Ada Lovelace'],
  url: 'https://arxiv.org/abs/2511.01234',
  ...over,
});
const batch = (papers: unknown[], over: Record<string, unknown> = {}) =>
  JSON.stringify({ source: 'hf-daily', date: '2025-11-25', papers, ...over });

/** The one-line message parseFeed throws for a batch text. */
const errorOf = (text: string) => appErrorFrom(() => parseFeed(text, 'batch'), 'the batch to be refused');

describe('batch format validation', () => {
  it('names the path of a missing field', () => {
    const papers = [paper({ id: '2511.00001' }), paper({ id: '2511.00002' }), paper({ id: '2511.00003' }), paper({ id: '2511.00004', title: undefined })];
    const e = errorOf(batch(papers));
    expect(e.code).toBe('BATCH_INVALID');
    expect(e.message).toBe('Invalid batch: papers[3].title: required');
  });

  it.each([
    ['papers[0].url: must be an http(s) URL', batch([paper({ url: 'javascript:alert(1)' })])],
    ['papers[0].url: must be an http(s) URL', batch([paper({ url: 'data:text/html,hi' })])],
    ['papers[0].title: must not be empty', batch([paper({ title: '   ' })])],
    ['papers[0].authors: must be an array, not a string', batch([paper({ authors: 'Ada Lovelace' })])],
    ['papers[0].upvotes: must be at least 0', batch([paper({ upvotes: -3 })])],
    ['papers[0].publishedAt: must be a date (YYYY-MM-DD) or an ISO date-time', batch([paper({ publishedAt: 'yesterday' })])],
    ['papers[0].categories[1]: must not be empty', batch([paper({ categories: ['cs.LG', ''] })])],
    ['date: must be a date written YYYY-MM-DD', batch([paper()], { date: '2025-13-01' })],
    ['source: required', batch([paper()], { source: undefined })],
    ['papers: required', JSON.stringify({ source: 'x', date: '2025-11-25' })],
    ['papers[1].id: 2511.01234 is already papers[0]', batch([paper(), paper({ id: 'arXiv:2511.01234v2' })])],
  ])('refuses with "%s"', (want, text) => {
    expect(errorOf(text).message).toBe(`Invalid batch: ${want}`);
  });

  it('refuses a numeric id, which has already lost its trailing zero', () => {
    const text = `{"source":"s","date":"2025-11-25","papers":[{"id":2501.00010,"title":"T","abstract":"","authors":[],"url":"https://x.org/"}]}`;
    expect(errorOf(text).message).toBe('Invalid batch: papers[0].id: must be a string: write arXiv ids in quotes, e.g. "2501.00010"');
  });

  it('reports JSON syntax errors with line and column', () => {
    const e = errorOf('{\n  "source": "s",\n  "date": "2025-11-25",,\n  "papers": []\n}');
    expect(e.message).toMatch(/^Invalid batch: not valid JSON at line 3 column 24: /);
    expect(errorOf('{"source": "s", "papers": [').message).toMatch(/^Invalid batch: not valid JSON at line 1 column 28/);
  });

  it('counts further problems on the same line', () => {
    expect(errorOf(batch([paper({ title: '' }), paper({ id: '2511.00009', url: 'ftp://x' })])).message).toBe(
      'Invalid batch: papers[0].title: must not be empty (and 1 more problem)',
    );
  });

  it('accepts a good batch, normalising ids and tidying text, with defaults for optional fields', () => {
    const b = parseFeed(
      batch([
        paper({ id: 'arXiv:2511.01234v3', title: '  Spaced\n  Title ', authors: undefined, publishedAt: '2025-11-24T18:00:00Z', extra: 1 }),
        paper({ id: '2501.00010', upvotes: 12, categories: ['cs.LG'] }),
      ]),
      'auto',
    );
    expect(b.source).toBe('hf-daily');
    expect(b.date).toBe('2025-11-25');
    expect(b.papers[0]).toEqual({
      key: '2511.01234',
      title: 'Spaced Title',
      abstract: 'An abstract.',
      authors: [],
      url: 'https://arxiv.org/abs/2511.01234',
      publishedAt: '2025-11-24',
      upvotes: 0,
      categories: [],
    });
    expect(b.papers[1]!.key).toBe('2501.00010');
    expect(b.papers[1]!.upvotes).toBe(12);
  });

  it('lets the caller override source and date, and checks them', () => {
    const b = parseFeed(batch([paper()]), 'batch', { source: 'manual', date: '2025-11-20' });
    expect([b.source, b.date]).toEqual(['manual', '2025-11-20']);
    expect(() => parseFeed(batch([paper()]), 'batch', { date: '20-11-2025' })).toThrow(/date: must be a date written YYYY-MM-DD/);
  });

  it('refuses input in no known format', () => {
    expect(() => parseFeed('hello', 'auto')).toThrow(/Unknown input format/);
  });
});
