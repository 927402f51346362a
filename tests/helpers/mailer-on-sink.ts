// The SMTP mailer pointed at a scriptable real SMTP sink (smtp-sink.ts), and the MailError a failed send
// throws: what the mailer, pool and 7bit tests each set up.
import { expect } from 'vitest';
import { silentLogger } from '../../src/log.ts';
import { MailError } from '../../src/mail/errors.ts';
import { createSmtpMailer, type SmtpMailerOptions } from '../../src/mail/smtp-mailer.ts';
import type { Mailer, OutgoingMail } from '../../src/mail/types.ts';
import { SmtpSink } from './smtp-sink.ts';

/** Both are closed by the caller's afterEach, in reverse order. */
export async function mailerOnSink(
  open: Array<{ close(): Promise<void> | void }>,
  opts: Partial<SmtpMailerOptions> = {},
  sinkOpts: Parameters<typeof SmtpSink.start>[0] = {},
): Promise<{ sink: SmtpSink; mailer: Mailer }> {
  const sink = await SmtpSink.start(sinkOpts);
  open.push(sink);
  const mailer = createSmtpMailer({
    url: sink.url,
    from: 'Paper Digest <digest@papers.example.org>',
    poolSize: 2,
    ratePerSecond: 0,
    timeoutMs: 2_000,
    logger: silentLogger,
    ...opts,
  });
  open.push(mailer);
  return { sink, mailer };
}

/** The MailError sending `m` throws (the test fails when it is sent). */
export async function failureOf(mailer: Mailer, m: OutgoingMail): Promise<MailError> {
  try {
    await mailer.send(m);
  } catch (e) {
    expect(e).toBeInstanceOf(MailError);
    return e as MailError;
  }
  throw new Error('expected the send to fail');
}
