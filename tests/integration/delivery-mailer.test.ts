// The SMTP mailer against a real SMTP server: headers a mailbox provider checks, a DKIM signature
// verified by an independent verifier (mailauth), and how each relay answer is classified.
import { generateKeyPairSync } from 'node:crypto';
import { dkimVerify } from 'mailauth';
import { afterEach, describe, expect, it } from 'vitest';
import type { SmtpMailerOptions } from '../../src/mail/smtp-mailer.ts';
import type { OutgoingMail } from '../../src/mail/types.ts';
import { accept, drop, perAddress, reject, SmtpSink } from '../helpers/smtp-sink.ts';
import { failureOf, mailerOnSink } from '../helpers/mailer-on-sink.ts';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const c of open.splice(0).reverse()) await c.close();
});

const setup = (opts: Partial<SmtpMailerOptions> = {}, sinkOpts: Parameters<typeof SmtpSink.start>[0] = {}) => mailerOnSink(open, opts, sinkOpts);

const mail = (to: string, extra: Partial<OutgoingMail> = {}): OutgoingMail => ({
  to,
  subject: 'Your papers for 2025-11-25',
  html: '<p>Three <b>new</b> papers</p>',
  text: 'Three new papers',
  messageId: 'digest-42.2025-11-25@papers.example.org',
  listUnsubscribe: { url: 'https://digest.example.org/unsubscribe/TOKEN', mailto: 'unsubscribe@papers.example.org' },
  ...extra,
});

describe('SMTP mailer', () => {
  it('sends HTML + text with a stable Message-ID, one List-Unsubscribe header and List-Unsubscribe-Post', async () => {
    const { sink, mailer } = await setup();
    const sent = await mailer.send(mail('ada@example.com'));
    expect(sent.messageId).toBe('digest-42.2025-11-25@papers.example.org');
    expect(sent.response).toMatch(/^250 /);

    expect(sink.messages).toHaveLength(1);
    const email = await sink.messages[0]!.parse();
    expect(email.from?.address).toBe('digest@papers.example.org');
    expect(email.messageId).toBe('<digest-42.2025-11-25@papers.example.org>');
    expect(email.html).toContain('<b>new</b>');
    expect(email.text?.trim()).toBe('Three new papers');
    const lu = email.headers.filter((h) => h.key === 'list-unsubscribe');
    expect(lu).toHaveLength(1);
    expect(lu[0]!.value).toBe(
      '<https://digest.example.org/unsubscribe/TOKEN>, <mailto:unsubscribe@papers.example.org?subject=unsubscribe>',
    );
    expect(email.headers.find((h) => h.key === 'list-unsubscribe-post')?.value).toBe('List-Unsubscribe=One-Click');
  });

  it('delivers lines that start with a dot, a lone dot line and bare line ends intact (SMTP dot-stuffing on the wire)', async () => {
    const { sink, mailer } = await setup();
    // Bytes our encoder never writes (it turns a leading dot into =2E), handed over as-is: the data stream
    // (src/mail/dot-stuffing.ts) must stuff them, or the lone "." would end the message early.
    const body = '.leading dot\r\n..two dots\r\n.\r\nafter the lone dot\nbare LF line\r\nend';
    await mailer.send(mail('dots@example.com', { encoded: { text: [Buffer.from(body)], html: [Buffer.from('<p>.x</p>\r\n.\r\n<p>y</p>')] } }));
    const email = await sink.messages[0]!.parse();
    // (the builder ends each part with a line break)
    expect(email.text).toBe('.leading dot\n..two dots\n.\nafter the lone dot\nbare LF line\nend\n');
    expect(email.html?.replace(/\n$/, '')).toBe('<p>.x</p>\n.\n<p>y</p>');
  });

  it('reuses message buffers without mixing messages: 40 digests of different sizes, sent 2 at a time, each arrives whole', async () => {
    const { sink, mailer } = await setup();
    // Encoded bodies (as digests send them), sizes up and down so buffers are taken, grown and given back.
    const body = (i: number) => `message ${i}: ${'abcdefghij'.repeat(20 + ((i * 37) % 90) * 40)}`.replace(/(.{70})/g, '$1=\r\n');
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        mailer.send(mail(`r${i}@example.com`, { messageId: `m${i}@papers.example.org`, encoded: { text: [Buffer.from(body(i))], html: [Buffer.from(`<p>${i}</p>`)] } })),
      ),
    );
    expect(sink.messages).toHaveLength(40);
    for (const m of sink.messages) {
      const i = Number(/^r(\d+)@/.exec(m.to[0]!)![1]);
      const email = await m.parse();
      expect(email.messageId).toBe(`<m${i}@papers.example.org>`);
      expect(email.text).toBe(`${body(i).replaceAll('=\r\n', '')}\n`);
      expect(email.html?.trim()).toBe(`<p>${i}</p>`);
    }
  });

  it('signs with DKIM (List-Unsubscribe and List-Unsubscribe-Post included), verified by mailauth', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const spki = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
    const { sink, mailer } = await setup({
      dkim: { domainName: 'papers.example.org', keySelector: 'digest2025', privateKey: pem },
    });
    await mailer.send(mail('ada@example.com'));
    const raw = sink.messages[0]!.raw;

    const dnsQueries: string[] = [];
    const resolver = async (name: string, type: string) => {
      dnsQueries.push(`${type} ${name}`);
      if (type === 'TXT' && name === 'digest2025._domainkey.papers.example.org') return [[`v=DKIM1; k=rsa; p=${spki}`]];
      throw Object.assign(new Error(`no ${type} record for ${name}`), { code: 'ENOTFOUND' });
    };
    const result = await dkimVerify(raw, { resolver });
    expect(dnsQueries).toContain('TXT digest2025._domainkey.papers.example.org');
    expect(result.results).toHaveLength(1);
    expect(result.results[0]!.signingDomain).toBe('papers.example.org');
    expect(result.results[0]!.status.result).toBe('pass');

    const signature = /^DKIM-Signature:([\s\S]*?)\r\n(?=\S)/m.exec(raw.toString('utf8'))?.[1] ?? '';
    const signedHeaders = /(?:^|;)h=([^;]+)/.exec(signature.replace(/\s+/g, ''))?.[1]?.toLowerCase().split(':') ?? [];
    expect(signedHeaders).toEqual(expect.arrayContaining(['from', 'subject', 'message-id', 'list-unsubscribe', 'list-unsubscribe-post']));

    // A tampered List-Unsubscribe-Post no longer verifies: it really is covered by the signature.
    const tampered = Buffer.from(raw.toString('utf8').replace('List-Unsubscribe=One-Click', 'List-Unsubscribe=Two-Clicks'));
    const bad = await dkimVerify(tampered, { resolver });
    expect(bad.results[0]!.status.result).toBe('fail');
  });

  it('classifies relay answers: 4xx temporary, 5xx permanent, 421 = connection, no answer after the message = ambiguous', async () => {
    const { mailer, sink } = await setup(
      // 1 s: long enough that a loaded machine answering DATA slowly does not time out before the message.
      { timeoutMs: 1_000 },
      {
        script: perAddress({
          'deferred@example.com': [reject(451, { text: '4.7.1 Greylisted, try later' })],
          'busy@example.com': [reject(421, { text: '4.3.2 Too busy' })],
          'gone@example.com': [reject(550, { text: '5.1.1 No such user' })],
          'toobig@example.com': [reject(552, { stage: 'data', text: '5.3.4 Message too big' })],
          'cut@example.com': [drop('data')],
          'slow@example.com': [accept(2_500)],
        }),
      },
    );
    const deferred = await failureOf(mailer, mail('deferred@example.com'));
    expect(deferred.kind).toBe('temporary');
    expect(deferred.responseCode).toBe(451);
    expect(deferred.response).toContain('Greylisted');

    // 421 is the relay closing the channel ("service not available"): retried, and counted toward "relay down".
    const busy = await failureOf(mailer, mail('busy@example.com'));
    expect(busy.kind).toBe('connection');
    expect(busy.temporary).toBe(true);
    expect(busy.responseCode).toBe(421);
    expect(busy.response).toContain('Too busy');

    const gone = await failureOf(mailer, mail('gone@example.com'));
    expect(gone.kind).toBe('permanent');
    expect(gone.responseCode).toBe(550);
    expect(gone.response).toContain('No such user');

    const tooBig = await failureOf(mailer, mail('toobig@example.com'));
    expect(tooBig.kind).toBe('permanent');
    expect(tooBig.responseCode).toBe(552);

    // No answer after the whole message was sent (cut, or slower than the timeout): the relay may have
    // queued it, so it is not a retry but an unknown outcome (relay-ambiguity.test.ts has the controls).
    expect((await failureOf(mailer, mail('cut@example.com'))).kind).toBe('ambiguous');
    const slow = await failureOf(mailer, mail('slow@example.com'));
    expect(slow.kind).toBe('ambiguous');
    expect(slow.response).toMatch(/ETIMEDOUT/);

    // The same mailer still delivers once the relay behaves.
    await mailer.send(mail('fine@example.com'));
    expect(sink.byAddress('fine@example.com')).toHaveLength(1);
  });

  it('reports a stopped relay as a connection failure and recovers when it is back', async () => {
    const { mailer, sink } = await setup();
    await sink.stop();
    const down = await failureOf(mailer, mail('ada@example.com'));
    expect(down.kind).toBe('connection');
    expect(down.response).toMatch(/ECONNREFUSED/);
    await sink.start();
    await mailer.send(mail('ada@example.com'));
    expect(sink.byAddress('ada@example.com')).toHaveLength(1);
  });

  it('answers 421 at the greeting as a relay (connection) problem', async () => {
    const { mailer } = await setup({}, { onConnect: () => ({ action: 'reject', code: 421, text: 'Service not available' }) });
    const err = await failureOf(mailer, mail('ada@example.com'));
    expect(err.kind).toBe('connection');
  });

  it('keeps to SMTP_RATE_PER_SECOND across the pool', async () => {
    const { mailer, sink } = await setup({ poolSize: 4, ratePerSecond: 4 });
    const started = Date.now();
    await Promise.all(Array.from({ length: 9 }, (_, i) => mailer.send(mail(`r${i}@example.com`, { messageId: `m${i}@x` }))));
    const elapsed = Date.now() - started;
    expect(sink.messages).toHaveLength(9);
    // 9 messages at 4 per second need at least two full windows after the first.
    expect(elapsed).toBeGreaterThanOrEqual(1_900);
  });
});
