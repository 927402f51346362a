import { describe, expect, it } from 'vitest';
import { dayOf, normalizeArxivId, paperKey, splitAuthors, tidyTitle } from '../../src/ingest/normalize.ts';

describe('arXiv id normalisation', () => {
  it.each([
    ['2511.01234', '2511.01234'],
    ['2511.01234v2', '2511.01234'],
    ['arXiv:2511.01234', '2511.01234'],
    ['arxiv:2511.01234v7', '2511.01234'],
    ['oai:arXiv.org:2511.01234v1', '2511.01234'],
    ['https://arxiv.org/abs/2511.01234v3', '2511.01234'],
    ['http://arxiv.org/abs/2511.01234', '2511.01234'],
    ['https://arxiv.org/pdf/2511.01234v1.pdf', '2511.01234'],
    ['https://export.arxiv.org/abs/2511.01234v1', '2511.01234'],
    ['https://huggingface.co/papers/2511.01234', '2511.01234'],
    ['  2501.00010  ', '2501.00010'],
    ['0704.0001', '0704.0001'],
    ['hep-th/9901001v1', 'hep-th/9901001'],
    ['oai:arXiv.org:hep-th/9901001v2', 'hep-th/9901001'],
    ['math.gt/0309136', 'math.GT/0309136'],
  ])('%s -> %s', (raw, want) => {
    expect(normalizeArxivId(raw)).toBe(want);
  });

  it.each(['', 'abc', '2511.123', '12345.67890', '2511.012345', 'https://example.org/abs/2511.01234'])('%j is not an arXiv id', (raw) => {
    expect(normalizeArxivId(raw)).toBeNull();
  });

  it('keeps ids from other sources as given (trimmed)', () => {
    expect(paperKey(' openreview:Xyz123 ')).toBe('openreview:Xyz123');
    expect(paperKey('arXiv:2511.01234v2')).toBe('2511.01234');
  });
});

describe('title tidying', () => {
  it('removes LaTeX markup and collapses whitespace', () => {
    expect(tidyTitle('$\\alpha$-Flow: Unifying \\textbf{Consistency}\n   Models via $\\mathcal{O}(1)$ Sampling')).toBe(
      'α-Flow: Unifying Consistency Models via O(1) Sampling',
    );
    expect(tidyTitle('On {BERT} and Schr\\"{o}dinger: 50\\% of \\LaTeX\\ users')).toBe('On BERT and Schrödinger: 50% of LaTeX users');
    expect(tidyTitle("Caf\\'e \\v{S}koda \\c{c}a")).toBe('Café Škoda ça');
  });

  it('leaves plain titles alone apart from whitespace', () => {
    expect(tidyTitle('  Plain: a (simple) [title] ~100x faster  ')).toBe('Plain: a (simple) [title] ~100x faster');
  });
});

describe('author lists', () => {
  it('splits on commas and "and", keeping affiliations from splitting and dropping them', () => {
    expect(splitAuthors('A. Smith, B. Jones (MIT, CMU), C. Lee and D. Park')).toEqual(['A. Smith', 'B. Jones', 'C. Lee', 'D. Park']);
    expect(splitAuthors('Lena Fischer (ETH Zurich and EPFL), Kenji Watanabe')).toEqual(['Lena Fischer', 'Kenji Watanabe']);
    expect(splitAuthors('  ')).toEqual([]);
  });
});

describe('feed dates', () => {
  it('reads the calendar day as written, whatever the zone', () => {
    expect(dayOf('Mon, 24 Nov 2025 00:00:00 -0500')).toBe('2025-11-24');
    expect(dayOf('2025-11-24T23:30:00-05:00')).toBe('2025-11-24');
    expect(dayOf('2025-11-24')).toBe('2025-11-24');
  });
  it('refuses what is not a date', () => {
    expect(dayOf('2025-02-30')).toBeNull();
    expect(dayOf('soon')).toBeNull();
    expect(dayOf(undefined)).toBeNull();
  });
});
