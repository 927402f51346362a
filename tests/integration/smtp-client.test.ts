// Our SMTP client (src/mail/smtp-connection.ts, smtp-url.ts) against real SMTP servers (smtp-server, and a
// raw socket where smtp-server cannot misbehave enough): AUTH PLAIN and LOGIN, STARTTLS required or
// ignored, a relay without PIPELINING, HELO when EHLO is refused, the relay's 4xx / 5xx at each stage and
// what the sender makes of them, a relay that never greets, a drop in the middle of DATA, SMTP_URL options.
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SMTPServer, type SMTPServerOptions, type SMTPServerSession } from 'smtp-server';
import { loadConfig } from '../../src/config.ts';
import { silentLogger } from '../../src/log.ts';
import { createSmtpMailer } from '../../src/mail/smtp-mailer.ts';
import { parseSmtpUrl } from '../../src/mail/smtp-url.ts';
import type { MailError } from '../../src/mail/errors.ts';
import type { Mailer, OutgoingMail } from '../../src/mail/types.ts';
import { appErrorFrom } from '../helpers/app-error.ts';
import { failureOf } from '../helpers/mailer-on-sink.ts';
import { drop, perAddress, SmtpSink } from '../helpers/smtp-sink.ts';

const open: Array<{ close(): Promise<void> | void }> = [];
afterEach(async () => {
  for (const c of open.splice(0).reverse()) await c.close();
});

const mail = (to: string, i = 0): OutgoingMail => ({ to, subject: 'Your papers', html: `<p>paper ${i}</p>`, text: `paper ${i}` });

interface Received {
  to: string[];
  secure: boolean;
  user: unknown;
  raw: Buffer;
}

async function relay(options: SMTPServerOptions = {}) {
  const received: Received[] = [];
  const server = new SMTPServer({
    logger: false,
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    onData: (stream, session: SMTPServerSession, cb) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        received.push({ to: session.envelope.rcptTo.map((r) => r.address), secure: session.secure, user: session.user, raw: Buffer.concat(chunks) });
        cb(null, 'Ok: queued');
      });
    },
    ...options,
  });
  server.on('error', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.server.address() as { port: number }).port;
  const handle = { received, port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
  open.push(handle);
  return handle;
}

/** A relay on a raw socket: `answer(line)` returns the reply to each command line (or undefined: silence). */
async function rawRelay(greeting: string | undefined, answer: (line: string) => string | undefined) {
  const lines: string[] = [];
  const server: Server = createServer((socket) => {
    let text = '';
    let inData = false;
    if (greeting) socket.write(`${greeting}\r\n`);
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      let at: number;
      while ((at = text.indexOf('\r\n')) !== -1) {
        const line = text.slice(0, at);
        text = text.slice(at + 2);
        if (inData) {
          if (line === '.') {
            inData = false;
            socket.write('250 kept\r\n');
          }
          continue;
        }
        lines.push(line);
        const reply = answer(line);
        if (reply) socket.write(`${reply}\r\n`);
        if (reply?.startsWith('354')) inData = true;
      }
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  open.push({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
  return { lines, port: (server.address() as { port: number }).port };
}

function mailerFor(url: string, timeoutMs = 5_000): Mailer {
  const m = createSmtpMailer({ url, from: 'Digest <d@papers.example.org>', poolSize: 1, ratePerSecond: 0, timeoutMs, logger: silentLogger });
  open.push(m);
  return m;
}

const login = (methods: string[]): SMTPServerOptions => ({
  disabledCommands: [],
  authOptional: false,
  authMethods: methods,
  onAuth: (auth, _s, cb) =>
    auth.username === 'digest' && auth.password === 'pässword:1'
      ? cb(null, { user: `${auth.method}:digest` })
      : cb(Object.assign(new Error('Invalid username or password'), { responseCode: 535 })),
});

describe('SMTP client: logging in', () => {
  for (const method of ['PLAIN', 'LOGIN']) {
    it(`AUTH ${method} over STARTTLS, with a password that needs URL-encoding; a wrong one is refused with the relay's 535`, async () => {
      const r = await relay(login([method]));
      const url = (pass: string) => `smtp://digest:${encodeURIComponent(pass)}@127.0.0.1:${r.port}?tls.rejectUnauthorized=false`;
      await mailerFor(url('pässword:1')).send(mail('ada@example.com'));
      expect(r.received).toEqual([expect.objectContaining({ user: `${method}:digest`, secure: true, to: ['ada@example.com'] })]);
      const wrong = await failureOf(mailerFor(url('nope')), mail('bob@example.com'));
      expect(wrong).toMatchObject({ kind: 'connection', responseCode: 535, temporary: true });
      expect(r.received).toHaveLength(1);
    });
  }
});

describe('SMTP client: TLS', () => {
  it('requireTLS refuses a relay without STARTTLS, sending nothing; ignoreTLS stays in clear on purpose', async () => {
    const r = await relay({ hideSTARTTLS: true });
    const refused = await failureOf(mailerFor(`smtp://127.0.0.1:${r.port}?requireTLS=true`), mail('ada@example.com'));
    expect(refused.kind).toBe('connection');
    expect(refused.response).toMatch(/STARTTLS/);
    expect(r.received).toHaveLength(0);

    const offered = await relay({ disabledCommands: ['AUTH'] });
    await mailerFor(`smtp://127.0.0.1:${offered.port}?ignoreTLS=true`).send(mail('ada@example.com'));
    expect(offered.received[0]!.secure).toBe(false);
  });
});

describe('SMTP client: the conversation', () => {
  it('a relay without PIPELINING gets one command at a time; several recipients, one refused: the others get it', async () => {
    const r = await relay({
      hidePIPELINING: true,
      onRcptTo: (a, _s, cb) => (a.address.startsWith('gone') ? cb(Object.assign(new Error('no such user'), { responseCode: 550 })) : cb()),
    });
    const m = mailerFor(`smtp://127.0.0.1:${r.port}`);
    await m.send(mail('ada@example.com, gone@example.com, grace@example.org'));
    expect(r.received.map((x) => x.to)).toEqual([['ada@example.com', 'grace@example.org']]);
    const all = await failureOf(m, mail('gone@example.com', 1));
    expect(all).toMatchObject({ kind: 'permanent', responseCode: 550 });
    await m.send(mail('ada@example.com', 2)); // the session was reset and goes on
    expect(r.received).toHaveLength(2);
  });

  it('HELO when the relay refuses EHLO; plain MAIL / RCPT / DATA then', async () => {
    const raw = await rawRelay('220 old relay', (line) => {
      if (line.startsWith('EHLO')) return '502 5.5.1 not implemented';
      if (line.startsWith('DATA')) return '354 go ahead';
      if (line === 'QUIT') return '221 bye';
      return '250 ok';
    });
    await mailerFor(`smtp://127.0.0.1:${raw.port}`).send(mail('ada@example.com'));
    expect(raw.lines.map((l) => l.split(/[ :]/)[0])).toEqual(['EHLO', 'HELO', 'MAIL', 'RCPT', 'DATA']);
  });

  it('the relay\'s answers: a refused sender is the relay\'s problem, 4xx / 5xx to the message are this message\'s', async () => {
    let mails = 0;
    const r = await relay({
      onMailFrom: (_a, _s, cb) => (++mails > 3 ? cb(Object.assign(new Error('sender blocked'), { responseCode: 553 })) : cb()),
      onRcptTo: (a, _s, cb) => (a.address === 'later@example.com' ? cb(Object.assign(new Error('try later'), { responseCode: 450 })) : cb()),
      onData: (stream, _s, cb) => {
        stream.resume();
        stream.on('end', () => cb(Object.assign(new Error('5.7.1 content refused'), { responseCode: 554 })));
      },
    });
    const m = mailerFor(`smtp://127.0.0.1:${r.port}`);
    expect(await failureOf(m, mail('later@example.com'))).toMatchObject({ kind: 'temporary', responseCode: 450 });
    expect(await failureOf(m, mail('ada@example.com'))).toMatchObject({ kind: 'permanent', responseCode: 554 });
    await failureOf(m, mail('ada@example.com'));
    expect(await failureOf(m, mail('ada@example.com'))).toMatchObject({ kind: 'connection', responseCode: 553 });
  });
});

/**
 * Two mailers send to the same silent relay, SMTP_TIMEOUT_MS 1500 first, then 300: the order they give up
 * in. A hang never settles (the test times out); a timer other than SMTP_TIMEOUT_MS fails the 1500 one
 * first; no wall-clock bound, so a loaded machine does not change the verdict.
 */
async function giveUpOrder(port: number): Promise<{ order: number[]; failures: MailError[] }> {
  const order: number[] = [];
  const giveUp = (timeoutMs: number) =>
    failureOf(mailerFor(`smtp://127.0.0.1:${port}`, timeoutMs), mail('ada@example.com')).then((e) => (order.push(timeoutMs), e));
  const failures = await Promise.all([giveUp(1_500), giveUp(300)]);
  return { order, failures };
}

describe('SMTP client: a relay that fails', () => {
  it('a relay that never greets: a connection failure after SMTP_TIMEOUT_MS, not a hang', async () => {
    const raw = await rawRelay(undefined, () => undefined);
    const { order, failures } = await giveUpOrder(raw.port);
    expect(order).toEqual([300, 1_500]);
    for (const e of failures) expect(e).toMatchObject({ kind: 'connection', response: expect.stringMatching(/ETIMEDOUT/) });
  });

  it('a relay that stalls the STARTTLS handshake: a connection failure after SMTP_TIMEOUT_MS, nothing sent in clear', async () => {
    const raw = await rawRelay('220 tls relay', (line) => {
      if (line.startsWith('EHLO')) return '250-tls relay\r\n250 STARTTLS';
      if (line === 'STARTTLS') return '220 go ahead'; // and then nothing: no TLS handshake answer
      return '250 ok';
    });
    const { order, failures } = await giveUpOrder(raw.port);
    expect(order).toEqual([300, 1_500]);
    for (const e of failures) expect(e).toMatchObject({ kind: 'connection', response: expect.stringMatching(/ETIMEDOUT/) });
    expect(raw.lines.some((l) => l.startsWith('MAIL'))).toBe(false);
  });

  it('a connection dropped in the middle of DATA: a connection failure (retried later), nothing delivered', async () => {
    const sink = await SmtpSink.start({ script: perAddress({ 'ada@example.com': [drop('body')] }) });
    open.push(sink);
    const big = { ...mail('ada@example.com'), text: `${'x'.repeat(70)}\n`.repeat(60_000) };
    const e = await failureOf(mailerFor(sink.url), big);
    expect(e.kind).toBe('connection');
    expect(sink.byAddress('ada@example.com')).toHaveLength(0);
  });
});

describe('SMTP_URL', () => {
  it('reads host, port (465 for smtps, 587 otherwise), credentials and TLS options', () => {
    expect(parseSmtpUrl('smtps://u%40x:p%3Aw@relay.example.org')).toMatchObject({
      endpoint: { host: 'relay.example.org', port: 465, secure: true, tls: {} },
      auth: { user: 'u@x', pass: 'p:w' },
    });
    expect(parseSmtpUrl('smtp://relay.example.org?tls.rejectUnauthorized=false&name=digest.example.org')).toMatchObject({
      endpoint: { port: 587, secure: false, tls: { rejectUnauthorized: false }, name: 'digest.example.org' },
      auth: undefined,
    });
  });

  it('refuses an option it does not know, or a bad flag, naming it (a typo must not turn a check off)', () => {
    expect(appErrorFrom(() => parseSmtpUrl('smtp://relay.example.org?tls.rejectUnauthorised=false')).message).toMatch(/^SMTP_URL: unknown option "tls.rejectUnauthorised"/);
    expect(appErrorFrom(() => parseSmtpUrl('smtp://relay.example.org?requireTLS=yes')).message).toMatch(/^SMTP_URL: requireTLS must be true or false/);
    expect(appErrorFrom(() => parseSmtpUrl('http://relay.example.org')).code).toBe('SMTP_URL_INVALID');
    expect(appErrorFrom(() => parseSmtpUrl('smtp://digest:100%zz@relay.example.org')).message).toMatch(/^SMTP_URL: the password has a "%"/);
  });

  it('a bad option stops start-up, named, with the other configuration errors', () => {
    const e = appErrorFrom(() => loadConfig({ SMTP_URL: 'smtp://relay.example.org?tls.rejectUnauthorised=false', MAIL_FROM: 'D <d@example.org>' }));
    expect(e.message).toMatch(/SMTP_URL: unknown option "tls\.rejectUnauthorised"/);
  });
});
