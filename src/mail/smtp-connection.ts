// One SMTP client session (RFC 5321), ours: connect (TCP, or TLS from the start for smtps), the greeting,
// EHLO (HELO when refused), STARTTLS with the certificate checked, AUTH PLAIN / LOGIN, then messages:
// MAIL FROM, RCPT TO and DATA pipelined when the relay offers PIPELINING (RFC 2920), the message written
// by data-phase.ts, RSET, QUIT. One command at a time per connection (the pool sees to that).
//
// Failures are Errors shaped as errors.ts reads them: `code` (ECONNECTION, ETIMEDOUT, ESOCKET, ETLS, EAUTH,
// EENVELOPE, EMESSAGE, EPROTOCOL), `command`, and the relay's reply as `response` / `responseCode`. A 421
// at any point is the relay closing the channel: the session ends and the error is ECONNECTION.
import { hostname } from 'node:os';
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { StringDecoder } from 'node:string_decoder';
import { connect as tlsConnect, type ConnectionOptions, type TLSSocket } from 'node:tls';
import { markProgress, newSendProgress, writeMessage, type SendProgress } from './data-phase.ts';

export interface SmtpEndpoint {
  host: string;
  port: number;
  /** TLS from the first byte (smtps). */
  secure: boolean;
  /** Never upgrade with STARTTLS, even when offered. */
  ignoreTLS: boolean;
  /** Fail unless the session is TLS (smtps or STARTTLS). */
  requireTLS: boolean;
  /** Extra TLS options (rejectUnauthorized, servername, minVersion…); certificates are checked by default. */
  tls: ConnectionOptions;
  /** The name we give in EHLO / HELO. */
  name?: string | undefined;
  /** Connect, greeting and socket inactivity timeout. */
  timeoutMs: number;
}

export interface Credentials {
  user: string;
  pass: string;
}

export interface SmtpFailure extends Error {
  code: string;
  command: string;
  response?: string;
  responseCode?: number;
  originalCode?: string;
}

/** An Error as nodemailer shaped them (the reply appended to the message), so errors.ts reads both alike. */
export function smtpError(message: string, code: string, command: string, response?: string, cause?: unknown): SmtpFailure {
  const err = new Error(response ? `${message}: ${response}` : message, cause === undefined ? undefined : { cause }) as SmtpFailure;
  err.code = code;
  err.command = command;
  const original = (cause as { code?: unknown } | undefined)?.code;
  if (typeof original === 'string' && original !== code) err.originalCode = original;
  if (response) {
    err.response = response;
    const n = Number(/^\d{3}/.exec(response)?.[0]);
    if (n) err.responseCode = n;
  }
  return err;
}

interface Waiter {
  resolve(reply: string): void;
  reject(err: Error): void;
}

/** Replies longer than this are not SMTP: the session is dropped. */
const MAX_REPLY = 64 * 1024;

function defaultName(): string {
  const h = hostname();
  if (!h || !h.includes('.')) return '[127.0.0.1]';
  return isIP(h) ? `[${h}]` : h;
}

/** A TLS or socket error code: ETLS for certificate and handshake problems, ESOCKET otherwise. */
function socketFailureCode(e: unknown): string {
  const code = String((e as { code?: unknown }).code ?? '');
  return /CERT|TLS|SSL|SELF_SIGNED|UNABLE_TO|HOSTNAME|ALTNAME/.test(code) ? 'ETLS' : 'ESOCKET';
}

/** Connects (TCP or smtps) within the timeout. */
function openSocket(ep: SmtpEndpoint): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const servername = isIP(ep.host) ? undefined : ep.host;
    const socket: Socket = ep.secure
      ? tlsConnect({ host: ep.host, port: ep.port, servername, ...ep.tls })
      : netConnect({ host: ep.host, port: ep.port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(smtpError('Connection timeout', 'ETIMEDOUT', 'CONN'));
    }, ep.timeoutMs);
    const onError = (e: Error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(smtpError(e.message, socketFailureCode(e), 'CONN', undefined, e));
    };
    socket.once('error', onError);
    socket.once(ep.secure ? 'secureConnect' : 'connect', () => {
      clearTimeout(timer);
      socket.off('error', onError);
      resolve(socket);
    });
  });
}

export class SmtpConnection {
  /** The session is TLS (smtps, or upgraded by STARTTLS). */
  secure: boolean;
  /** Keywords of the last EHLO answer (upper case), e.g. PIPELINING, STARTTLS, AUTH. */
  private extensions = new Set<string>();
  private authMethods = new Set<string>();
  private socket: Socket;
  private readonly decoder = new StringDecoder('utf8');
  private buffer = '';
  private replyLines: string[] = [];
  private readonly waiters: Waiter[] = [];
  private ended = false;
  /** The send in progress: how far it got, for the error that ends it. */
  private progress: SendProgress | undefined;

  private constructor(
    socket: Socket,
    private readonly ep: SmtpEndpoint,
    private readonly onEnd: () => void,
  ) {
    this.socket = socket;
    this.secure = ep.secure;
    this.attach(socket);
  }

  /** Connected, greeted, EHLO done, upgraded by STARTTLS when offered (or required). Not logged in. */
  static async open(ep: SmtpEndpoint, onEnd: () => void = () => undefined): Promise<SmtpConnection> {
    const conn = new SmtpConnection(await openSocket(ep), ep, onEnd);
    try {
      await conn.handshake();
    } catch (e) {
      conn.close();
      throw e;
    }
    return conn;
  }

  /** Can carry another message. */
  get usable(): boolean {
    return !this.ended;
  }

  /** The relay offers AUTH. */
  get offersAuth(): boolean {
    return this.authMethods.size > 0;
  }

  /** AUTH PLAIN when offered (or nothing is), else AUTH LOGIN. */
  async login(credentials: Credentials): Promise<void> {
    const method = this.authMethods.has('PLAIN') || !this.authMethods.has('LOGIN') ? 'PLAIN' : 'LOGIN';
    const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
    const refused = (reply: string) => smtpError('Invalid login', 'EAUTH', `AUTH ${method}`, reply);
    if (method === 'PLAIN') {
      const reply = await this.command(`AUTH PLAIN ${b64(`\0${credentials.user}\0${credentials.pass}`)}`, 'AUTH PLAIN');
      if (!reply.startsWith('235')) throw refused(reply);
      return;
    }
    let reply = await this.command('AUTH LOGIN', 'AUTH LOGIN');
    if (reply.startsWith('334')) reply = await this.command(b64(credentials.user), 'AUTH LOGIN');
    if (reply.startsWith('334')) reply = await this.command(b64(credentials.pass), 'AUTH LOGIN');
    if (!reply.startsWith('235')) throw refused(reply);
  }

  /** Sends one message; resolves with the relay's final reply. Errors carry how far the message got. */
  async send(envelope: { from: string; to: readonly string[] }, message: Buffer): Promise<string> {
    const progress = newSendProgress();
    this.progress = progress;
    try {
      return await this.transaction(envelope, message, progress);
    } catch (e) {
      throw markProgress(progress, e as Error);
    } finally {
      this.progress = undefined;
    }
  }

  /** RSET after a refused message; false when the session cannot be reused. */
  async reset(): Promise<boolean> {
    try {
      return (await this.command('RSET', 'RSET')).startsWith('250');
    } catch {
      return false;
    }
  }

  /** QUIT, then the socket is closed whatever the answer. */
  quit(): void {
    if (this.ended) return;
    this.command('QUIT', 'QUIT').then(
      () => this.close(),
      () => this.close(),
    );
    setTimeout(() => this.close(), this.ep.timeoutMs).unref();
  }

  /** Closes at once; a send in flight fails with `reason` (marked with how far it got). */
  close(reason?: Error): void {
    this.end(reason ?? smtpError('Connection closed', 'ECONNECTION', 'CONN'));
  }

  private async transaction(envelope: { from: string; to: readonly string[] }, message: Buffer, progress: SendProgress): Promise<string> {
    if (envelope.to.length === 0) throw smtpError('No recipients defined', 'EENVELOPE', 'API');
    const utf8 = this.extensions.has('SMTPUTF8') && /[^\x00-\x7f]/.test([envelope.from, ...envelope.to].join(''));
    const mailFrom = `MAIL FROM:<${envelope.from}>${utf8 ? ' SMTPUTF8' : ''}`;
    const lines = [mailFrom, ...envelope.to.map((to) => `RCPT TO:<${to}>`), 'DATA'];
    const commands = ['MAIL FROM', ...envelope.to.map(() => 'RCPT TO'), 'DATA'];
    let replies: string[];
    if (this.extensions.has('PIPELINING')) {
      replies = await this.pipeline(lines, commands);
    } else {
      replies = [];
      for (let i = 0; i < lines.length; i++) {
        const reply = await this.command(lines[i]!, commands[i]!);
        replies.push(reply);
        // No DATA after a refused sender, or when every recipient was refused.
        if (i === 0 && !reply.startsWith('2')) break;
        if (i === lines.length - 2 && !replies.slice(1).some((r) => r.startsWith('2'))) break;
      }
    }
    const envelopeError = this.envelopeError(replies, envelope.to.length);
    const dataReply = replies[lines.length - 1];
    if (envelopeError) {
      // A relay that said 354 anyway gets an empty message it will refuse or drop, and the session goes on.
      if (dataReply?.startsWith('354')) await this.command('.', 'DATA');
      throw envelopeError;
    }
    if (!dataReply!.startsWith('354')) throw smtpError('Data command failed', 'EENVELOPE', 'DATA', dataReply);
    const final = this.expectReply('DATA');
    writeMessage(this.socket, message, progress);
    const reply = await final;
    if (!reply.startsWith('2')) throw smtpError('Message failed', 'EMESSAGE', 'DATA', reply);
    return reply;
  }

  /** The MAIL FROM / RCPT TO failure among the replies, if any (some recipients refused is not one). */
  private envelopeError(replies: string[], recipients: number): SmtpFailure | undefined {
    const mail = replies[0]!;
    if (!mail.startsWith('2')) return smtpError('Mail command failed', 'EENVELOPE', 'MAIL FROM', mail);
    const rcpt = replies.slice(1, 1 + recipients);
    if (rcpt.some((r) => r.startsWith('2'))) return undefined;
    return smtpError("Can't send mail - all recipients were rejected", 'EENVELOPE', 'RCPT TO', rcpt.at(-1));
  }

  private async handshake(): Promise<void> {
    const greeting = await this.expectReply('CONN');
    if (!greeting.startsWith('220')) throw smtpError('Invalid greeting', 'EPROTOCOL', 'CONN', greeting);
    await this.hello();
    if (!this.secure && !this.ep.ignoreTLS && this.extensions.has('STARTTLS')) await this.startTls();
    if (this.ep.requireTLS && !this.secure) throw smtpError('The relay offers no STARTTLS and requireTLS is set', 'ETLS', 'STARTTLS');
  }

  private async hello(): Promise<void> {
    const name = (this.ep.name ?? defaultName()).replace(/[\r\n]+/g, '');
    let reply = await this.command(`EHLO ${name}`, 'EHLO');
    this.extensions = new Set();
    this.authMethods = new Set();
    if (!reply.startsWith('2')) {
      reply = await this.command(`HELO ${name}`, 'HELO');
      if (!reply.startsWith('2')) throw smtpError('Invalid HELO', 'EPROTOCOL', 'HELO', reply);
      return;
    }
    for (const line of reply.split('\n').slice(1)) {
      const words = line.slice(4).trim().toUpperCase().split(/[\s=]+/);
      this.extensions.add(words[0]!);
      if (words[0] === 'AUTH') for (const m of words.slice(1)) this.authMethods.add(m);
    }
  }

  private async startTls(): Promise<void> {
    const reply = await this.command('STARTTLS', 'STARTTLS');
    if (!reply.startsWith('220')) throw smtpError('Error upgrading connection with STARTTLS', 'ETLS', 'STARTTLS', reply);
    const plain = this.socket;
    this.detach(plain);
    const secured = await new Promise<TLSSocket>((resolve, reject) => {
      const servername = isIP(this.ep.host) ? undefined : this.ep.host;
      const s = tlsConnect({ socket: plain, servername, ...this.ep.tls });
      // The plain socket's inactivity timeout is off while the handshake runs: this one stands in.
      const timer = setTimeout(() => {
        s.destroy();
        reject(smtpError('TLS handshake timeout', 'ETIMEDOUT', 'STARTTLS'));
      }, this.ep.timeoutMs);
      const onError = (e: Error) => {
        clearTimeout(timer);
        reject(smtpError(`Error initiating TLS - ${e.message}`, 'ETLS', 'STARTTLS', undefined, e));
      };
      s.once('error', onError);
      s.once('secureConnect', () => {
        clearTimeout(timer);
        s.off('error', onError);
        resolve(s);
      });
    }).catch((e: unknown) => {
      this.socket = plain;
      this.attach(plain);
      throw e;
    });
    this.socket = secured;
    this.secure = true;
    this.attach(secured);
    await this.hello();
  }

  /** Writes a command line and waits for its reply. */
  private command(line: string, command: string): Promise<string> {
    const reply = this.expectReply(command);
    if (!this.ended) this.socket.write(`${line}\r\n`);
    return reply;
  }

  /** Several commands in one write (RFC 2920); their replies in order. */
  private async pipeline(lines: string[], commands: string[]): Promise<string[]> {
    const replies = commands.map((c) => this.expectReply(c));
    // Every reply is awaited below; a failure rejects all of them with one error: no unhandled rejection.
    for (const r of replies) r.catch(() => undefined);
    if (!this.ended) this.socket.write(`${lines.join('\r\n')}\r\n`);
    return Promise.all(replies);
  }

  private expectReply(command: string): Promise<string> {
    if (this.ended) return Promise.reject(smtpError('Connection closed unexpectedly', 'ECONNECTION', command));
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  private readonly onData = (chunk: Buffer): void => {
    this.buffer += this.decoder.write(chunk);
    if (this.buffer.length > MAX_REPLY) return this.end(smtpError('Server response exceeds maximum allowed size', 'EPROTOCOL', 'CONN'));
    let at: number;
    while (!this.ended && (at = this.buffer.indexOf('\n')) !== -1) {
      const line = this.buffer.slice(0, at).replace(/\r$/, '');
      this.buffer = this.buffer.slice(at + 1);
      this.replyLines.push(line);
      if (line.length >= 4 && line[3] === '-') continue;
      const reply = this.replyLines.join('\n');
      this.replyLines = [];
      this.onReply(reply);
    }
  };

  private onReply(reply: string): void {
    if (/^421[ -]/.test(reply)) {
      // The relay is closing the channel (RFC 5321 4.2): whatever was asked, the session is over.
      this.end(smtpError('Server terminates connection', 'ECONNECTION', 'CONN', reply));
      return;
    }
    this.waiters.shift()?.resolve(reply);
  }

  private readonly onError = (e: Error): void => this.end(smtpError(e.message, socketFailureCode(e), 'CONN', undefined, e));
  private readonly onClose = (): void => this.end(smtpError('Connection closed unexpectedly', 'ECONNECTION', 'CONN'));
  private readonly onTimeout = (): void => this.end(smtpError('Timeout', 'ETIMEDOUT', 'CONN'));

  private attach(socket: Socket): void {
    // Nagle's algorithm would hold the pipelined commands and the message's last segment for the relay's
    // delayed ACK (tens of ms per message); keep-alive notices a relay that vanished from an idle connection.
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 30_000);
    socket.on('data', this.onData);
    socket.on('error', this.onError);
    socket.on('close', this.onClose);
    socket.on('timeout', this.onTimeout);
    socket.setTimeout(this.ep.timeoutMs);
  }

  private detach(socket: Socket): void {
    socket.off('data', this.onData);
    socket.off('error', this.onError);
    socket.off('close', this.onClose);
    socket.off('timeout', this.onTimeout);
    socket.setTimeout(0);
  }

  /** Ends the session once: the socket is destroyed, every waiting command fails with `err`. */
  private end(err: Error): void {
    if (this.ended) return;
    this.ended = true;
    this.detach(this.socket);
    this.socket.on('error', () => undefined);
    this.socket.destroy();
    if (this.progress) markProgress(this.progress, err);
    for (const w of this.waiters.splice(0)) w.reject(err);
    this.onEnd();
  }
}
