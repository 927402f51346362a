// A bounce can only ever hit the digest it was for. SQLite gives a deleted ledger row's id to the next
// digest; the VERP tag also signs a random nonce of the row, so a late bounce for a digest deleted from the
// console (with its subscriber) never reaches the reader who got the reused id. Real SMTP end to end: the
// digests go out through the send path, the reports come back to the built-in receiver over SMTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BounceReceiver } from '../../src/bounces/receiver.ts';
import { Verp } from '../../src/bounces/verp.ts';
import { runPipeline } from '../../src/pipeline.ts';
import { Tokens } from '../../src/tokens.ts';
import { BOUNCE, fixtureReport, deliverReport, startBounceSetup, startReceiverFor, type BounceSetup } from '../helpers/bounce-setup.ts';
import { seedSubscribers } from '../helpers/seed.ts';
import { TEST_SECRET } from '../helpers/test-app.ts';

describe('a late bounce after a delete', () => {
  let s: BounceSetup;
  let receiver: BounceReceiver;
  let outcomes: string[];

  const deliver = (raw: string, to: string) => deliverReport(receiver.port, raw, to);
  const subscriberId = (email: string) => (s.t.app.db.prepare('SELECT id FROM subscribers WHERE email = ?').get(email) as { id: number }).id;

  beforeAll(async () => {
    s = await startBounceSetup();
    outcomes = [];
    receiver = await startReceiverFor(s, outcomes);
  }, 30_000);

  afterAll(async () => {
    await receiver?.close();
    await s?.t.close();
  });

  it('never touches the next reader who got the deleted digest id', async () => {
    const { app } = s.t;
    const daveEnvelope = s.envelope['dave@example.com']!;
    const daveDigest = s.digestId['dave@example.com']!;
    expect(daveDigest).toBe(Math.max(...Object.values(s.digestId))); // the newest row: SQLite reuses its id
    // The operator deletes dave (console), a new reader arrives and gets a digest.
    expect(await app.roster.remove(subscriberId('dave@example.com'))).toBe(true);
    seedSubscribers(app.db, [{ email: 'erin@example.com', topics: ['mixture of experts'] }]);
    const r = await runPipeline(app, { mode: 'now' });
    expect(r.send?.sent).toBe(1);
    const erinEnvelope = (await s.t.smtp.waitFor('erin@example.com')).mailFrom;
    const erinDigest = (app.db.prepare('SELECT d.id FROM digests d JOIN subscribers s ON s.id = d.subscriber_id WHERE s.email = ?').get('erin@example.com') as { id: number }).id;
    expect(erinDigest).toBe(daveDigest); // the id really was reused
    expect(erinEnvelope).not.toBe(daveEnvelope); // but not the tag

    // Dave's mailbox is gone: the late DSN, sent to his digest's envelope sender, is refused at RCPT.
    const late = fixtureReport('postfix-hard-5.1.1.eml', { envelope: daveEnvelope, recipient: 'dave@example.com' });
    await expect(deliver(late, daveEnvelope)).rejects.toMatchObject({ responseCode: 550 });
    // A feedback loop mailing the bare address, quoting dave's envelope: accepted, names no digest.
    await deliver(fixtureReport('arf-abuse.eml', { envelope: daveEnvelope, recipient: 'dave@example.com' }), BOUNCE);
    expect(outcomes).toEqual(['no-tag']);
    expect(s.status('erin@example.com').status).toBe('confirmed');
    expect(s.events()).toEqual([]);

    // Erin's own bounce still works.
    await deliver(fixtureReport('postfix-hard-5.1.1.eml', { envelope: erinEnvelope, recipient: 'erin@example.com' }), erinEnvelope);
    expect(outcomes.at(-1)).toBe('suppressed');
    expect(s.status('erin@example.com').status).toBe('suppressed');
  });

  it('id-only tags of mail sent before nonces keep working for their own row, and only there', async () => {
    const db = s.t.app.db;
    const legacy = new Verp(BOUNCE, new Tokens(TEST_SECRET)); // the tag as it was signed before: id only
    // Bob's digest as a row planned before migration 010 (no nonce): its old envelope sender still maps.
    db.prepare('UPDATE digests SET verp_nonce = NULL WHERE id = ?').run(s.digestId['bob@example.com']);
    const bobOld = legacy.envelopeFor(s.digestId['bob@example.com']!, null);
    await deliver(fixtureReport('postfix-hard-5.1.1.eml', { envelope: bobOld, recipient: 'bob@example.com' }), bobOld);
    expect(outcomes.at(-1)).toBe('suppressed');
    expect(s.status('bob@example.com').status).toBe('suppressed');
    // Alice's row has a nonce: an id-only tag for it is not one we ever sent, and is refused.
    const aliceIdOnly = legacy.envelopeFor(s.digestId['alice@example.com']!, null);
    await expect(deliver(fixtureReport('postfix-hard-5.1.1.eml', { envelope: aliceIdOnly, recipient: 'alice@example.com' }), aliceIdOnly)).rejects.toMatchObject({ responseCode: 550 });
    expect(s.status('alice@example.com').status).toBe('confirmed');
  });
});
