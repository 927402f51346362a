// The topic language's acceptance cases on both engines: the same topics give the same papers of the real
// Daily Papers listing, whether SQLite's FTS5 index on the file matches them (matchPending) or PostgreSQL's
// matcher does (matchPendingPg: the papers and queries in PostgreSQL, matched in a private in-memory FTS5
// index). Each engine's own topic and query rows, its own query_matches read back. Expected papers come
// from the listing itself (grep) or are fixed indices; FTS5's own internals (tokenizer parity, random
// syntax, highlights): matcher.test.ts.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { copySqliteToPostgres } from '../../src/db/postgres/copy.ts';
import { matchPending } from '../../src/match/matcher.ts';
import { parseTopic } from '../../src/match/parse.ts';
import { matchPendingPg } from '../../src/match/postgres/match.ts';
import { ensureQuery as ensureQueryPg } from '../../src/subscribers/records/postgres.ts';
import { forEachEngine, type Engine } from '../helpers/on-engines.ts';
import { createTestSchema, type TestSchema } from '../helpers/postgres.ts';
import { tempDatabase, type TempDb } from '../helpers/seed.ts';
import { FIXTURE, addBatch, addSubscriber, addTopic, categoriesOf, grep, loadFixture, matchedIndices } from './matcher-fixture.ts';

const union = (a: number[], b: number[]) => [...new Set([...a, ...b])].sort((x, y) => x - y);
const minus = (a: number[], b: number[]) => a.filter((x) => !b.includes(x));
const intersect = (a: number[], b: number[]) => a.filter((x) => b.includes(x));

const SQL_ADD_TOPIC_PG = `
  INSERT INTO topics (subscriber_id, query_id, text, position)
  VALUES ($1, $2, $3, (SELECT count(*) FROM topics WHERE subscriber_id = $1))
  ON CONFLICT DO NOTHING`;
const SQL_MATCHED_PG = `SELECT p.paper_key AS key FROM query_matches m JOIN papers p ON p.id = m.paper_id WHERE m.query_id = $1`;

/** The listing and a confirmed reader in the engine's store; matches(topic) -> the listing indices it matched. */
function matcherOn(engine: Engine): (text: string) => Promise<number[]> {
  let t: TempDb;
  let pg: TestSchema | undefined;
  let reader: number;
  beforeAll(async () => {
    t = tempDatabase('matching-engines-');
    loadFixture(t.db, addBatch(t.db, '2025-11-25'));
    reader = addSubscriber(t.db, 'reader@example.org');
    if (engine === 'postgres') {
      pg = await createTestSchema();
      expect((await copySqliteToPostgres(t.db, pg.pool)).ok).toBe(true);
    }
  }, 60_000);
  afterAll(async () => {
    await pg?.drop();
    t?.cleanup();
  });
  return async (text) => {
    if (!pg) {
      const queryId = addTopic(t.db, reader, text);
      expect(matchPending(t.db).failed).toBe(0);
      return matchedIndices(t.db, queryId);
    }
    const parsed = parseTopic(text);
    const queryId = await ensureQueryPg(pg.pool, parsed);
    await pg.pool.query(SQL_ADD_TOPIC_PG, [reader, queryId, parsed.text]);
    expect((await matchPendingPg(pg.pool)).failed).toBe(0);
    const rows = (await pg.pool.query<{ key: string }>(SQL_MATCHED_PG, [queryId])).rows;
    return rows.map((r) => Number(r.key.replace('fx-', ''))).sort((a, b) => a - b);
  };
}

forEachEngine('the topic language', (engine) => {
  const matches = matcherOn(engine);

    it('stems English words: navigated finds navigate, navigating, navigation', async () => {
      expect(grep(/navigated/i)).toEqual([]); // the word itself appears nowhere
      expect(await matches('navigated')).toEqual(grep(/navigat/i));
      expect(await matches('negotiated')).toEqual([17, 63]);
    });

    it('ignores accents and case: pokemon, POKÉMON and Pokémon find the same paper', async () => {
      expect(await matches('pokemon')).toEqual([22]);
      expect(await matches('POKÉMON')).toEqual([22]);
    });

    it('requires a phrase to be consecutive, while words may be anywhere', async () => {
      const phrase = await matches('"human feedback"');
      expect(phrase).toEqual(grep(/\bhuman[\s-]+feedback/i));
      const words = await matches('human feedback');
      expect(words.length).toBeGreaterThan(phrase.length);
      expect(intersect(phrase, words)).toEqual(phrase);
    });

    it('reads a hyphenated word as a phrase', async () => {
      const hyphen = await matches('multi-agent');
      expect(hyphen).toEqual(grep(/multi[- ]agent/i));
      expect(await matches('"multi agent"')).toEqual(hyphen);
      expect((await matches('multi agent')).length).toBeGreaterThan(hyphen.length);
    });

    it('OR finds either word', async () => {
      expect(await matches('chess OR poker')).toEqual(union(await matches('chess'), await matches('poker')));
      expect(await matches('chess OR poker')).toEqual([17, 31, 52]);
    });

    it('excludes a word with -', async () => {
      const all = await matches('reinforcement');
      const survey = await matches('survey');
      expect(survey).toEqual([34, 51]);
      expect(await matches('reinforcement -survey')).toEqual(minus(all, survey));
      expect(await matches('reinforcement -(survey OR chess)')).toEqual(minus(all, union(survey, await matches('chess'))));
    });

    it('matches prefixes with *', async () => {
      expect(await matches('pok*')).toEqual(grep(/\bpok/i));
      expect(await matches('pok*')).toEqual([17, 22, 31]);
    });

    it('searches authors only with author:, and a bare word never does', async () => {
      expect(await matches('author:"Yann LeCun"')).toEqual([52]);
      expect(await matches('author:LeCun')).toEqual([31, 52]);
      expect(await matches('lecun')).toEqual([]);
      expect(await matches('hopper')).toEqual([]);
    });

    it('searches the title only with title:', async () => {
      const gameWord = /\bgam(e|es|ing)\b/i;
      expect(await matches('games')).toEqual(grep(gameWord));
      expect(await matches('title:games')).toEqual(FIXTURE.flatMap((p, i) => (gameWord.test(p.title) ? [i] : [])));
      expect(await matches('title:poker')).toEqual([]); // "PokerGPT" in the title is another word
      expect(await matches('abstract:chessqa')).toEqual(grep(/chessqa/i).filter((i) => /chessqa/i.test(FIXTURE[i]!.abstract)));
    });

    it('searches categories with category:, combinable with words', async () => {
      const lg = FIXTURE.flatMap((_, i) => (categoriesOf(i).includes('cs.LG') ? [i] : []));
      expect(await matches('category:cs.LG')).toEqual(lg);
      expect(await matches('category:cs.CL')).toEqual(FIXTURE.flatMap((_, i) => (i % 3 === 1 ? [i] : [])));
      expect(await matches('category:cs.LG self-play')).toEqual(intersect(lg, await matches('self-play')));
      expect(await matches('cs')).toEqual(grep(/\bcs\b/i)); // a bare word does not look at categories
    });

    it('groups with parentheses', async () => {
      expect(await matches('(chess OR poker) language')).toEqual(intersect([17, 31, 52], await matches('language')));
      expect(await matches('title:(chess OR games)')).toEqual([16, 17, 46, 52, 53, 56, 61]);
      expect(await matches('title:(chess OR games) -abstract:language')).toEqual(
        minus([16, 17, 46, 52, 53, 56, 61], await matches('abstract:language')),
      );
      expect((await matches('title:(chess OR games) -abstract:language')).length).toBeGreaterThan(0);
      expect((await matches('title:(chess OR games) -abstract:language')).length).toBeLessThan(7);
    });

    it('never lets FTS5 syntax through: special characters match as plain words or are rejected', async () => {
      const nasty = [
        'a "b" * : ^ NEAR AND NOT',
        'NEAR(reinforcement learning, 2)',
        'NEAR(reinforcement learning)',
        'reinforcement AND learning',
        'x^2 : {title} "o\'neil"',
        'A* Search',
        '"chess" OR "poker"*',
        'title:"a""b"',
        'NOT chess',
        ')(',
        '"',
        'chess:poker',
      ];
      for (const text of nasty) {
        try {
          await matches(text);
        } catch (e) {
          expect((e as { code?: string }).code, text).toBe('TOPIC_INVALID');
        }
      }
      expect(await matches('reinforcement AND learning')).toEqual(await matches('reinforcement learning'));
      // NEAR is a plain word here (only #9 has it), not the FTS5 operator
      expect(await matches('NEAR(reinforcement learning)')).toEqual(intersect(grep(/\bnear\b/i), await matches('reinforcement learning')));
      expect(await matches('NEAR(reinforcement learning)')).toEqual([9]);
    });
});
