// Relay webhooks on the real HTTP server: Mailgun (HMAC signing key) and Amazon SES through SNS (RSA
// signature over the SNS string-to-sign, certificate fetched from an sns.<region>.amazonaws.com URL; the
// test serves a self-made certificate through the injected fetcher, so the host rule and the signature
// check are the real ones). Each with a valid and a tampered signature; events map through the VERP tag.
// The same story on both engines: on PostgreSQL the digests are sent by `digest run`'s tick there and the
// webhooks record into its rows (the store `digest serve` gives them with DATABASE_URL).
import { createHmac, createSign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createWebhookEvents } from '../../src/bounces/webhook-events.ts';
import { buildServer } from '../../src/web/server.ts';
import { startBounceSetupOn, type EngineBounceSetup } from '../helpers/bounce-setup.ts';
import { forEachEngine } from '../helpers/on-engines.ts';

const MAILGUN_KEY = 'key-mailgun-webhook-signing-0123456789';
const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:ses-bounces';
const SNS_DIR = join(import.meta.dirname, '..', 'fixtures', 'sns');
const CERT = readFileSync(join(SNS_DIR, 'test-signing-cert.pem'), 'utf8');
const KEY = readFileSync(join(SNS_DIR, 'test-signing-key.pem'), 'utf8');
const CERT_URL = 'https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-0000000000000000000000.pem';

forEachEngine('bounce webhooks', (engine) => {
  let s: EngineBounceSetup;
  let web: FastifyInstance;
  let base: string;
  const fetched: string[] = [];

  beforeAll(async () => {
    s = await startBounceSetupOn(engine, { MAILGUN_WEBHOOK_SIGNING_KEY: MAILGUN_KEY, SES_SNS_TOPIC_ARN: TOPIC });
    const fetchText = async (url: string) => {
      fetched.push(url);
      if (url === CERT_URL) return CERT;
      if (url.startsWith('https://sns.eu-west-1.amazonaws.com/?Action=ConfirmSubscription')) return '<ConfirmSubscriptionResponse/>';
      throw new Error(`no such URL in this test: ${url}`);
    };
    web = buildServer({ ...s.t.app, webhooks: createWebhookEvents({ ...s.t.app, store: s.e.bounceStore(), fetchText }) });
    await web.listen({ port: 0, host: '127.0.0.1' });
    const a = web.server.address();
    base = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
  }, 30_000);

  afterAll(async () => {
    await web?.close();
    await s?.e.close();
  });

  const now = () => Math.floor(s.t.clock.now().getTime() / 1000);

  function mailgun(eventData: Record<string, unknown>, opts: { key?: string; timestamp?: number } = {}) {
    const timestamp = String(opts.timestamp ?? now());
    const token = `tok${Math.random().toString(16).slice(2)}`;
    const signature = createHmac('sha256', opts.key ?? MAILGUN_KEY).update(timestamp + token).digest('hex');
    return { signature: { timestamp, token, signature }, 'event-data': eventData };
  }
  const post = (path: string, body: string, type = 'application/json') =>
    fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': type }, body });

  function sns(message: Record<string, unknown>, opts: { version?: '1' | '2'; topic?: string; type?: string; certUrl?: string } = {}) {
    const m: Record<string, string> = {
      Type: opts.type ?? 'Notification',
      MessageId: `msg-${Math.random().toString(16).slice(2)}`,
      TopicArn: opts.topic ?? TOPIC,
      Message: JSON.stringify(message),
      Timestamp: s.t.clock.now().toISOString(),
      SignatureVersion: opts.version ?? '1',
      SigningCertURL: opts.certUrl ?? CERT_URL,
    };
    if (m.Type === 'SubscriptionConfirmation') {
      m.Token = 'confirm-token';
      m.SubscribeURL = `https://sns.eu-west-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=${TOPIC}&Token=confirm-token`;
    }
    const fields = m.Type === 'Notification' ? ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'] : ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'];
    const toSign = fields.filter((f) => m[f] !== undefined).map((f) => `${f}\n${m[f]}\n`).join('');
    m.Signature = createSign(m.SignatureVersion === '1' ? 'RSA-SHA1' : 'RSA-SHA256').update(toSign).sign(KEY, 'base64');
    return m;
  }
  const sesBounce = (email: string, bounceType: 'Permanent' | 'Transient') => ({
    notificationType: 'Bounce',
    bounce: {
      bounceType,
      bounceSubType: bounceType === 'Permanent' ? 'General' : 'MailboxFull',
      bouncedRecipients: [{ emailAddress: email, action: 'failed', status: bounceType === 'Permanent' ? '5.1.1' : '4.2.2', diagnosticCode: 'smtp; 550 5.1.1 user unknown' }],
      timestamp: s.t.clock.now().toISOString(),
    },
    mail: { source: s.envelope[email], destination: [email], messageId: '0100019a-ses' },
  });

  it('Mailgun: a tampered signature, a stale one and a forged tag change nothing', async () => {
    const failed = { event: 'failed', severity: 'permanent', reason: 'bounce', recipient: 'alice@example.com', envelope: { sender: s.envelope['alice@example.com'] }, 'delivery-status': { code: 550, 'enhanced-code': '5.1.1', message: 'user unknown' } };
    const tampered = mailgun(failed);
    tampered.signature.signature = tampered.signature.signature.replace(/^./, (c) => (c === 'a' ? 'b' : 'a'));
    expect((await post('/webhooks/mailgun', JSON.stringify(tampered))).status).toBe(401);
    expect((await post('/webhooks/mailgun', JSON.stringify(mailgun(failed, { key: 'another-key-0123456789' })))).status).toBe(401);
    expect((await post('/webhooks/mailgun', JSON.stringify(mailgun(failed, { timestamp: now() - 3600 })))).status).toBe(401);
    const forged = mailgun({ ...failed, envelope: { sender: s.envelope['alice@example.com']!.replace(/-[0-9a-f]{4}/, '-0000') } });
    const res = await post('/webhooks/mailgun', JSON.stringify(forged));
    expect(await res.json()).toEqual({ ok: true, outcome: 'no-tag' });
    expect((await s.status('alice@example.com')).status).toBe('confirmed');
    expect(await s.events()).toEqual([]);
  });

  it('Mailgun: a signed permanent failure suppresses; a complaint unsubscribes, counted once when retried', async () => {
    const failed = { event: 'failed', severity: 'permanent', reason: 'bounce', recipient: 'alice@example.com', envelope: { sender: s.envelope['alice@example.com'] }, 'delivery-status': { code: 550, 'enhanced-code': '5.1.1', message: 'user unknown' } };
    const res = await post('/webhooks/mailgun', JSON.stringify(mailgun(failed)));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, outcome: 'suppressed' });
    expect((await s.status('alice@example.com')).status).toBe('suppressed');

    const complained = JSON.stringify(mailgun({ event: 'complained', recipient: 'bob@example.com', envelope: { sender: s.envelope['bob@example.com'] } }));
    expect(await (await post('/webhooks/mailgun', complained)).json()).toEqual({ ok: true, outcome: 'unsubscribed' });
    expect(await (await post('/webhooks/mailgun', complained)).json()).toEqual({ ok: true, outcome: 'duplicate' });
    expect((await s.status('bob@example.com')).status).toBe('unsubscribed');
    expect((await s.events()).map((e) => [e.subscriber, e.kind, e.channel])).toEqual([
      ['alice@example.com', 'hard', 'mailgun'],
      ['bob@example.com', 'complaint', 'mailgun'],
    ]);
  });

  it('Mailgun: a signature is good once; replayed with other event data it is refused, and forgotten after it expires', async () => {
    const delivered = { event: 'delivered', recipient: 'carol@example.com', envelope: { sender: s.envelope['carol@example.com'] } };
    const captured = mailgun(delivered);
    expect(await (await post('/webhooks/mailgun', JSON.stringify(captured))).json()).toEqual({ ok: true, outcome: 'ignored' });
    // The same signature on a permanent failure for carol (the attacker knows her tag from a digest she forwarded).
    const replay = { ...captured, 'event-data': { event: 'failed', severity: 'permanent', reason: 'bounce', recipient: 'carol@example.com', envelope: { sender: s.envelope['carol@example.com'] }, 'delivery-status': { code: 550, 'enhanced-code': '5.1.1', message: 'user unknown' } } };
    const res = await post('/webhooks/mailgun', JSON.stringify(replay));
    expect(res.status).toBe(401);
    expect(JSON.stringify(await res.json())).toContain('signature.token: already used');
    expect((await s.status('carol@example.com')).status).toBe('confirmed');
    // The relay retrying the very same post is not an attack: answered 200, nothing new happens.
    expect(await (await post('/webhooks/mailgun', JSON.stringify(captured))).json()).toEqual({ ok: true, outcome: 'duplicate' });
    // Tokens are kept only while their timestamp could pass the 15-minute check, then pruned.
    const count = async () => Number((await s.e.sql.get<{ n: number | string }>('SELECT count(*) AS n FROM mailgun_tokens'))!.n);
    expect(await count()).toBeGreaterThan(0);
    s.t.clock.advance(31 * 60 * 1000);
    expect(await (await post('/webhooks/mailgun', JSON.stringify(mailgun(delivered)))).json()).toEqual({ ok: true, outcome: 'ignored' });
    expect(await count()).toBe(1);
    // The captured one, past its time, is refused by the freshness check.
    expect((await post('/webhooks/mailgun', JSON.stringify(replay))).status).toBe(401);
    expect((await s.status('carol@example.com')).status).toBe('confirmed');
  });

  it('policy blocks through Mailgun and SES leave the reader subscribed; a full mailbox is soft', async () => {
    const blocked = {
      event: 'failed', severity: 'permanent', reason: 'bounce', recipient: 'carol@example.com', envelope: { sender: s.envelope['carol@example.com'] },
      'delivery-status': { code: 550, 'enhanced-code': '5.7.1', message: '5.7.1 [192.0.2.10 12] Gmail has detected that this message is likely unsolicited mail. To reduce the amount of spam sent to Gmail, this message has been blocked.' },
    };
    expect(await (await post('/webhooks/mailgun', JSON.stringify(mailgun(blocked)))).json()).toEqual({ ok: true, outcome: 'alerted' });
    const rejected = {
      notificationType: 'Bounce',
      bounce: { bounceType: 'Permanent', bounceSubType: 'ContentRejected', bouncedRecipients: [{ emailAddress: 'dave@example.com', action: 'failed', status: '5.7.1', diagnosticCode: 'smtp; 554 5.7.1 Message rejected as spam by Content Filtering.' }] },
      mail: { source: s.envelope['dave@example.com'], destination: ['dave@example.com'] },
    };
    expect(await (await post('/webhooks/ses', JSON.stringify(sns(rejected, { version: '2' })), 'text/plain')).json()).toEqual({ ok: true, outcome: 'alerted' });
    expect((await s.status('carol@example.com')).status).toBe('confirmed');
    expect((await s.status('dave@example.com')).status).toBe('confirmed');
    // Gmail answers a full mailbox with a permanent 552 5.2.2: Mailgun reports it permanent, it is still soft.
    const full = { ...blocked, 'delivery-status': { code: 552, 'enhanced-code': '5.2.2', message: 'The email account that you tried to reach is over quota.' } };
    expect(await (await post('/webhooks/mailgun', JSON.stringify(mailgun(full)))).json()).toEqual({ ok: true, outcome: 'counted' });
    expect((await s.status('carol@example.com')).status).toBe('confirmed');
    expect((await s.events()).filter((e) => e.subscriber === 'carol@example.com' || e.subscriber === 'dave@example.com').map((e) => [e.subscriber, e.kind, e.outcome])).toEqual([
      ['carol@example.com', 'policy', 'alerted'],
      ['dave@example.com', 'policy', 'alerted'],
      ['carol@example.com', 'soft', 'counted'],
    ]);
  });

  it('SES via SNS: a tampered message, another topic and a certificate from another host are refused', async () => {
    const signed = sns(sesBounce('carol@example.com', 'Permanent'));
    const tampered = { ...signed, Message: signed.Message!.replace('Permanent', 'Transient') };
    expect((await post('/webhooks/ses', JSON.stringify(tampered), 'text/plain; charset=UTF-8')).status).toBe(401);
    expect((await post('/webhooks/ses', JSON.stringify(sns(sesBounce('carol@example.com', 'Permanent'), { topic: 'arn:aws:sns:eu-west-1:999999999999:other' })), 'text/plain')).status).toBe(401);
    const before = fetched.length;
    const evilCert = sns(sesBounce('carol@example.com', 'Permanent'), { certUrl: 'https://sns.eu-west-1.amazonaws.com.evil.example/cert.pem' });
    expect((await post('/webhooks/ses', JSON.stringify(evilCert), 'text/plain')).status).toBe(401);
    expect(fetched.slice(before)).toEqual([]); // never fetched from a host that is not SNS
    expect((await s.status('carol@example.com')).status).toBe('confirmed');
  });

  it('SES via SNS: signed notifications (SignatureVersion 1 and 2) suppress and unsubscribe; subscription confirmed', async () => {
    const sub = await post('/webhooks/ses', JSON.stringify(sns({}, { type: 'SubscriptionConfirmation', version: '2' })), 'text/plain');
    expect(await sub.json()).toEqual({ ok: true, outcome: 'subscribed' });
    expect(fetched.some((u) => u.includes('Action=ConfirmSubscription'))).toBe(true);

    const bounce = await post('/webhooks/ses', JSON.stringify(sns(sesBounce('carol@example.com', 'Permanent'), { version: '1' })), 'text/plain; charset=UTF-8');
    expect(await bounce.json()).toEqual({ ok: true, outcome: 'suppressed' });
    expect((await s.status('carol@example.com')).status).toBe('suppressed');

    const complaint = { notificationType: 'Complaint', complaint: { complaintFeedbackType: 'abuse', complainedRecipients: [{ emailAddress: 'dave@example.com' }] }, mail: { source: s.envelope['dave@example.com'] } };
    const res = await post('/webhooks/ses', JSON.stringify(sns(complaint, { version: '2' })), 'text/plain');
    expect(await res.json()).toEqual({ ok: true, outcome: 'unsubscribed' });
    expect((await s.status('dave@example.com')).status).toBe('unsubscribed');
  });

  it("a late webhook for a deleted digest does not reach the reader who got its id", async () => {
    const { e } = s;
    const dave = Number((await e.sql.get<{ id: number | string }>("SELECT id FROM subscribers WHERE email = 'dave@example.com'"))!.id);
    expect(await (e.pg?.roster ?? e.t.app.roster).remove(dave)).toBe(true);
    await e.addReaders([{ email: 'erin@example.com', topics: ['mixture of experts'] }]);
    expect((await e.run()).send?.sent).toBe(1);
    const erinDigest = Number((await e.sql.get<{ id: number | string }>("SELECT d.id FROM digests d JOIN subscribers s ON s.id = d.subscriber_id WHERE s.email = 'erin@example.com'"))!.id);
    // SQLite gave erin the deleted row's id (the tag's nonce tells them apart); PostgreSQL's identity never reuses one.
    expect(erinDigest === s.digestId['dave@example.com']).toBe(engine === 'sqlite');
    const late = { event: 'failed', severity: 'permanent', reason: 'bounce', recipient: 'dave@example.com', envelope: { sender: s.envelope['dave@example.com'] }, 'delivery-status': { code: 550, 'enhanced-code': '5.1.1', message: 'user unknown' } };
    expect(await (await post('/webhooks/mailgun', JSON.stringify(mailgun(late)))).json()).toEqual({ ok: true, outcome: 'no-tag' });
    expect(await (await post('/webhooks/ses', JSON.stringify(sns(sesBounce('dave@example.com', 'Permanent'), { version: '2' })), 'text/plain')).json()).toEqual({ ok: true, outcome: 'no-tag' });
    expect((await s.status('erin@example.com')).status).toBe('confirmed');
  });
});
