// The pipeline's upkeep on a running service: topic queries that no subscriber uses any more are
// dropped (with their matches) by the next run, so the queries table and query_matches do not grow
// with every topic anyone ever typed; queries still in use keep their matches and are not re-matched.
import { afterEach, describe, expect, it } from 'vitest';
import { runPipeline } from '../../src/pipeline.ts';
import { findSubscriberById } from '../../src/subscribers/records/repo.ts';
import { seedBatch, seedSubscriber } from '../helpers/seed.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const queryCount = (t: TestApp) => (t.app.db.prepare('SELECT count(*) AS n FROM queries').get() as { n: number }).n;
const matchCount = (t: TestApp) => (t.app.db.prepare('SELECT count(*) AS n FROM query_matches').get() as { n: number }).n;

describe('pipeline upkeep', () => {
  it('drops the queries of topics a subscriber removed, and their matches, at the next run', async () => {
    t = await startTestApp();
    const { db } = t.app;
    seedBatch(db, '2025-11-24', [
      { title: 'Speculative decoding with draft trees', abstract: 'We accelerate inference.' },
      { title: 'Diffusion models for video', abstract: 'A diffusion transformer.' },
      { title: 'Mixture of experts routing', abstract: 'Sparse experts.' },
    ]);
    const alice = seedSubscriber(db, { email: 'alice@example.org', topics: ['speculative decoding', 'diffusion'] });
    seedSubscriber(db, { email: 'bob@example.org', topics: ['diffusion'] });
    await runPipeline(t.app, { mode: 'now' });
    expect(queryCount(t)).toBe(2);
    expect(matchCount(t)).toBe(2);

    // Alice swaps "speculative decoding" for "mixture of experts"; "diffusion" is still Bob's and hers.
    const token = t.app.links.preferences(findSubscriberById(db, alice.id)!).split('/').pop()!;
    t.app.subscribers.updatePreferences(token, { topics: ['mixture of experts', 'diffusion'] });
    expect(queryCount(t)).toBe(3); // the old query lingers until the run

    t.clock.advance(24 * 3600_000);
    await runPipeline(t.app, { mode: 'now' });
    const texts = (db.prepare('SELECT fts FROM queries ORDER BY id').all() as { fts: string }[]).map((r) => r.fts);
    expect(texts).toHaveLength(2);
    expect(texts.join(' ')).not.toMatch(/speculative/);
    expect(matchCount(t)).toBe(2); // diffusion + mixture of experts, each once
  });
});
