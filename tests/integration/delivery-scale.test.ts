// The acceptance run: 2,000 subscribers against a relay that fails 20% of attempts temporarily
// ends with every subscriber holding exactly one digest.
import { afterEach, expect, it } from 'vitest';
import { countByStatus, seedBatch, seedSubscribers } from '../helpers/seed.ts';
import { deliveryEnv, type DeliveryEnv } from '../helpers/delivery-setup.ts';
import { reject, type SinkReply } from '../helpers/smtp-sink.ts';

let e: DeliveryEnv | undefined;
afterEach(async () => e?.close());

/** Deterministic pseudo-random numbers (mulberry32), so a failure can be replayed. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

it('2,000 subscribers, 20% of attempts deferred: exactly one digest each', { timeout: 120_000 }, async () => {
  const random = seeded(20251125);
  const flaky = (): SinkReply | undefined => {
    const r = random();
    if (r < 0.1) return reject(451, { text: '4.7.1 Try again later' });
    if (r < 0.15) return reject(452, { stage: 'data', text: '4.3.1 Insufficient system storage' });
    if (r < 0.2) return reject(421, { text: '4.3.2 Service busy, closing channel' });
    return undefined;
  };
  e = await deliveryEnv({
    env: { SMTP_POOL_SIZE: '10', SMTP_MAX_ATTEMPTS: '10', SMTP_RETRY_BASE_MS: '5', SMTP_RETRY_MAX_MS: '50' },
    sink: { script: flaky },
  });
  seedBatch(e.t.db, '2025-11-25', [
    { title: 'Speculative decoding at scale', upvotes: 40 },
    { title: 'Test-time compute for reasoning', upvotes: 25 },
    { title: 'Decoding strategies revisited', upvotes: 3 },
  ]);
  const emails = Array.from({ length: 2000 }, (_, i) => `reader${i}@example.com`);
  seedSubscribers(e.t.db, emails.map((email, i) => ({ email, topics: i % 2 ? ['decoding'] : ['decoding', 'reasoning'] })));

  expect((await e.plan()).planned).toBe(2000);
  const summary = await e.send();
  expect(summary).toMatchObject({ sent: 2000, failed: 0, retrying: 0, paused: false });

  const counts = e.sink.countsByAddress();
  expect(counts.size).toBe(2000);
  expect(emails.every((a) => counts.get(a) === 1)).toBe(true);
  expect(countByStatus(e.t.db)).toEqual({ sent: 2000 });
  // The relay really did defer about one attempt in five.
  const attempts = [...e.sink.attempts.values()].reduce((a, b) => a + b, 0);
  expect(attempts).toBeGreaterThan(2300);
  const retried = e.t.db.prepare(`SELECT count(*) AS n FROM digests WHERE attempts > 1`).get() as { n: number };
  expect(retried.n).toBeGreaterThan(250);
});
