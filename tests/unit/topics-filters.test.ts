// Topic filters in the query language: `upvotes>=N` and `like:<arXiv id>[,<id>…]`, with precise errors.
import { describe, expect, it } from 'vitest';
import { parseTopic } from '../../src/match/parse.ts';

function errorOf(text: string): string {
  try {
    parseTopic(text);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error(`no error for ${text}`);
}

describe('upvotes>=N', () => {
  it('filters a topic; the key differs from the same words without the filter', () => {
    const t = parseTopic('"world model" upvotes>=10');
    expect(t.minUpvotes).toBe(10);
    expect(t.match).toBe('{title abstract} : "world model"');
    expect(t.fts).toBe('{title abstract} : "world model" upvotes>=10');
    expect(parseTopic('upvotes>=10 "World Model"').fts).toBe(t.fts);
    expect(parseTopic('"world model"').fts).toBe(t.match);
  });

  it.each([
    ['world upvotes>=', "expected a whole number after 'upvotes>=' at position 16"],
    ['world upvotes>=ten', "'ten' at position 16 is not a whole number from 0 to 1000000 (upvotes>=N)"],
    ['world upvotes>5', "'upvotes>' at position 7 is not supported: write upvotes>=N, e.g. upvotes>=10"],
    ['world upvotes=5', "'upvotes=' at position 7 is not supported: write upvotes>=N, e.g. upvotes>=10"],
    ['upvotes>=5', 'upvotes>=N filters the papers of a topic: add at least one word to search for'],
    ['world -upvotes>=5', "upvotes>= at position 8 cannot be excluded with '-'"],
    ['(world upvotes>=5)', 'upvotes>= at position 8 applies to the whole topic: move it out of the parentheses'],
    ['world OR upvotes>=5', 'upvotes>= at position 10 cannot be one side of OR'],
    ['world upvotes>=5 upvotes>=6', 'upvotes>= appears twice (again at position 18)'],
  ])('%j -> %s', (text, message) => {
    expect(errorOf(text)).toBe(message);
  });
});

describe('like:', () => {
  it('names example papers by arXiv id, normalised and sorted into the key', () => {
    const t = parseTopic('like:2502.00001v2,arXiv:2501.00010');
    expect(t.like).toEqual(['2501.00010', '2502.00001']);
    expect(t.fts).toBe('like:2501.00010,2502.00001');
    expect(t.match).toBeNull();
    expect(parseTopic('like:2501.00010 upvotes>=3').fts).toBe('like:2501.00010 upvotes>=3');
  });

  it.each([
    ['like:', "expected an arXiv id after 'like:' at position 1 (e.g. like:2501.00010)"],
    ['like:2501.00010,banana', "'banana' at position 17 is not an arXiv id (e.g. like:2501.00010)"],
    ['like:2501.00010,', 'empty arXiv id in like: at position 17'],
    ['like:2501.00010 diffusion', 'like: cannot be combined with words (position 17); put other words in a topic of their own'],
    ['like:2501.00010 like:2502.00001', 'like: appears twice (again at position 17): list the ids with commas'],
    ['like:1.1,2.2,3.3', "'1.1' at position 6 is not an arXiv id (e.g. like:2501.00010)"],
  ])('%j -> %s', (text, message) => {
    expect(errorOf(text)).toBe(message);
  });
});
