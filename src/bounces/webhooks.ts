// Relays' event webhooks, each verified before anything is read from it, then mapped to a digest only
// through the VERP tag of the envelope sender the relay reports (never through the recipient address):
//   Mailgun  (POST /webhooks/mailgun): HMAC-SHA256 of timestamp + token with the webhook signing key,
//            compared in constant time; a timestamp more than 15 minutes away from now is refused, and a
//            token is good once (mailgun-tokens.ts).
//   Amazon SES through SNS (POST /webhooks/ses): the SNS message signature (SignatureVersion 1: SHA1,
//            2: SHA256, RSA) checked against the certificate at SigningCertURL, fetched only from an
//            https://sns.<region>.amazonaws.com host; the TopicArn must be SES_SNS_TOPIC_ARN (anyone can
//            make a topic of their own and have AWS sign its messages). A SubscriptionConfirmation is
//            confirmed by fetching its SubscribeURL (same host rule).
import { createHmac, timingSafeEqual, verify as verifySignature, X509Certificate } from 'node:crypto';
import { AppError } from '../errors.ts';
import { classifyFailure } from './classify.ts';
import type { ReportKind } from './reports.ts';

/** What a verified webhook says: a report for an envelope sender, or nothing we act on. */
export interface WebhookEvent {
  kind: ReportKind;
  envelopeSender: string;
  status: string | null;
  detail: string;
}

const refused = (message: string) => new AppError('WEBHOOK_REFUSED', message);
const bad = (message: string) => new AppError('WEBHOOK_INVALID', message);

function asObject(v: unknown, what: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw bad(`${what}: must be an object`);
  return v as Record<string, unknown>;
}
const str = (v: unknown) => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');
const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim().slice(0, 500);

export const MAILGUN_MAX_SKEW_MS = 15 * 60 * 1000;

/** A verified Mailgun post: its token (good once), until when it could pass the freshness check, and the event. */
export interface MailgunPost {
  token: string;
  expiresAt: Date;
  eventData: unknown;
  /** null for events we do not act on. */
  event: WebhookEvent | null;
}

/** Mailgun's webhook payload (JSON): verified, then read. */
export function readMailgun(body: unknown, signingKey: string, now: Date): MailgunPost {
  const root = asObject(body, 'body');
  const sig = asObject(root.signature, 'signature');
  const timestamp = str(sig.timestamp);
  const token = str(sig.token);
  const given = str(sig.signature);
  const expected = createHmac('sha256', signingKey).update(timestamp + token).digest();
  const got = /^[0-9a-f]{64}$/i.test(given) ? Buffer.from(given, 'hex') : Buffer.alloc(0);
  if (got.length !== expected.length || !timingSafeEqual(got, expected)) throw refused('signature: does not match');
  if (!/^\d{1,12}$/.test(timestamp) || Math.abs(Number(timestamp) * 1000 - now.getTime()) > MAILGUN_MAX_SKEW_MS) {
    throw refused('signature.timestamp: more than 15 minutes away from now');
  }
  if (token.length === 0 || token.length > 256) throw refused('signature.token: missing or longer than 256 characters');
  const expiresAt = new Date(Number(timestamp) * 1000 + MAILGUN_MAX_SKEW_MS);
  return { token, expiresAt, eventData: root['event-data'], event: mailgunEvent(root['event-data']) };
}

function mailgunEvent(eventData: unknown): WebhookEvent | null {
  const ev = asObject(eventData, 'event-data');
  const envelope = asObject(ev.envelope ?? {}, 'event-data.envelope');
  const sender = str(envelope.sender);
  const event = str(ev.event);
  if (event === 'complained') return { kind: 'complaint', envelopeSender: sender, status: null, detail: 'mailgun complained' };
  if (event !== 'failed') return null;
  const ds = asObject(ev['delivery-status'] ?? {}, 'event-data.delivery-status');
  const code = str(ds['enhanced-code']) || (str(ds.code) ? `${str(ds.code)[0]}.0.0` : '');
  const detail = oneLine(`${str(ds.code)} ${str(ds.message) || str(ds.description)}`);
  // severity temporary: Mailgun is still retrying, not a bounce yet. Permanent with reason "old": it gave up
  // after temporary failures (soft, or a policy block); "espblock": the receiver blocked us (policy); any
  // other permanent failure as its code and text say (classify.ts).
  if (str(ev.severity) !== 'permanent') return null;
  const status = /^[245]\.\d+\.\d+$/.test(code) ? code : null;
  const reason = str(ev.reason);
  const kind: ReportKind = reason === 'espblock' ? 'policy' : classifyFailure(status, detail, reason !== 'old');
  return { kind, envelopeSender: sender, status, detail };
}

export interface SnsDeps {
  topicArn: string;
  /** GET a URL and return its body (certificates, SubscribeURL). Default: fetch. Tests serve a local cert. */
  fetchText: (url: string) => Promise<string>;
}

/** The hosts SNS signs from and confirms subscriptions at. */
export function snsHostAllowed(url: string): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  return u.protocol === 'https:' && u.port === '' && /^sns\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$/.test(u.hostname);
}

const certCache = new Map<string, X509Certificate>();

async function certificate(url: string, deps: SnsDeps): Promise<X509Certificate> {
  if (!snsHostAllowed(url) || !new URL(url).pathname.endsWith('.pem')) throw refused('SigningCertURL: not an Amazon SNS certificate URL');
  let cert = certCache.get(url);
  if (!cert) {
    try {
      cert = new X509Certificate(await deps.fetchText(url));
    } catch (cause) {
      throw new AppError('WEBHOOK_CERT', `SigningCertURL: cannot read the certificate (${(cause as Error).message})`, { temporary: true, cause });
    }
    if (certCache.size > 20) certCache.clear();
    certCache.set(url, cert);
  }
  return cert;
}

/** The SNS string to sign: "Name\nvalue\n" for each signed field present, in this order. */
function snsStringToSign(m: Record<string, unknown>): string {
  const fields =
    m.Type === 'Notification'
      ? ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type']
      : ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'];
  return fields.filter((f) => typeof m[f] === 'string').map((f) => `${f}\n${m[f] as string}\n`).join('');
}

export type SnsResult = { type: 'event'; event: WebhookEvent | null } | { type: 'subscribed' } | { type: 'other' };

/** Verifies an SNS POST body (JSON text) and reads the SES notification in it. */
export async function readSesThroughSns(bodyText: string, deps: SnsDeps): Promise<SnsResult> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(bodyText);
  } catch {
    throw bad('body: not JSON');
  }
  const m = asObject(parsed, 'body');
  const version = str(m.SignatureVersion);
  if (version !== '1' && version !== '2') throw refused('SignatureVersion: must be 1 or 2');
  // Checked again after the signature; first so that a message for another topic costs no certificate fetch.
  if (str(m.TopicArn) !== deps.topicArn) throw refused('TopicArn: not the configured SES_SNS_TOPIC_ARN');
  const cert = await certificate(str(m.SigningCertURL), deps);
  const signature = Buffer.from(str(m.Signature), 'base64');
  const ok = verifySignature(version === '1' ? 'sha1' : 'sha256', Buffer.from(snsStringToSign(m), 'utf8'), cert.publicKey, signature);
  if (!ok) throw refused('Signature: does not verify');
  if (str(m.TopicArn) !== deps.topicArn) throw refused('TopicArn: not the configured SES_SNS_TOPIC_ARN');

  if (m.Type === 'SubscriptionConfirmation') {
    const url = str(m.SubscribeURL);
    if (!snsHostAllowed(url)) throw refused('SubscribeURL: not an Amazon SNS URL');
    await deps.fetchText(url);
    return { type: 'subscribed' };
  }
  if (m.Type !== 'Notification') return { type: 'other' };
  let n: Record<string, unknown>;
  try {
    n = asObject(JSON.parse(str(m.Message)), 'Message');
  } catch (e) {
    throw e instanceof AppError ? e : bad('Message: not JSON');
  }
  return { type: 'event', event: sesEvent(n) };
}

/** An SES notification (notificationType) or event (eventType): Bounce or Complaint. */
function sesEvent(n: Record<string, unknown>): WebhookEvent | null {
  const type = str(n.notificationType) || str(n.eventType);
  const mail = asObject(n.mail ?? {}, 'Message.mail');
  const sender = str(mail.source);
  if (type === 'Complaint') {
    const c = asObject(n.complaint ?? {}, 'Message.complaint');
    return { kind: 'complaint', envelopeSender: sender, status: null, detail: oneLine(`ses complaint ${str(c.complaintFeedbackType) || 'abuse'}`) };
  }
  if (type !== 'Bounce') return null;
  const b = asObject(n.bounce ?? {}, 'Message.bounce');
  const first = Array.isArray(b.bouncedRecipients) ? asObject(b.bouncedRecipients[0] ?? {}, 'bouncedRecipients[0]') : {};
  const status = /^[245]\.\d+\.\d+$/.test(str(first.status)) ? str(first.status) : null;
  const detail = oneLine(`${str(b.bounceType)}/${str(b.bounceSubType)} ${str(first.diagnosticCode)}`);
  // Permanent or Transient (SES gave up), then what the code and text say (ContentRejected: policy).
  return { kind: classifyFailure(status, detail, str(b.bounceType) === 'Permanent'), envelopeSender: sender, status, detail };
}
