// `digest preview <email>`: the digest a subscriber would get next, written to nothing. After the day's
// email went out, a paper that arrives later waits for tomorrow's slot: preview shows that digest
// (tomorrow's edition, the new paper only), not "nothing to send".
import { afterEach, describe, expect, it } from 'vitest';
import { runPipeline } from '../../src/pipeline.ts';
import { previewDigest } from '../../src/render/preview.ts';
import { countByStatus, seedBatch, seedSubscriber } from '../helpers/seed.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe('digest preview', () => {
  it("shows the next slot's digest when today's has gone out, and writes nothing", async () => {
    t = await startTestApp({}, '2025-11-25T09:00:00Z'); // 10:00 in Paris, the subscriber's zone
    const { db } = t.app;
    seedBatch(db, '2025-11-25', [{ title: 'Self-play for agents', abstract: 'We study self-play.' }]);
    seedSubscriber(db, { email: 'b@example.org', topics: ['self-play'], timezone: 'Europe/Paris' });
    await runPipeline(t.app, { mode: 'now' });
    expect(t.smtp.messages).toHaveLength(1);

    seedBatch(db, '2025-11-25', [{ title: 'Self-play for testing', abstract: 'Self-play finds bugs.' }], 'manual');
    const before = { ledger: countByStatus(db), subscriber: db.prepare('SELECT * FROM subscribers').all() };
    const next = await previewDigest(t.app, 'b@example.org');
    expect(next).toBeDefined();
    expect(next!.subject).toBe('1 new paper on self-play — 2025-11-26'); // tomorrow's edition
    expect(next!.text).toContain('Self-play for testing');
    expect(next!.text).not.toContain('Self-play for agents');
    expect({ ledger: countByStatus(db), subscriber: db.prepare('SELECT * FROM subscribers').all() }).toEqual(before);
  });
});
