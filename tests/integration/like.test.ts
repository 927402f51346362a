// like:<arXiv id> topics on the real sample listing (71 reinforcement-learning abstracts),
// a real SQLite file with FTS5, and a real local HTTP server standing in for the arXiv query API.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.ts';
import { ingestBatch } from '../../src/ingest/ingest.ts';
import { readBatchFile } from '../../src/ingest/readers/batch.ts';
import { arxivExampleFetcher } from '../../src/match/like/arxiv-fetcher.ts';
import { buildLikeQuery, ensureExamples } from '../../src/match/like/like.ts';
import { countStems, estimatedSelfScore } from '../../src/match/like/terms.ts';
import { ensureQuery, matchPending, previewTopicDetails } from '../../src/match/matcher.ts';
import { parseTopic } from '../../src/match/parse.ts';
import { startFeedServer, xml, type FeedServer } from '../helpers/feed-server.ts';
import { tempDatabase, type TempDb } from '../helpers/seed.ts';

const sample = JSON.parse(readFileSync(new URL('../../samples/daily-papers-sample.json', import.meta.url), 'utf8'));
const API_QUERY = readFileSync(new URL('../fixtures/feeds/arxiv-api-query.xml', import.meta.url), 'utf8');
const API_EMPTY = API_QUERY.replace(/<entry>[\s\S]*<\/entry>/, '').replace(/totalResults([^>]*)>2</, 'totalResults$1>0<');
const clock = { now: () => new Date('2025-11-25T12:00:00Z') };

let t: TempDb;
let feeds: FeedServer;
const keyOf = (title: string): string => sample.papers.find((p: { title: string }) => p.title.startsWith(title)).id;
const CRAFT_GUI = keyOf('CRAFT-GUI');

/** Titles a like: topic matched among the sample papers. */
function matchedTitles(text: string): string[] {
  const id = ensureQuery(t.db, parseTopic(text));
  t.db.prepare(`INSERT INTO subscribers (email, status, token_salt, timezone, created_at) VALUES (?, 'confirmed', 's', 'UTC', '2025-11-25')`).run(`${id}@example.org`);
  const sid = (t.db.prepare('SELECT max(id) AS id FROM subscribers').get() as { id: number }).id;
  t.db.prepare('INSERT INTO topics (subscriber_id, query_id, text, position) VALUES (?, ?, ?, 0)').run(sid, id, text);
  matchPending(t.db);
  return (
    t.db
      .prepare('SELECT p.title FROM query_matches m JOIN papers p ON p.id = m.paper_id WHERE m.query_id = ? ORDER BY m.score')
      .all(id) as Array<{ title: string }>
  ).map((r) => r.title);
}

beforeAll(async () => {
  t = tempDatabase('digest-like-');
  ingestBatch(t.db, readBatchFile(sample), clock);
  feeds = await startFeedServer();
});
afterAll(async () => {
  await feeds.close();
  t.cleanup();
});

describe('like: an example paper', () => {
  it('matches the papers on the same problem, not those sharing a common word', () => {
    const titles = matchedTitles(`like:${CRAFT_GUI}`);
    expect(titles.some((x) => x.startsWith('CRAFT-GUI'))).toBe(false); // the example is never its own match
    expect(titles.some((x) => x.startsWith('GUI-G1'))).toBe(true);
    expect(titles.some((x) => x.startsWith('ARPO'))).toBe(true);
    // Shares "curriculum" (one of its terms) and the field's vocabulary, not the problem.
    expect(titles.some((x) => x.startsWith('Prompt Curriculum Learning'))).toBe(false);
    expect(titles.length).toBeLessThanOrEqual(3);
  });

  it('chooses distinctive terms, not the words every paper of the listing uses', () => {
    const q = buildLikeQuery(t.db, [keyOf('Iterative Nash Policy Optimization')]);
    const words = q.terms.map((x) => x.word);
    expect(words).toEqual(expect.arrayContaining(['nash', 'regret']));
    for (const common of ['reinforcement', 'learning', 'model', 'language', 'the', 'whether']) expect(words).not.toContain(common);
  });

  it("estimates an example's own score (for examples looked up on arXiv) near what FTS5 computes", () => {
    const key = keyOf('Iterative Nash Policy Optimization');
    const q = buildLikeQuery(t.db, [key]);
    const ex = t.db.prepare('SELECT title, abstract FROM papers WHERE paper_key = ?').get(key) as { title: string; abstract: string };
    const counts = countStems(ex.title, ex.abstract);
    const own = q.terms.filter((x) => counts.has(x.stem)).map((x) => ({ ...x, tf: counts.get(x.stem)!.tf }));
    const n = (t.db.prepare('SELECT count(*) AS n FROM papers').get() as { n: number }).n;
    const ratio = estimatedSelfScore(own, n) / q.selfScore;
    expect(ratio).toBeGreaterThan(0.6);
    expect(ratio).toBeLessThan(1.4);
  });

  it('previews in the topic builder with the shared terms as the words to highlight', () => {
    const r = previewTopicDetails(t.db, `like:${keyOf('Iterative Nash Policy Optimization')}`, { since: '2025-11-01', limit: 5 });
    expect(r.papers.map((p) => p.title)).toEqual(expect.arrayContaining([expect.stringMatching(/^Multiplayer Nash/)]));
    expect(r.highlight).toContain('"nash"');
  });
});

describe('like: an example not in the database', () => {
  it('looks it up through the arXiv query API and keeps it out of the papers', async () => {
    feeds.route('/api/query', xml(API_QUERY));
    const fetcher = arxivExampleFetcher(`${feeds.url}/api/query`, { timeoutMs: 2000, retries: 0, logger: silentLogger });
    const papersBefore = (t.db.prepare('SELECT count(*) AS n FROM papers').get() as { n: number }).n;
    await ensureExamples(t.db, ['2501.00010'], fetcher, clock.now());
    expect(feeds.hits('/api/query')).toBe(1);
    expect((t.db.prepare('SELECT count(*) AS n FROM papers').get() as { n: number }).n).toBe(papersBefore);
    expect(t.db.prepare('SELECT title FROM like_examples WHERE paper_key = ?').get('2501.00010')).toEqual({
      title: 'Trailing Zeros Matter: A Note on Identifier Hygiene in Scholarly Pipelines',
    });
  });

  it('refuses an id arXiv does not know, with a clear message, and writes nothing', async () => {
    feeds.route('/api/query', xml(API_EMPTY));
    const fetcher = arxivExampleFetcher(`${feeds.url}/api/query`, { timeoutMs: 2000, retries: 0, logger: silentLogger });
    await expect(ensureExamples(t.db, ['2501.99999'], fetcher, clock.now())).rejects.toThrow(
      "like:2501.99999: paper 2501.99999 is not in this digest's database and arXiv does not know it either; check the id or use another example",
    );
    await expect(ensureExamples(t.db, ['2501.99998'], undefined, clock.now())).rejects.toThrow(/no arXiv source is configured/);
    expect(t.db.prepare('SELECT count(*) AS n FROM like_examples WHERE paper_key LIKE ?').get('2501.9999%')).toEqual({ n: 0 });
    expect(() => ensureQuery(t.db, parseTopic('like:2501.99999'))).toThrow(/like:2501.99999: paper 2501.99999 is not in this digest's database/);
  });
});
