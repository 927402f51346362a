import { describe, expect, it } from 'vitest';
import type { AppError } from '../../src/errors.ts';
import { MAX_TOPICS, parseTopic, parseTopics } from '../../src/match/parse.ts';
import { appErrorFrom } from '../helpers/app-error.ts';
import { httpStatus } from '../../src/web/errors.ts';

const fts = (text: string) => parseTopic(text).fts;

/** The error a topic is rejected with (fails the test when it is accepted). */
const rejection = (text: string) => appErrorFrom(() => parseTopic(text), `${JSON.stringify(text)} to be rejected`);

const topicsRejection = (texts: string[]) => appErrorFrom(() => parseTopics(texts), 'the topic list to be rejected');

/**
 * Everything an emitted FTS5 expression may contain: column filters we write, quoted strings of
 * folded tokens (letters, digits, spaces), prefix stars, parentheses and the three operators.
 */
const EMITTED = /^(\{(title|abstract|authors|categories)( (title|abstract|authors|categories))*\} :|"[\p{L}\p{N}\p{Co} ]+"\*?|\(|\)|AND|OR|NOT|\s)+$/u;

describe('parseTopic: words and canonical form', () => {
  it('ANDs bare words over title and abstract only', () => {
    expect(fts('reinforcement learning')).toBe('{title abstract} : ("learning" AND "reinforcement")');
  });

  it('gives the same expression whatever the spacing, case, accents or word order', () => {
    const variants = ['reinforcement learning', '  Reinforcement   LEARNING ', 'learning reinforcement', 'reinforcement AND learning'];
    expect(new Set(variants.map(fts)).size).toBe(1);
    expect(fts('Pokémon')).toBe(fts('pokemon'));
    expect(fts('a a A')).toBe(fts('a'));
  });

  it('keeps the text trimmed, as typed', () => {
    expect(parseTopic('  Diffusion  Models ').text).toBe('Diffusion  Models');
  });

  it('treats lowercase or and other FTS5 keywords as plain words', () => {
    expect(fts('cats or dogs')).toBe('{title abstract} : ("cats" AND "dogs" AND "or")');
    expect(fts('NEAR NOT')).toBe('{title abstract} : ("near" AND "not")');
  });
});

describe('parseTopic: phrases, hyphens, prefixes', () => {
  it('quotes a phrase as one FTS5 string', () => {
    expect(fts('"mixture of experts"')).toBe('{title abstract} : "mixture of experts"');
  });

  it('reads a hyphenated word as a phrase, quoted or not', () => {
    expect(fts('multi-agent')).toBe('{title abstract} : "multi agent"');
    expect(fts('"self-play"')).toBe(fts('self-play'));
    expect(fts('"self-play"')).toBe('{title abstract} : "self play"');
  });

  it('marks token* and "phrase"* as prefix queries', () => {
    expect(fts('token*')).toBe('{title abstract} : "token"*');
    expect(fts('"mixture of exp"*')).toBe('{title abstract} : "mixture of exp"*');
    expect(parseTopic('diffus* model').terms).toEqual([
      { tokens: ['diffus'], prefix: true },
      { tokens: ['model'], prefix: false },
    ]);
  });
});

describe('parseTopic: OR, exclusion, grouping', () => {
  it('binds OR tighter than the implicit AND', () => {
    expect(fts('diffusion OR flow matching')).toBe('{title abstract} : ("matching" AND ("diffusion" OR "flow"))');
    expect(fts('diffusion OR flow matching')).toBe(fts('(diffusion OR flow) matching'));
    expect(fts('a OR b OR c')).toBe('{title abstract} : ("a" OR "b" OR "c")');
  });

  it('groups with parentheses', () => {
    expect(fts('(diffusion OR flow) (image OR video)')).toBe(
      '{title abstract} : (("diffusion" OR "flow") AND ("image" OR "video"))',
    );
    expect(fts('(a b) OR c')).toBe('{title abstract} : ("c" OR ("a" AND "b"))');
    expect(fts('c OR (b a)')).toBe(fts('(a b) OR c'));
  });

  it('attaches excluded words, phrases and groups to the positive part with a binary NOT', () => {
    expect(fts('reinforcement learning -survey')).toBe(
      '{title abstract} : (("learning" AND "reinforcement") NOT "survey")',
    );
    expect(fts('rl -survey -"literature review"')).toBe('{title abstract} : ("rl" NOT ("literature review" OR "survey"))');
    expect(fts('agents -(web browser)')).toBe('{title abstract} : ("agents" NOT ("browser" AND "web"))');
  });

  it('lifts an exclusion out of a group into the enclosing AND', () => {
    expect(fts('(agents -survey) games')).toBe(fts('agents games -survey'));
    expect(fts('agents (-survey)')).toBe(fts('agents -survey'));
  });

  it('treats a dash that is not before a term as punctuation', () => {
    expect(fts('agents - games')).toBe(fts('agents games'));
  });
});

describe('parseTopic: field prefixes', () => {
  it('searches authors with author:', () => {
    expect(fts('author:"Yann LeCun"')).toBe('{authors} : "yann lecun"');
    expect(fts('author:LeCun')).toBe('{authors} : "lecun"');
  });

  it('searches categories with category:', () => {
    expect(fts('category:cs.LG')).toBe('{categories} : "cs lg"');
    expect(fts('category:cs.LG diffusion')).toBe('{categories} : "cs lg" AND {title abstract} : "diffusion"');
  });

  it('restricts to title or abstract, on a term, a phrase or a group', () => {
    expect(fts('title:transformer')).toBe('{title} : "transformer"');
    expect(fts('abstract:"world model"')).toBe('{abstract} : "world model"');
    expect(fts('title:(diffusion OR flow) -abstract:survey')).toBe(
      '({title} : ("diffusion" OR "flow")) NOT {abstract} : "survey"',
    );
  });

  it('accepts any case and a space after a known field', () => {
    expect(fts('TITLE:Transformer')).toBe(fts('title:transformer'));
    expect(fts('title: transformer')).toBe(fts('title:transformer'));
  });

  it('lets an inner field override the group field', () => {
    expect(fts('title:(diffusion -abstract:survey)')).toBe('{title} : "diffusion" NOT {abstract} : "survey"');
  });

  it('reads an unknown name followed by a space as text', () => {
    expect(fts('Part I: Tricks')).toBe('{title abstract} : ("i" AND "part" AND "tricks")');
  });

  it('keeps author and category terms out of the highlight terms, and excluded ones too', () => {
    expect(parseTopic('author:LeCun category:cs.LG "world model" -survey title:jepa').terms).toEqual([
      { tokens: ['world', 'model'], prefix: false },
      { tokens: ['jepa'], prefix: false },
    ]);
  });
});

describe('parseTopic: never passes raw text into FTS5 syntax', () => {
  it.each([
    'a "b" * : ^ NEAR AND NOT',
    'NEAR(a b, 3)',
    'x^2 + y:z "o\'neil" {title}: c',
    'col:{} "weird ""quote" word',
    'A* Search Without Expansions',
    'title:("a" OR b*) -"c d"* e',
    'GPT-4 o1 R1-Zero Hold\'em',
  ])('%s', (text) => {
    let out: string;
    try {
      out = fts(text);
    } catch (e) {
      expect((e as AppError).code).toBe('TOPIC_INVALID');
      return;
    }
    expect(out).toMatch(EMITTED);
  });

  it('drops words that hold nothing searchable', () => {
    expect(fts('diffusion ^ * : &')).toBe(fts('diffusion'));
  });
});

describe('parseTopic: rejections with a precise message', () => {
  it.each([
    ['', 'topic is empty'],
    ['   ', 'topic is empty'],
    ['-survey', 'topic has only excluded terms: add at least one word to search for'],
    ['-survey -"literature review"', 'topic has only excluded terms: add at least one word to search for'],
    ['(-survey)', 'topic has only excluded terms: add at least one word to search for'],
    ['^ * :', 'topic has no word to search for'],
    ['self "play', 'unbalanced quote at position 6'],
    ['"a" "b" "c', 'unbalanced quote at position 9'],
    ['Pokémon "x', 'unbalanced quote at position 9'],
    ['(diffusion OR flow', "unbalanced parenthesis at position 1 (this '(' is never closed)"],
    ['a (b (c)', "unbalanced parenthesis at position 3 (this '(' is never closed)"],
    ['diffusion)', "unbalanced parenthesis at position 10 (no '(' before this ')')"],
    ['a () b', 'empty group at position 3'],
    ['a (  ) b', 'empty group at position 3'],
    ['a "" b', 'empty phrase at position 3'],
    ['a "?!" b', 'empty phrase at position 3'],
    ['OR diffusion', 'dangling OR at position 1 (OR needs a term on each side)'],
    ['diffusion OR', 'dangling OR at position 11 (OR needs a term on each side)'],
    ['diffusion OR OR flow', 'dangling OR at position 11 (OR needs a term on each side)'],
    ['(diffusion OR) flow', 'dangling OR at position 12 (OR needs a term on each side)'],
    ['foo:bar', "unknown field prefix 'foo:' at position 1 (use title:, abstract:, author:, category:, like:<arXiv id> or upvotes>=N)"],
    ['diffusion arXiv:2501.00010', "unknown field prefix 'arXiv:' at position 11 (use title:, abstract:, author:, category:, like:<arXiv id> or upvotes>=N)"],
    ['diffusion OR -flow', 'excluded term at position 14 cannot be one side of OR'],
    ['-flow OR diffusion', 'excluded term at position 1 cannot be one side of OR'],
    ['x OR (-b)', 'group at position 6 has only excluded terms'],
    ['a -(-b)', 'group at position 4 has only excluded terms'],
    ['diffusion title:', "expected a word, phrase or group after 'title:' at position 11"],
    ['title:-survey x', "expected a word, phrase or group after 'title:' at position 1"],
    ['a --b', "expected a word, phrase or group after '-' at position 3"],
  ])('%j -> %s', (text, message) => {
    const e = rejection(text);
    expect(e.code).toBe('TOPIC_INVALID');
    expect(httpStatus(e)).toBe(400);
    expect(e.message).toBe(message);
  });

  it('accepts 200 characters and rejects 201', () => {
    const exactly200 = 'abcd '.repeat(40).slice(0, 199) + 'z';
    expect(exactly200.length).toBe(200);
    expect(() => parseTopic(exactly200)).not.toThrow();
    expect(() => parseTopic(`   ${exactly200}   `)).not.toThrow(); // surrounding spaces do not count
    expect(rejection(`${exactly200}y`).message).toBe('topic is too long (201 characters; at most 200)');
  });
});

describe('parseTopics', () => {
  it('parses every topic and drops exact duplicates (same expression), keeping the first', () => {
    const topics = parseTopics(['Diffusion models', 'models  diffusion', 'author:"Yann LeCun"', 'DIFFUSION MODELS']);
    expect(topics.map((t) => t.text)).toEqual(['Diffusion models', 'author:"Yann LeCun"']);
  });

  it('names the topic that is wrong by its 1-based place, blank entries included', () => {
    expect(topicsRejection(['diffusion', 'self "play']).message).toBe('topic 2: unbalanced quote at position 6');
    expect(topicsRejection(['diffusion', '', 'a ()']).message).toBe('topic 3: empty group at position 3');
    expect(topicsRejection(['diffusion', '', 'a ()']).code).toBe('TOPIC_INVALID');
  });

  it('skips blank entries', () => {
    expect(parseTopics(['', 'agents', '   ']).map((t) => t.text)).toEqual(['agents']);
  });

  it('accepts 20 topics and rejects 21', () => {
    const many = Array.from({ length: MAX_TOPICS + 1 }, (_, i) => `topic${i}`);
    expect(parseTopics(many.slice(0, MAX_TOPICS))).toHaveLength(20);
    expect(topicsRejection(many).message).toBe('too many topics (21; at most 20)');
  });

  it('rejects an empty list', () => {
    expect(topicsRejection([]).message).toBe('add at least one topic');
    expect(topicsRejection(['', ' ']).message).toBe('add at least one topic');
  });
});

describe('topic errors carry their place as data', () => {
  it('names the topic (0-based index) and the character position, as fields as well as in the message', () => {
    const e = appErrorFrom(() => parseTopics(['diffusion', 'world  "model']));
    expect(e.message).toBe('topic 2: unbalanced quote at position 8');
    expect(e.where).toEqual({ field: 'topics', index: 1, position: 8 });
  });

  it('an error of the list as a whole names the field only', () => {
    expect(appErrorFrom(() => parseTopics(['', ' '])).where).toEqual({ field: 'topics' });
    expect(appErrorFrom(() => parseTopic('a OR')).where).toEqual({ field: 'topics', position: 3 });
  });
});
