// The VERP envelope sender also comes out of worker threads (SEND_WORKERS=2: they rebuild everything from
// the config copy they get): every message's MAIL FROM names its own ledger row with a tag that verifies.
import { afterEach, expect, it } from 'vitest';
import { nonceLookup } from '../../src/bounces/digest-tag.ts';
import { verpFrom } from '../../src/bounces/verp.ts';
import { sendPending } from '../../src/send/sender.ts';
import { deliveryEnv, type DeliveryEnv } from '../helpers/delivery-setup.ts';
import { seedBatch, seedSubscribers } from '../helpers/seed.ts';
import { accept } from '../helpers/smtp-sink.ts';

let e: DeliveryEnv | undefined;
afterEach(async () => {
  await e?.close();
  e = undefined;
});

it('worker threads send each digest with its own signed VERP envelope sender', { timeout: 60_000 }, async () => {
  // A slowish relay (30 ms a message), so the worker thread is up before this thread has sent everything.
  e = await deliveryEnv({ env: { SEND_WORKERS: '2', SMTP_POOL_SIZE: '4', BOUNCE_ADDRESS: 'bounces@bounces.example.org' }, sink: { script: () => accept(30) } });
  seedBatch(e.t.db, '2025-11-25', [{ title: 'Speculative decoding at scale' }]);
  const emails = Array.from({ length: 200 }, (_, i) => `v${i}@example.com`);
  seedSubscribers(e.t.db, emails.map((email) => ({ email, topics: ['decoding'] })));
  await e.plan();
  const sink = e.sink;
  const summary = await sendPending({ ...e.deps, smtpUrl: async () => sink.url }, { parallelMinRows: 0 });
  expect(summary).toMatchObject({ sent: 200, threads: 2 });
  expect(Math.min(...summary.sentPerThread!)).toBeGreaterThan(0); // the worker thread really sent

  const verp = verpFrom(e.config)!;
  const rowOf = new Map(
    (e.t.db.prepare('SELECT d.id, s.email FROM digests d JOIN subscribers s ON s.id = d.subscriber_id').all() as { id: number; email: string }[]).map((r) => [r.email, r.id]),
  );
  for (const m of sink.messages) {
    expect(verp.parse(m.from, nonceLookup(e.t.db))).toEqual({ digestId: rowOf.get(m.to[0]!) });
  }
  expect(new Set(sink.messages.map((m) => m.from)).size).toBe(200);
});
