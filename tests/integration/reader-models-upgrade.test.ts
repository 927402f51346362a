// A reader who voted before reader models existed (votes in `feedback`, no model yet) gets one at the next
// plan, trained there (LAZY_TRAIN_MAX per run), and the plan says so; a reader who never voted gets none.
// Real sample abstracts, a real SQLite file.
import { readFileSync } from 'node:fs';
import { afterEach, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import type { ModelPassTotals } from '../../src/feedback/model-pass.ts';
import { ingestBatch } from '../../src/ingest/ingest.ts';
import { readBatchFile } from '../../src/ingest/readers/batch.ts';
import { planDigests } from '../../src/plan/planner.ts';
import { matchPending } from '../../src/match/matcher.ts';
import { seedSubscribers, tempDatabase, type TempDb } from '../helpers/seed.ts';

const sample = JSON.parse(readFileSync(new URL('../../samples/daily-papers-sample.json', import.meta.url), 'utf8')) as {
  papers: Array<{ id: string; title: string; abstract: string }>;
};
let t: TempDb | undefined;
afterEach(() => t?.cleanup());

it('trains at plan time the model of a reader who voted before models existed', async () => {
  t = tempDatabase('digest-models-upgrade-');
  const { db } = t;
  const clock = new ManualClock('2025-11-25T12:00:00Z');
  ingestBatch(db, readBatchFile({ source: 'hf-daily', date: '2025-11-25', papers: sample.papers.slice(0, 36) }), clock);
  const [old, never] = seedSubscribers(db, [
    { email: 'old@example.org', topics: ['game OR poker OR chess'] },
    { email: 'never@example.org', topics: ['game OR poker OR chess'] },
  ]);
  const id = (title: RegExp) => (db.prepare('SELECT id FROM papers WHERE title REGEXP ?').pluck().get(title.source) as number | undefined) ?? 0;
  db.function('regexp', (re: string, s: string) => (new RegExp(re, 'i').test(s) ? 1 : 0));
  // Votes as the previous version stored them: rows in feedback, nothing else.
  const vote = db.prepare(`INSERT INTO feedback (subscriber_id, paper_id, vote, at) VALUES (?, ?, ?, '2025-11-25T10:00:00Z')`);
  for (const [re, v] of [[/^StarCraft II/, 1], [/^FightLadder/, 1], [/^Suspicion-Agent/, 1], [/^Part I: Tricks/, -1], [/^Iterative Nash/, -1]] as const) vote.run(old!.id, id(re), v);
  matchPending(db);
  expect(db.prepare('SELECT count(*) AS n FROM reader_models').get()).toEqual({ n: 0 });

  clock.set('2025-11-26T12:00:00Z');
  ingestBatch(db, readBatchFile({ source: 'hf-daily', date: '2025-11-26', papers: sample.papers.slice(36) }), clock);
  matchPending(db);
  let totals: ModelPassTotals | undefined;
  const r = await planDigests(db, { clock, mode: 'now', onModels: (m) => (totals = m) });
  expect(r.planned).toBe(2);
  expect(totals).toMatchObject({ trained: 1, reranked: 1 });
  const models = db.prepare('SELECT subscriber_id AS sid, positives, negatives FROM reader_models').all();
  expect(models).toEqual([{ sid: old!.id, positives: 3, negatives: 2 }]);
  expect(never).toBeDefined();
});
