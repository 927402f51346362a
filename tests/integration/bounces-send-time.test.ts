// The same rules when the relay refuses at send time (a direct-to-MX relay passes Gmail's answer on): a
// policy block ("550-5.7.1 … likely unsolicited mail" after DATA) fails that digest but is no failure of the
// address, whatever HARD_FAILURES_TO_SUPPRESS says; a full mailbox answered with a permanent 552 5.2.2 is a
// soft bounce (SOFT_BOUNCES_TO_SUPPRESS within the window), not a hard one. Real SMTP, real ledger.
import { afterEach, expect, it } from 'vitest';
import { deliveryEnv, type DeliveryEnv } from '../helpers/delivery-setup.ts';
import { seedBatch, seedSubscribers } from '../helpers/seed.ts';
import { reject } from '../helpers/smtp-sink.ts';

let e: DeliveryEnv;
afterEach(async () => e?.close());

const UNSOLICITED =
  '5.7.1 [192.0.2.10 12] Gmail has detected that this message is likely unsolicited mail. To reduce the amount of spam sent to Gmail, this message has been blocked.';
const OVER_QUOTA = '5.2.2 The email account that you tried to reach is over quota. Please direct the recipient to https://support.google.com/mail/?p=OverQuotaPerm';

it('a policy block at send time never suppresses the reader; a 552 5.2.2 full mailbox counts as soft', { timeout: 60_000 }, async () => {
  e = await deliveryEnv({
    sink: {
      script: (ctx) =>
        ctx.address === 'blocked@example.com' ? reject(550, { text: UNSOLICITED, stage: 'data' }) : ctx.address === 'full@example.com' ? reject(552, { text: OVER_QUOTA, stage: 'data' }) : undefined,
    },
  });
  const db = e.t.db;
  seedSubscribers(db, ['blocked@example.com', 'full@example.com', 'fine@example.com'].map((email) => ({ email, topics: ['diffusion'] })));
  const status = (email: string) => (db.prepare('SELECT status FROM subscribers WHERE email = ?').get(email) as { status: string }).status;
  const events = () =>
    db.prepare(`SELECT s.email, e.kind, e.channel, e.status, e.outcome FROM bounce_events e JOIN subscribers s ON s.id = e.subscriber_id ORDER BY e.id`).all();

  // Three days, one digest each; HARD_FAILURES_TO_SUPPRESS is 2 here.
  for (const [i, day] of ['2025-11-25', '2025-11-26', '2025-11-27'].entries()) {
    seedBatch(db, day, [{ title: `Diffusion models, part ${i + 1}` }]);
    await e.plan(`${day}T12:00:00Z`);
    const summary = await e.send();
    expect(summary).toMatchObject({ sent: 1, failed: 2, newlySuppressed: i === 2 ? 1 : 0 });
    expect(status('blocked@example.com')).toBe('confirmed');
    expect(status('full@example.com')).toBe(i === 2 ? 'suppressed' : 'confirmed');
  }
  const failed = db.prepare(`SELECT smtp_code, smtp_response FROM digests d JOIN subscribers s ON s.id = d.subscriber_id WHERE s.email = 'blocked@example.com'`).all() as Array<{ smtp_code: number; smtp_response: string }>;
  expect(failed).toHaveLength(3);
  for (const f of failed) expect(f).toMatchObject({ smtp_code: 550, smtp_response: expect.stringContaining('likely unsolicited mail') });
  expect(events()).toEqual([
    ...[1, 2, 3].flatMap((n) => [
      { email: 'blocked@example.com', kind: 'policy', channel: 'send', status: '5.7.1', outcome: 'alerted' },
      { email: 'full@example.com', kind: 'soft', channel: 'send', status: '5.2.2', outcome: n === 3 ? 'suppressed' : 'counted' },
    ]),
  ]);
  // The blocked reader is still planned and tried the next day: it is the sender's reputation to fix.
  seedBatch(db, '2025-11-28', [{ title: 'Diffusion models, part 4' }]);
  expect((await e.plan('2025-11-28T12:00:00Z')).planned).toBe(2);
});
