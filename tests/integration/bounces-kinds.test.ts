// Bounces that mean what they say, over real SMTP: digests go out through the send path to a relay that
// accepts each one, and real-world DSNs come back to the built-in receiver. Soft bounces add up within
// SOFT_BOUNCE_WINDOW_DAYS whatever the relay accepted in between (a full mailbox is not mailed forever);
// a policy block (Gmail's "5.7.1 ... likely unsolicited", a Spamhaus listing) leaves the reader subscribed
// and is counted, shown and logged as an error for the operator. The same story on both engines: on
// PostgreSQL the ticks are `digest run`'s there (pipeline-postgres.ts) and the reports act on its rows.
import pino from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { overviewCharts } from '../../src/admin/overview.ts';
import type { BounceReceiver } from '../../src/bounces/receiver.ts';
import { fixtureReport, READERS, deliverReport, startBounceSetupOn, startReceiverOn, type EngineBounceSetup } from '../helpers/bounce-setup.ts';
import { forEachEngine } from '../helpers/on-engines.ts';

const DAY = 86_400_000;

forEachEngine('what a bounce means', (engine) => {
  let s: EngineBounceSetup;
  let receiver: BounceReceiver;
  let outcomes: string[];
  const logged: Array<{ level: number; msg: string; detail?: string }> = [];
  /** How many digests each reader has been sent so far (the relay accepted every one). */
  const received: Record<string, number> = Object.fromEntries(READERS.map((r) => [r, 1]));
  let day = 0;

  const deliver = (raw: string, to: string) => deliverReport(receiver.port, raw, to);
  /** A DSN about `email`'s latest digest, sent back to that digest's envelope sender. */
  async function bounce(fixture: string, email: string): Promise<string | undefined> {
    const envelope = (await s.t.smtp.waitFor(email, received[email])).mailFrom;
    await deliver(fixtureReport(fixture, { envelope, recipient: email }), envelope);
    return outcomes.at(-1);
  }
  /** `days` later, a new paper arrives and the tick sends each confirmed reader their digest. */
  async function later(days: number): Promise<string[]> {
    s.t.clock.advance(days * DAY);
    day += days;
    const now = s.t.clock.now().toISOString();
    await s.e.ingest(now.slice(0, 10), [{ title: `Mixture of experts, day ${day}`, abstract: 'Sparse mixture of experts layers.' }]);
    await s.e.run();
    const sent = READERS.filter((r) => s.t.smtp.messages.filter((m) => m.to.includes(r)).length > received[r]!);
    for (const r of sent) received[r]!++;
    return sent;
  }

  beforeAll(async () => {
    s = await startBounceSetupOn(engine);
    outcomes = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void logged.push(JSON.parse(line)) });
    receiver = await startReceiverOn(s, outcomes, logger);
  }, 30_000);

  afterAll(async () => {
    await receiver?.close();
    await s?.e.close();
  });

  it("Gmail's 5.7.1 'likely unsolicited' and a Spamhaus listing are policy blocks: the readers stay subscribed and keep getting digests", async () => {
    expect(await bounce('postfix-gmail-unsolicited-5.7.1.eml', 'alice@example.com')).toBe('alerted');
    expect(await bounce('postfix-spamhaus-5.1.0.eml', 'dave@example.com')).toBe('alerted');
    expect((await s.status('alice@example.com')).status).toBe('confirmed');
    expect((await s.status('dave@example.com')).status).toBe('confirmed');
    expect(await s.events()).toEqual([
      { kind: 'policy', outcome: 'alerted', channel: 'smtp', subscriber: 'alice@example.com' },
      { kind: 'policy', outcome: 'alerted', channel: 'smtp', subscriber: 'dave@example.com' },
    ]);
    // An error in the log for each, with the receiver's words.
    const alarms = logged.filter((l) => l.level >= 50 && l.msg.startsWith('policy block'));
    expect(alarms).toHaveLength(2);
    expect(alarms[0]!.detail).toContain('likely unsolicited mail');
    expect(alarms[1]!.detail).toContain('listed in Spamhaus');
  });

  it('policy blocks are counted and shown: /metrics, digest status, the console overview', async () => {
    expect(await s.e.metrics()).toContain('digest_bounces_total{kind="policy"} 2');
    const out: string[] = [];
    expect(await s.e.status({ out: (l) => out.push(l), err: (l) => out.push(l), isTTY: false }, 10)).toBe(0);
    const text = out.join('\n');
    expect(text).toContain('bounces (30 days): hard 0, soft 0, policy blocks 2; complaints 0');
    expect(text).toContain('alarm: 2 digests were refused as spam or for the sender');
    const o = await s.e.overview();
    expect(o.policy.reduce((a, b) => a + b, 0)).toBe(2);
    expect(overviewCharts(o).find((c) => c.id === 'bounces')!.svg).toContain('policy blocks');
  });

  it('soft bounces add up across digests the relay accepted: the third within 7 days suppresses', async () => {
    expect(await bounce('gmail-soft-4.2.2.eml', 'bob@example.com')).toBe('counted');
    expect(await bounce('gmail-soft-4.2.2.eml', 'carol@example.com')).toBe('counted');
    // Day 1: everyone is mailed (alice and dave too, after their policy blocks); bob's mailbox is still full.
    expect(await later(1)).toEqual([...READERS]);
    expect(await bounce('gmail-soft-4.2.2.eml', 'bob@example.com')).toBe('counted');
    expect((await s.status('bob@example.com')).status).toBe('confirmed');
    // Day 2: accepted again by the relay, bounced again: the third in the window.
    expect(await later(1)).toContain('bob@example.com');
    expect(await bounce('gmail-soft-4.2.2.eml', 'bob@example.com')).toBe('suppressed');
    expect((await s.status('bob@example.com')).status).toBe('suppressed');
    // Day 3: bob is no longer mailed.
    expect(await later(1)).toEqual(['alice@example.com', 'carol@example.com', 'dave@example.com']);
  });

  it('soft bounces older than the window no longer count', async () => {
    // Carol's first soft bounce was on day 0; days 10 and 11 bring two more: two within 7 days.
    await later(7);
    expect(await bounce('gmail-soft-4.2.2.eml', 'carol@example.com')).toBe('counted');
    await later(1);
    expect(await bounce('gmail-soft-4.2.2.eml', 'carol@example.com')).toBe('counted');
    expect((await s.status('carol@example.com')).status).toBe('confirmed');
  });
});
