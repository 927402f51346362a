// The ceiling: the service's own sending path (src/mail/smtp-pool.ts, with the URL, connections,
// per-connection message cap and requeue bound src/mail/smtp-mailer.ts gives it) sending ONE pre-built raw
// message over and over to the same sink, with as many sends in flight as the sender keeps. Nothing is
// rendered or built per message: this is as fast as this process can push digests of that size through
// SMTP the way the service does. (Before `sendpath` it used nodemailer's transport pool, which the service
// no longer uses: a ceiling on another path would compare two different senders.)
import { performance } from 'node:perf_hooks';
import type { RenderedEmail } from '../src/render/render.ts';
import { createMessageBuilder } from '../src/mail/raw-message.ts';
import { SmtpPool } from '../src/mail/smtp-pool.ts';

export interface CeilingResult {
  messages: number;
  seconds: number;
  perSecond: number;
  messageBytes: number;
}

export interface PrebuiltInput {
  from: string;
  to: string;
  mail: RenderedEmail;
  unsubscribeUrl: string;
}

/** Builds the raw MIME once, with the builder the SMTP mailer uses (src/mail/raw-message.ts). */
export function prebuildMessage(input: PrebuiltInput): Buffer {
  const builder = createMessageBuilder({ from: input.from });
  const mail = { to: input.to, subject: input.mail.subject, html: input.mail.html, text: input.mail.text, encoded: input.mail.encoded };
  return builder.build({ ...mail, listUnsubscribe: { url: input.unsubscribeUrl } }, 'ceiling@bench.example', new Date()).raw;
}

export async function measureCeiling(opts: {
  url: string;
  poolSize: number;
  raw: Buffer;
  from: string;
  to: string;
  messages: number;
}): Promise<CeilingResult> {
  // The mailer's pool, as createSmtpMailer configures it (no rate limit, as the bench's service runs).
  const pool = new SmtpPool({ url: opts.url, poolSize: opts.poolSize, timeoutMs: 30_000, maxMessages: 1000, maxRequeues: 2 });
  const envelope = { from: addressOf(opts.from), to: [opts.to] };
  let next = 0;
  const worker = async () => {
    while (next < opts.messages) {
      next++;
      await pool.send(envelope, opts.raw);
    }
  };
  // Warm the pool's connections before timing.
  await Promise.all(Array.from({ length: opts.poolSize }, () => pool.send(envelope, opts.raw)));
  const started = performance.now();
  await Promise.all(Array.from({ length: opts.poolSize }, worker));
  const seconds = (performance.now() - started) / 1000;
  pool.close();
  return { messages: opts.messages, seconds, perSecond: opts.messages / seconds, messageBytes: opts.raw.length };
}

function addressOf(from: string): string {
  return /<([^>]+)>/.exec(from)?.[1] ?? from;
}
