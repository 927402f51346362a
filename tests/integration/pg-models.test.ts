// Reader models on both engines: the same votes give a reader the same digest on SQLite and on
// PostgreSQL: the same papers in the same (model) order, the same suggestions with the same reasons and
// scores, and the same trained model. SQLite trains at each vote (feedback/profile.ts); PostgreSQL finds
// the votes in its feedback table and trains at plan time (feedback/postgres/model-pass.ts), with
// paper_terms computed at matching from its in-memory index (match/postgres/paper-terms.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import type { Db } from '../../src/db/open.ts';
import { copySqliteToPostgres } from '../../src/db/postgres/copy.ts';
import { recordVote } from '../../src/feedback/profile.ts';
import { ingestBatch } from '../../src/ingest/ingest.ts';
import { ingestBatchPg } from '../../src/ingest/postgres/ingest.ts';
import { matchPending } from '../../src/match/matcher.ts';
import { matchPendingPg } from '../../src/match/postgres/match.ts';
import { planDigests } from '../../src/plan/planner.ts';
import { planDigestsPg } from '../../src/plan/postgres/plan.ts';
import type { IncomingBatch } from '../../src/types.ts';
import {
  addSubscribers,
  backfillBatch,
  BATCH_DAY_1,
  BATCH_DAY_2,
  fixtureBatch,
  postgresRows,
  SQL_DELIVER_ALL,
  SQL_DELIVER_ALL_PG,
  sqliteRows,
  type DecodedRow,
  type EditionSubscriber,
} from '../helpers/pg-edition.ts';
import { postgresForTests, type TestSchema } from '../helpers/postgres.ts';
import { tempDatabase, type TempDb } from '../helpers/seed.ts';

const pg = await postgresForTests();

const SUBSCRIBERS: EditionSubscriber[] = [
  { email: 'voter@example.org', topics: ['reinforcement learning', { text: 'web', muted: true }] },
  { email: 'one-vote@example.org', topics: ['multi-agent'] },
  { email: 'quiet@example.org', topics: ['reinforcement learning'] },
];

const SQL_SUGGESTIONS = `
  SELECT d.subscriber_id AS subscriber, d.edition, s.paper_id AS "paperId", s.score, s.reason_paper AS reason
  FROM digest_suggestions s JOIN digests d ON d.id = s.digest_id
  WHERE d.edition = ? ORDER BY d.subscriber_id, s.paper_id`;
const SQL_MODELS = `SELECT subscriber_id AS subscriber, bias, cal_a AS a, cal_b AS b, weights, positives, negatives, context FROM reader_models ORDER BY subscriber_id`;
const SQL_FEEDBACK = `SELECT subscriber_id, paper_id, vote, at FROM feedback`;
const SQL_INSERT_FEEDBACK = `
  INSERT INTO feedback (subscriber_id, paper_id, vote, at) SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::int[], $4::text[])
  ON CONFLICT (subscriber_id, paper_id) DO UPDATE SET vote = excluded.vote, at = excluded.at`;

const GAMES = /\b(games?|gameplay|poker|chess|starcraft|pok[eé]mon)\b/i;

type Suggestion = { subscriber: number; edition: string; paperId: number; score: number; reason: number | null };

describe.skipIf(!pg.reachable)('reader models on PostgreSQL', () => {
  let s: TestSchema;
  let t: TempDb;
  let db: Db;
  const clock = new ManualClock('2025-11-25T14:00:00.000Z');
  const ids = new Map<string, number>();

  beforeAll(async () => {
    s = await pg.schema();
    t = tempDatabase('pg-models-');
    db = t.db;
    addSubscribers(db, SUBSCRIBERS);
    for (const r of db.prepare('SELECT id, email FROM subscribers').all() as Array<{ id: number; email: string }>) ids.set(r.email, r.id);
    expect((await copySqliteToPostgres(db, s.pool)).ok).toBe(true);
  });
  afterAll(async () => {
    t?.cleanup();
    await s?.drop();
  });

  async function editionOnBoth(batch: IncomingBatch, edition: string): Promise<{ rows: DecodedRow[]; suggestions: Suggestion[] }> {
    clock.set(`${edition}T14:00:00.000Z`);
    expect(await ingestBatchPg(s.pool, batch, clock)).toEqual(ingestBatch(db, batch, clock));
    matchPending(db);
    await matchPendingPg(s.pool);
    const lite = await planDigests(db, { clock, mode: 'due', yieldBetweenChunks: false });
    const onPg = await planDigestsPg(s.pool, { clock, mode: 'due' });
    const rows = sqliteRows(db, edition);
    expect(await postgresRows(s.pool, edition)).toEqual(rows);
    expect({ planned: onPg.planned, items: onPg.items }).toEqual({ planned: lite.planned, items: lite.items });
    const suggestions = db.prepare(SQL_SUGGESTIONS).all(edition) as Suggestion[];
    expect((await s.pool.query(SQL_SUGGESTIONS.replace('?', '$1'), [edition])).rows).toEqual(suggestions);
    expect((await s.pool.query(SQL_MODELS)).rows).toEqual(db.prepare(SQL_MODELS).all());
    for (const sql of SQL_DELIVER_ALL) db.exec(sql);
    for (const sql of SQL_DELIVER_ALL_PG) await s.pool.query(sql);
    return { rows, suggestions };
  }

  /** Votes through SQLite's own path (which trains there), and the same rows into PostgreSQL's feedback table. */
  async function vote(email: string, votes: Array<[number, 1 | -1]>): Promise<void> {
    for (const [paperId, v] of votes) recordVote(db, ids.get(email)!, paperId, v, clock.now());
    const f = db.prepare(SQL_FEEDBACK).all() as Array<{ subscriber_id: number; paper_id: number; vote: number; at: string }>;
    await s.pool.query(SQL_INSERT_FEEDBACK, [f.map((x) => x.subscriber_id), f.map((x) => x.paper_id), f.map((x) => x.vote), f.map((x) => x.at)]);
  }

  const textOf = (id: number) => Object.values(db.prepare('SELECT title, abstract FROM papers WHERE id = ?').get(id) as object).join(' ');
  const rowOf = (rows: DecodedRow[], email: string) => rows.find((r) => r.subscriber === ids.get(email))!;

  // Three editions on two engines on a shared 2-core machine: a generous limit, no figure asserted.
  it('the same votes give the same order, suggestions and models on both engines, over three days', { timeout: 300_000 }, async () => {
    const day1 = await editionOnBoth(backfillBatch('2025-11-24'), '2025-11-25');
    // The voter likes games and not the rest of what their topic brings (a vote on every paper shown); one reader votes once.
    const shown = rowOf(day1.rows, 'voter@example.org').papers.map((p) => p.paperId);
    const votes = shown.map((id) => [id, GAMES.test(textOf(id)) ? 1 : -1] as [number, 1 | -1]);
    expect(votes.filter(([, v]) => v === 1).length).toBeGreaterThanOrEqual(3);
    await vote('voter@example.org', votes);
    await vote('one-vote@example.org', [[rowOf(day1.rows, 'one-vote@example.org').papers[0]!.paperId, 1]]);

    const day2 = await editionOnBoth(fixtureBatch(BATCH_DAY_1), '2025-11-26');
    // More votes on day 2's papers, that evening: PostgreSQL's model is now older than the newest vote and is retrained.
    clock.set('2025-11-26T19:00:00.000Z');
    const more = rowOf(day2.rows, 'voter@example.org').papers.map((p) => [p.paperId, GAMES.test(textOf(p.paperId)) ? 1 : -1] as [number, 1 | -1]);
    await vote('voter@example.org', more.slice(0, 8));
    const day3 = await editionOnBoth(fixtureBatch(BATCH_DAY_2), '2025-11-27');
    // What the model changed: the voter's order is not the quiet reader's (same topic), and suggestions came.
    const order = (r: DecodedRow[], email: string) => rowOf(r, email).papers.map((p) => p.paperId);
    expect(order(day2.rows, 'voter@example.org')).not.toEqual(order(day2.rows, 'quiet@example.org'));
    expect([...day2.suggestions, ...day3.suggestions].length).toBeGreaterThan(0);
  });
});
