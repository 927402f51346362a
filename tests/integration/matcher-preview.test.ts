// previewTopic: what a typed query would have matched among recent papers (real SQLite file).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { previewTopic } from '../../src/match/matcher.ts';
import { appErrorFrom } from '../helpers/app-error.ts';
import { tempDatabase, type TempDb } from '../helpers/seed.ts';
import { FIXTURE, addBatch, addPaper, authorsOf, categoriesOf, grep } from './matcher-fixture.ts';

let t: TempDb;
/** Fixture papers 0–35 came in the batch of 2025-11-20, 36–70 in that of 2025-11-25. */
const EARLY = (i: number) => i <= 35;
const upvotesOf = (i: number) => (i * 37) % 101;

beforeAll(() => {
  t = tempDatabase('matcher-');
  const early = addBatch(t.db, '2025-11-20');
  const late = addBatch(t.db, '2025-11-25');
  FIXTURE.forEach((p, i) => {
    addPaper(t.db, EARLY(i) ? early : late, {
      key: `fx-${i}`,
      title: p.title,
      abstract: p.abstract,
      authors: authorsOf(i),
      categories: categoriesOf(i),
      upvotes: upvotesOf(i),
    });
  });
  // Paper #31 (PokerGPT, first seen on the 20th) came back in the batch of the 25th.
  t.db.prepare(`INSERT INTO batch_papers (batch_id, paper_id) SELECT ?, id FROM papers WHERE paper_key = 'fx-31'`).run(late);
});
afterAll(() => t.cleanup());

const rejection = (fn: () => unknown) => appErrorFrom(fn, 'a rejection');

describe('previewTopic', () => {
  it('counts and lists the matching papers of batches since the given day, most upvoted first', () => {
    const expected = grep(/reinforcement/i).filter((i) => !EARLY(i) || i === 31); // #31 came back late
    const preview = previewTopic(t.db, 'reinforcement', { since: '2025-11-24', limit: 5 });
    expect(preview.total).toBe(expected.length);
    expect(preview.papers).toHaveLength(5);
    const upvotes = preview.papers.map((p) => p.upvotes);
    expect(upvotes).toEqual([...upvotes].sort((a, b) => b - a));
    expect(upvotes[0]).toBe(Math.max(...expected.map(upvotesOf)));
    for (const p of preview.papers) expect(p.title + p.abstract).toMatch(/reinforcement/i);
  });

  it('includes a paper first seen earlier that came back in a recent batch', () => {
    expect(previewTopic(t.db, 'poker', { since: '2025-11-24', limit: 10 }).papers.map((p) => p.title)).toEqual([
      FIXTURE[31]!.title,
    ]);
    expect(previewTopic(t.db, 'poker', { since: '2025-11-01', limit: 10 }).total).toBe(2);
  });

  it('returns each paper with its fields, authors as a list', () => {
    const { papers } = previewTopic(t.db, 'author:"Yann LeCun"', { since: '2025-11-01', limit: 10 });
    expect(papers).toEqual([
      {
        id: 53,
        title: FIXTURE[52]!.title,
        url: 'https://example.org/fx-52',
        abstract: FIXTURE[52]!.abstract,
        authors: ['Yann LeCun', 'Ada Lovelace'],
        upvotes: upvotesOf(52),
        publishedAt: null,
      },
    ]);
  });

  it('gives only the count with limit 0, and nothing for a day after the last batch', () => {
    const none = previewTopic(t.db, 'games', { since: '2025-11-01', limit: 0 });
    expect(none.papers).toEqual([]);
    expect(none.total).toBe(grep(/\bgam(e|es|ing)\b/i).length);
    expect(previewTopic(t.db, 'games', { since: '2025-12-01', limit: 10 })).toEqual({ total: 0, papers: [] });
  });

  it('throws the parse error as is', () => {
    const e = rejection(() => previewTopic(t.db, 'self "play', { since: '2025-11-01', limit: 5 }));
    expect(e.code).toBe('TOPIC_INVALID');
    expect(e.message).toBe('unbalanced quote at position 6');
  });

  it('rejects a bad day or limit, naming it', () => {
    expect(rejection(() => previewTopic(t.db, 'games', { since: 'yesterday', limit: 5 })).message).toBe(
      "since must be a date YYYY-MM-DD, got 'yesterday'",
    );
    expect(rejection(() => previewTopic(t.db, 'games', { since: '2025-11-01', limit: 1000 })).message).toBe(
      'limit must be an integer from 0 to 100, got 1000',
    );
  });

  it('writes nothing', () => {
    previewTopic(t.db, 'brand new query', { since: '2025-11-01', limit: 5 });
    expect(t.db.prepare('SELECT count(*) AS n FROM queries').get()).toEqual({ n: 0 });
    expect(t.db.prepare('SELECT count(*) AS n FROM query_matches').get()).toEqual({ n: 0 });
  });
});
