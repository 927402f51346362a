// The ceiling: the same kind of nodemailer pool (same URL, connections and per-connection message cap as
// src/mail/smtp-mailer.ts) sending ONE pre-built raw message over and over to the same sink, with as many
// sends in flight as the sender keeps. Nothing is rendered or built per message: this is as fast as this
// process can push digests through SMTP.
import { performance } from 'node:perf_hooks';
import { createTransport } from 'nodemailer';
import type { RenderedEmail } from '../src/render/render.ts';
import { createMessageBuilder } from '../src/mail/raw-message.ts';
import { installDataPhaseWatch } from '../src/mail/data-phase.ts';

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
  // The same SMTPConnection as the mailer's (its data stream wrapped: src/mail/data-phase.ts).
  installDataPhaseWatch();
  const transport = createTransport({ pool: true, url: opts.url, maxConnections: opts.poolSize, maxMessages: 1000, logger: false });
  const envelope = { from: addressOf(opts.from), to: [opts.to] };
  let next = 0;
  const worker = async () => {
    while (next < opts.messages) {
      next++;
      await transport.sendMail({ envelope, raw: opts.raw });
    }
  };
  // Warm the pool's connections before timing.
  await Promise.all(Array.from({ length: opts.poolSize }, () => transport.sendMail({ envelope, raw: opts.raw })));
  const started = performance.now();
  await Promise.all(Array.from({ length: opts.poolSize }, worker));
  const seconds = (performance.now() - started) / 1000;
  transport.close();
  return { messages: opts.messages, seconds, perSecond: opts.messages / seconds, messageBytes: opts.raw.length };
}

function addressOf(from: string): string {
  return /<([^>]+)>/.exec(from)?.[1] ?? from;
}
