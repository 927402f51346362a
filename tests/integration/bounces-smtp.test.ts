// Bounces and complaints that arrive after delivery, over real SMTP: every digest leaves with its own
// signed VERP envelope sender; real-world-shaped DSNs (Postfix 5.1.1, Gmail 4.2.2 over quota, a delayed
// notice) and an ARF feedback-loop report are delivered by nodemailer to the built-in receiver
// (smtp-server) and act on the subscriber named by the tag only. Forged tags are refused at RCPT or change
// nothing; a replayed report is counted once. The same story on both engines: on PostgreSQL the digests are
// sent by `digest run`'s tick there and the receiver records into its rows.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { BounceReceiver } from '../../src/bounces/receiver.ts';
import { BOUNCE, fixtureReport, deliverReport, startBounceSetupOn, startReceiverOn, type EngineBounceSetup } from '../helpers/bounce-setup.ts';
import { forEachEngine } from '../helpers/on-engines.ts';

forEachEngine('bounce receiver over SMTP', (engine) => {
  let s: EngineBounceSetup;
  let receiver: BounceReceiver;
  let outcomes: string[];

  const deliver = (raw: string, to: string) => deliverReport(receiver.port, raw, to);

  beforeAll(async () => {
    s = await startBounceSetupOn(engine);
    outcomes = [];
    receiver = await startReceiverOn(s, outcomes);
  }, 30_000);

  afterAll(async () => {
    await receiver?.close();
    await s?.e.close();
  });

  it('sends every digest with its own signed VERP envelope sender', () => {
    const senders = Object.values(s.envelope);
    expect(new Set(senders).size).toBe(4);
    for (const [email, sender] of Object.entries(s.envelope)) {
      expect(sender).toMatch(new RegExp(`^bounces\\+${s.digestId[email]}-[0-9a-f]{32}@bounces\\.example\\.org$`));
    }
  });

  it('a Postfix 5.1.1 DSN suppresses the subscriber of the tag at once', async () => {
    await deliver(fixtureReport('postfix-hard-5.1.1.eml', { envelope: s.envelope['alice@example.com']!, recipient: 'alice@example.com' }), s.envelope['alice@example.com']!);
    expect(outcomes.at(-1)).toBe('suppressed');
    expect((await s.status('alice@example.com')).status).toBe('suppressed');
    expect(await s.events()).toEqual([{ kind: 'hard', outcome: 'suppressed', channel: 'smtp', subscriber: 'alice@example.com' }]);
  });

  it('a Gmail 4.2.2 soft bounce is counted toward SOFT_BOUNCES_TO_SUPPRESS; replayed, it counts once', async () => {
    const env = s.envelope['bob@example.com']!;
    const report = fixtureReport('gmail-soft-4.2.2.eml', { envelope: env, recipient: 'bob@example.com' });
    await deliver(report, env);
    expect(outcomes.at(-1)).toBe('counted');
    expect((await s.status('bob@example.com')).status).toBe('confirmed');
    await deliver(report, env); // the same report again (a replay, or the MTA retrying)
    expect(outcomes.at(-1)).toBe('duplicate');
    expect((await s.status('bob@example.com')).status).toBe('confirmed');
    expect((await s.events()).filter((e) => e.subscriber === 'bob@example.com')).toEqual([{ kind: 'soft', outcome: 'counted', channel: 'smtp', subscriber: 'bob@example.com' }]);
  });

  it('a delayed notice is not a bounce', async () => {
    const env = s.envelope['dave@example.com']!;
    await deliver(fixtureReport('postfix-delayed.eml', { envelope: env, recipient: 'dave@example.com' }), env);
    expect(outcomes.at(-1)).toBe('ignored');
    expect(await s.status('dave@example.com')).toEqual({ status: 'confirmed', hard_failures: 0 });
  });

  it('an ARF complaint sent to the bare mailbox unsubscribes the subscriber of its Original-Mail-From tag', async () => {
    await deliver(fixtureReport('arf-abuse.eml', { envelope: s.envelope['carol@example.com']!, recipient: 'carol@example.com' }), BOUNCE);
    expect(outcomes.at(-1)).toBe('unsubscribed');
    expect((await s.status('carol@example.com')).status).toBe('unsubscribed');
    expect((await s.events()).at(-1)).toEqual({ kind: 'complaint', outcome: 'unsubscribed', channel: 'smtp', subscriber: 'carol@example.com' });
  });

  it('refuses a forged tag at RCPT, and a forged tag inside a report changes nothing', async () => {
    const real = s.envelope['dave@example.com']!;
    // Dave's digest id with a tag that is not ours (one hex digit changed).
    const forged = real.replace(/-([0-9a-f])/, (_m, c: string) => `-${c === '0' ? '1' : '0'}`);
    const report = fixtureReport('postfix-hard-5.1.1.eml', { envelope: forged, recipient: 'dave@example.com' });
    await expect(deliver(report, forged)).rejects.toMatchObject({ responseCode: 550 });
    // Another digest id with dave's tag: refused too.
    const otherId = real.replace(/\+(\d+)-/, (_m, id: string) => `+${Number(id) + 100}-`);
    await expect(deliver(report, otherId)).rejects.toMatchObject({ responseCode: 550 });
    // Not our mailbox at all.
    await expect(deliver(report, 'postmaster@bounces.example.org')).rejects.toMatchObject({ responseCode: 550 });
    // A complaint to the bare mailbox quoting a forged tag (and dave's address in the body): accepted, ignored.
    const before = outcomes.length;
    await deliver(fixtureReport('arf-abuse.eml', { envelope: forged, recipient: 'dave@example.com' }), BOUNCE);
    expect(outcomes.slice(before)).toEqual(['no-tag']);
    expect(await s.status('dave@example.com')).toEqual({ status: 'confirmed', hard_failures: 0 });
    expect(await s.events()).toHaveLength(3);
  });

  it('shows in /metrics and digest status', async () => {
    const metrics = await s.e.metrics();
    expect(metrics).toContain('digest_bounces_total{kind="hard"} 1');
    expect(metrics).toContain('digest_bounces_total{kind="soft"} 1');
    expect(metrics).toContain('digest_complaints_total 1');
    const out: string[] = [];
    const code = await s.e.status({ out: (l) => out.push(l), err: (l) => out.push(l), isTTY: false }, 10);
    expect(code).toBe(0);
    expect(out.join('\n')).toContain('bounces (30 days): hard 1, soft 1, policy blocks 0; complaints 1 (25.00% of 4 sent; keep under 0.3%)');
    expect(out.join('\n')).not.toContain('alarm:');
  });
});
