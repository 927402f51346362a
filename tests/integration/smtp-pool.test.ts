// Our SMTP pool (src/mail/smtp-pool.ts over our client, smtp-connection.ts) against real
// SMTP servers (smtp-server): AUTH, STARTTLS and smtps, the pool's size, a refused recipient that leaves
// its connection usable, a message sent again over a fresh connection when a reused one was dropped
// before its body, and sends that share one envelope object. The relay's answers and their meaning
// (4xx, 5xx, 421, lost answers) are in delivery-mailer.test.ts and relay-ambiguity.test.ts.
import { afterEach, describe, expect, it } from 'vitest';
import { SMTPServer, type SMTPServerOptions, type SMTPServerSession } from 'smtp-server';
import { silentLogger } from '../../src/log.ts';
import { MailError } from '../../src/mail/errors.ts';
import { createSmtpMailer } from '../../src/mail/smtp-mailer.ts';
import { SmtpPool } from '../../src/mail/smtp-pool.ts';
import type { Mailer, OutgoingMail } from '../../src/mail/types.ts';
import { accept, drop, perAddress, reject, SmtpSink } from '../helpers/smtp-sink.ts';
import { failureOf } from '../helpers/mailer-on-sink.ts';

const open: Array<{ close(): Promise<void> | void }> = [];
afterEach(async () => {
  for (const c of open.splice(0).reverse()) await c.close();
});

const mail = (to: string, i = 0): OutgoingMail => ({
  to,
  subject: 'Your papers',
  html: `<p>paper ${i}</p>`,
  text: `paper ${i}`,
  messageId: `m${i}-${to}@papers.example.org`,
});

interface Received {
  to: string[];
  secure: boolean;
  user: unknown;
  raw: Buffer;
}

/** A real smtp-server that keeps what it receives, counts connections, and takes any other option. */
async function relay(options: SMTPServerOptions = {}) {
  const received: Received[] = [];
  const stats = { opened: 0, live: 0, maxLive: 0 };
  const server = new SMTPServer({
    logger: false,
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    ...options,
    onConnect: (_s, cb) => {
      stats.opened++;
      stats.maxLive = Math.max(stats.maxLive, ++stats.live);
      cb();
    },
    onClose: () => {
      stats.live--;
    },
    onData: (stream, session: SMTPServerSession, cb) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        received.push({ to: session.envelope.rcptTo.map((r) => r.address), secure: session.secure, user: session.user, raw: Buffer.concat(chunks) });
        cb(null, 'Ok: queued');
      });
    },
  });
  server.on('error', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.server.address() as { port: number }).port;
  const handle = { received, stats, port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
  open.push(handle);
  return handle;
}

const mailerFor = (url: string, poolSize = 2): Mailer => {
  const m = createSmtpMailer({ url, from: 'Digest <d@papers.example.org>', poolSize, ratePerSecond: 0, timeoutMs: 5_000, logger: silentLogger });
  open.push(m);
  return m;
};

describe('SMTP pool', () => {
  it('logs in with the user and password of SMTP_URL (over STARTTLS); a wrong password is a relay (connection) failure and sends nothing', async () => {
    const r = await relay({
      disabledCommands: [],
      authOptional: false,
      authMethods: ['PLAIN', 'LOGIN'],
      onAuth: (auth, _session, cb) => {
        if (auth.username === 'digest' && auth.password === 's3cret pass') return cb(null, { user: 'digest' });
        return cb(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
      },
    });
    await mailerFor(`smtp://digest:${encodeURIComponent('s3cret pass')}@127.0.0.1:${r.port}?tls.rejectUnauthorized=false`).send(mail('ada@example.com'));
    expect(r.received).toHaveLength(1);
    expect(r.received[0]!.user).toBe('digest');
    expect(r.received[0]!.secure).toBe(true);

    const wrong = await failureOf(mailerFor(`smtp://digest:nope@127.0.0.1:${r.port}?tls.rejectUnauthorized=false`), mail('bob@example.com'));
    expect(wrong.kind).toBe('connection');
    expect(wrong.temporary).toBe(true);
    expect(wrong.response).toMatch(/535|Invalid username/);
    expect(r.received).toHaveLength(1);
  });

  it('upgrades with STARTTLS when the relay offers it, and speaks TLS from the start with smtps://', async () => {
    const plain = await relay({ disabledCommands: ['AUTH'] });
    await mailerFor(`smtp://127.0.0.1:${plain.port}?tls.rejectUnauthorized=false`).send(mail('ada@example.com'));
    expect(plain.received[0]!.secure).toBe(true);
    // The certificate is checked by default (smtp-server's built-in one has expired): refused, never sent in the clear.
    const untrusted = await failureOf(mailerFor(`smtp://127.0.0.1:${plain.port}`), mail('bob@example.com'));
    expect(untrusted.kind).toBe('connection');
    expect(untrusted.response).toMatch(/certificate/i);
    expect(plain.received).toHaveLength(1);

    const tls = await relay({ secure: true, disabledCommands: ['AUTH'] });
    await mailerFor(`smtps://127.0.0.1:${tls.port}?tls.rejectUnauthorized=false`).send(mail('ada@example.com'));
    expect(tls.received[0]!.secure).toBe(true);
    expect((await (await import('postal-mime')).default.parse(tls.received[0]!.raw)).text?.trim()).toBe('paper 0');
  });

  it('keeps at most SMTP_POOL_SIZE connections, and a recipient refused with 451 (pipelined) leaves its connection in use', async () => {
    const r = await relay({
      onRcptTo: (address, _session, cb) => {
        if (address.address.startsWith('later')) return cb(Object.assign(new Error('4.7.1 Greylisted'), { responseCode: 451 }));
        cb();
      },
    });
    const mailer = mailerFor(`smtp://127.0.0.1:${r.port}`, 3);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 30 }, (_, i) => mailer.send(mail(`${i % 6 === 0 ? 'later' : 'r'}${i}@example.com`, i))),
    );
    const refused = outcomes.filter((o) => o.status === 'rejected').map((o) => (o as PromiseRejectedResult).reason as MailError);
    expect(refused).toHaveLength(5);
    expect(refused.every((e) => e.kind === 'temporary' && e.responseCode === 451)).toBe(true);
    expect(r.received).toHaveLength(25);
    expect(r.stats.maxLive).toBeLessThanOrEqual(3);
    // RSET after each refusal, not a new connection.
    expect(r.stats.opened).toBe(3);
  });

  it('a pooled connection dropped before the message body: sent again over a fresh connection, delivered once', async () => {
    const sink = await SmtpSink.start({ script: perAddress({ 'eve@example.com': [drop('rcpt'), accept()] }) });
    open.push(sink);
    const mailer = mailerFor(sink.url, 1);
    await mailer.send(mail('first@example.com')); // the connection is now a reused one
    await mailer.send(mail('eve@example.com', 1));
    expect(sink.byAddress('eve@example.com')).toHaveLength(1);
    expect(sink.attemptsFor('eve@example.com')).toBe(2);

    // Not on a fresh connection (the drop there is the relay's problem, reported: relay-ambiguity.test.ts),
    // and never once the body has started: a 5xx at the end of DATA is this message's, not retried.
    sink.script = perAddress({ 'big@example.com': [reject(552, { stage: 'data', text: '5.3.4 Message too big' }), accept()] });
    const tooBig = await failureOf(mailer, mail('big@example.com', 2));
    expect(tooBig.kind).toBe('permanent');
    expect(sink.attemptsFor('big@example.com')).toBe(1);
  });

  it('sends that share one envelope object over several connections each get their own replies', async () => {
    const sink = await SmtpSink.start();
    open.push(sink);
    const pool = new SmtpPool({ url: sink.url, poolSize: 4, timeoutMs: 5_000 });
    open.push(pool);
    const envelope = { from: 'd@papers.example.org', to: ['same@example.com'] };
    const raw = Buffer.from('Subject: x\r\n\r\nhello\r\n');
    const replies = await Promise.all(Array.from({ length: 20 }, () => pool.send(envelope, raw)));
    expect(replies.every((r) => r.startsWith('250'))).toBe(true);
    expect(sink.byAddress('same@example.com')).toHaveLength(20);
    expect(envelope).toEqual({ from: 'd@papers.example.org', to: ['same@example.com'] });
  });

  it('closing the pool fails the sends in flight: before the final "." a connection failure, after it ambiguous', async () => {
    const sink = await SmtpSink.start({ script: perAddress({ 'slow@example.com': [accept(3_000)], 'rcpt@example.com': [reject(451, { delayMs: 3_000 })] }) });
    open.push(sink);
    const mailer = createSmtpMailer({ url: sink.url, from: 'Digest <d@papers.example.org>', poolSize: 2, ratePerSecond: 0, timeoutMs: 10_000, logger: silentLogger });
    const afterDot = failureOf(mailer, mail('slow@example.com'));
    const atRcpt = failureOf(mailer, mail('rcpt@example.com', 1));
    await new Promise((r) => setTimeout(r, 400));
    await mailer.close();
    const [a, b] = await Promise.all([afterDot, atRcpt]);
    // No clock needed: a close that let the sends run on until the relay's answers (3 s) would see the first
    // accepted (failureOf throws) and the second refused with 451 (kind 'temporary').
    expect(a.kind).toBe('ambiguous');
    expect(b.kind).toBe('connection');
  });
});
