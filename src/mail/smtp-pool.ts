// Our SMTP connection pool: nodemailer's SMTPConnection (its documented lower-level API: connect, login,
// send, reset, quit) driven directly, one message at a time per connection. nodemailer still does the
// protocol: greeting, EHLO, STARTTLS or smtps, AUTH, PIPELINING (MAIL FROM + RCPT TO + DATA in one write,
// RFC 2920), timeouts, reply parsing; the message itself, one Buffer, is written by data-phase.ts (dots
// stuffed when needed, no stream). What we skip is its per-message machinery around that: sendMail ->
// MailMessage -> MailComposer / MimeNode (a raw message is still wrapped in a node, its headers parsed for
// the envelope, a stream pipeline with an AbortController built per message) -> the pool's queue. Measured in one sending thread (friendly 20k,
// `--workers 1 --profile`): that machinery was 0.30-0.35 ms of CPU per digest (mailer + composer 0.22,
// pool 0.05, stream pipeline and its AbortSignal/DOMException ~0.08) out of 2.8 ms; the data stream and
// the socket writes themselves (0.3-0.4 ms on a loaded machine, most of it the kernel taking 86 KB) stay.
// Handing the body and its terminator to the socket in one write instead of two was first tried here and
// measured no difference (socket writes 0.21 vs 0.19 of render time, within noise). It is done now, over
// plain TCP, with the data stream itself gone (data-phase.ts): in bench/smtp-send.ts, which measures the
// send path alone in CPU per message, it is 69.5 -> 65.2 µs per 67 KB message (the stream and the
// dot-stuffing scan were the larger part; see data-phase.ts).
//
// What nodemailer's pool did and this keeps:
// - at most `poolSize` connections, each reused for up to `maxMessages` messages, then QUIT and reopened;
// - a message that failed on a REUSED connection before a byte of its body went out, with no answer (the
//   relay closed an idle connection, or dropped it at RCPT TO) is sent again over a fresh connection, at
//   most `maxRequeues` times: safe, the relay cannot have the message (data-phase.ts marks BODY_STARTED);
// - a message the relay refused (4xx / 5xx to RCPT TO or DATA, not 421) leaves the connection usable: RSET;
// - any other failure closes the connection; the next message opens a new one;
// - SMTP_RATE_PER_SECOND: at most `limit` messages started per `delta` ms window over the whole pool.
import { setTimeout as sleep } from 'node:timers/promises';
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import { parseConnectionUrl } from 'nodemailer/lib/shared';
import { installDataPhaseWatch, markProgress, startedBody } from './data-phase.ts';

export interface SmtpPoolOptions {
  /** smtp://user:pass@host:port or smtps://… (query options as nodemailer reads them, e.g. tls.rejectUnauthorized=false) */
  url: string;
  poolSize: number;
  /** Messages per window; undefined = no limit. */
  rate?: { limit: number; deltaMs: number } | undefined;
  /** Connect, greeting and socket inactivity timeout. */
  timeoutMs: number;
  /** Messages per connection before it is replaced (nodemailer's maxMessages; default 1000). */
  maxMessages?: number;
  /** Fresh-connection retries of a message whose body never started (nodemailer's maxRequeues; default 2). */
  maxRequeues?: number;
  /** Log in over a connection that is neither smtps nor upgraded by STARTTLS (SMTP_ALLOW_PLAIN_AUTH). */
  allowPlainAuth?: boolean;
}

export interface Envelope {
  from: string;
  to: string[];
}

type Conn = InstanceType<typeof SMTPConnection> & { _destroyed?: boolean };

interface Slot {
  conn: Conn | undefined;
  /** Messages sent (or tried) over `conn`. */
  messages: number;
}

/** An error shaped like nodemailer's (code, command), so errors.ts reads it the same way. */
function poolError(message: string, code = 'ECONNECTION'): Error {
  return Object.assign(new Error(message), { code, command: 'CONN' });
}

/** The relay offered no STARTTLS (and the URL is not smtps): the password would travel in clear. */
export function plainAuthRefused(): Error {
  return Object.assign(
    new Error('SMTP_URL: the relay offers no STARTTLS and the URL is not smtps://, so the password would travel in clear; refused (use smtps:// or a relay with STARTTLS, or set SMTP_ALLOW_PLAIN_AUTH=true)'),
    { code: 'EPLAINAUTH', command: 'AUTH' },
  );
}

interface ErrorLike {
  code?: string;
  responseCode?: number;
}

/**
 * The connection went away without an answer (dropped, reset, timed out). Not a 421: that is the relay's
 * answer ("closing channel"), reported as it is and counted toward "relay down" (nodemailer's pool did
 * not requeue it either: tests/integration/delivery-mailer.test.ts).
 */
function lostConnection(e: unknown): boolean {
  const err = e as ErrorLike;
  return err.responseCode === undefined && (err.code === 'ECONNECTION' || err.code === 'ESOCKET' || err.code === 'ETIMEDOUT');
}

export class SmtpPool {
  private readonly free: Slot[] = [];
  private readonly waiting: Array<(slot: Slot | undefined) => void> = [];
  private readonly connOptions: SMTPConnection.Options;
  private readonly auth: SMTPConnection.AuthenticationType | undefined;
  private readonly maxMessages: number;
  private readonly maxRequeues: number;
  private readonly rate: RateWindow | undefined;
  private readonly open = new Set<Conn>();
  /** Every send handed to a connection and not yet answered: its reject, and the connection. */
  private readonly inFlight = new Map<(e: Error) => void, Conn>();
  /** `?forceAuth=true` in the URL: log in even when EHLO does not offer AUTH (as nodemailer's pool). */
  private readonly forceAuth: boolean;
  private readonly allowPlainAuth: boolean;
  private closed = false;

  constructor(opts: SmtpPoolOptions) {
    installDataPhaseWatch();
    const url = parseConnectionUrl(opts.url) as SMTPConnection.Options & { auth?: { user: string; pass: string } };
    const { auth, forceAuth, ...rest } = url as typeof url & { forceAuth?: unknown };
    this.forceAuth = forceAuth === true;
    this.allowPlainAuth = opts.allowPlainAuth ?? false;
    this.connOptions = {
      ...rest,
      connectionTimeout: opts.timeoutMs,
      greetingTimeout: opts.timeoutMs,
      socketTimeout: opts.timeoutMs,
      logger: false,
    };
    // As nodemailer's pool builds it: the method is chosen from what the server offers.
    this.auth =
      auth && (auth.user || auth.pass)
        ? { type: 'LOGIN', user: auth.user, credentials: { user: auth.user ?? '', pass: auth.pass } } as SMTPConnection.AuthenticationType
        : undefined;
    this.maxMessages = opts.maxMessages ?? 1000;
    this.maxRequeues = opts.maxRequeues ?? 2;
    this.rate = opts.rate ? new RateWindow(opts.rate.limit, opts.rate.deltaMs) : undefined;
    for (let i = 0; i < Math.max(1, opts.poolSize); i++) this.free.push({ conn: undefined, messages: 0 });
  }

  /** Sends one message; resolves with the relay's final reply ("250 …"), rejects with nodemailer's error. */
  async send(envelope: Envelope, raw: Buffer): Promise<string> {
    const slot = await this.acquire();
    try {
      for (let requeues = 0; ; requeues++) {
        if (this.rate) await this.rate.take();
        const conn = await this.connection(slot);
        const reused = slot.messages > 0;
        slot.messages++;
        try {
          const response = await this.sendOn(conn, envelope, raw);
          if (slot.messages >= this.maxMessages) this.retire(slot, 'quit');
          return response;
        } catch (e) {
          if (reused && !startedBody(e) && lostConnection(e) && requeues < this.maxRequeues && !this.closed) {
            // Not a byte of the message went out: the relay cannot have it. Again, over a new connection.
            this.retire(slot, 'close');
            continue;
          }
          const refused = (e as ErrorLike).code === 'EENVELOPE' || (e as ErrorLike).code === 'EMESSAGE';
          if (refused && (e as ErrorLike).responseCode !== 421 && !conn._destroyed) {
            // The relay refused this message; the session is fine once reset.
            if (!(await reset(conn))) this.retire(slot, 'close');
          } else this.retire(slot, 'close');
          throw e;
        }
      }
    } finally {
      this.release(slot);
    }
  }

  /**
   * Closes every connection; sends waiting for one, and sends still in flight, fail as connection failures
   * (SMTPConnection.close() forgets a send in flight without calling it back: it would wait forever).
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const conn of this.open) conn.close();
    this.open.clear();
    for (const w of this.waiting.splice(0)) w(undefined);
    // Marked as far as each send got (data-phase.ts): a message whose final "." went out is ambiguous.
    for (const [fail, conn] of this.inFlight) fail(markProgress(conn, poolError('the SMTP pool was closed while the message was being sent')));
    this.inFlight.clear();
  }

  private sendOn(conn: Conn, envelope: Envelope, raw: Buffer): Promise<string> {
    return new Promise((resolve, reject) => {
      this.inFlight.set(reject, conn);
      // A copy: SMTPConnection keeps its per-message state (accepted, rejected, queues) ON the envelope
      // object, so one object shared by sends on two connections mixes their replies (seen: "all recipients
      // were rejected: 354" when the ceiling passed one envelope to five connections).
      conn.send({ from: envelope.from, to: envelope.to.slice() }, raw, (err, info) => {
        this.inFlight.delete(reject);
        if (err) reject(err);
        else resolve(String(info?.response ?? ''));
      });
    });
  }

  private acquire(): Promise<Slot> {
    if (this.closed) return Promise.reject(poolError('the SMTP pool was closed'));
    const slot = this.free.pop();
    if (slot) return Promise.resolve(slot);
    return new Promise((resolve, reject) => {
      this.waiting.push((s) => (s ? resolve(s) : reject(poolError('the SMTP pool was closed'))));
    });
  }

  private release(slot: Slot): void {
    const next = this.waiting.shift();
    if (next) next(slot);
    else this.free.push(slot);
  }

  private retire(slot: Slot, how: 'quit' | 'close'): void {
    const conn = slot.conn;
    slot.conn = undefined;
    slot.messages = 0;
    if (!conn) return;
    this.open.delete(conn);
    if (how === 'quit') conn.quit();
    else conn.close();
  }

  /** The slot's open connection, or a new one (connected, EHLO done, TLS and AUTH as configured). */
  private async connection(slot: Slot): Promise<Conn> {
    if (slot.conn && !slot.conn._destroyed) return slot.conn;
    if (this.closed) throw poolError('the SMTP pool was closed');
    slot.conn = undefined;
    slot.messages = 0;
    const conn = new SMTPConnection(this.connOptions) as Conn;
    // Every failure reaches the callback of what was going on (connect, login, send); an idle connection's
    // error (the relay closed it, or it sat past the socket timeout) only closes it: 'end' forgets it.
    conn.on('error', () => undefined);
    conn.once('end', () => {
      this.open.delete(conn);
      if (slot.conn === conn) {
        slot.conn = undefined;
        slot.messages = 0;
      }
    });
    this.open.add(conn);
    try {
      await step(conn, (done) => conn.connect((err) => done(err ?? null)));
      if (this.auth && (conn.allowsAuth || this.forceAuth)) {
        if (!conn.secure && !this.allowPlainAuth) throw plainAuthRefused();
        await step(conn, (done) => conn.login(this.auth, (err) => done(err)));
      }
    } catch (e) {
      this.open.delete(conn);
      conn.close();
      throw e;
    }
    if (this.closed) {
      conn.close();
      throw poolError('the SMTP pool was closed');
    }
    slot.conn = conn;
    return conn;
  }
}

/**
 * One step of opening a connection (connect, login): done by its callback, or failed by the connection's
 * 'error' (a refused connection reports only there) or its 'end' (closed before the greeting).
 */
function step(conn: Conn, run: (done: (err: Error | null) => void) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (err: Error | null) => {
      if (settled) return;
      settled = true;
      conn.off('error', finish);
      conn.off('end', onEnd);
      if (err) reject(err);
      else resolve();
    };
    const onEnd = () => finish(poolError('Connection closed unexpectedly'));
    conn.on('error', finish);
    conn.once('end', onEnd);
    run(finish);
  });
}

/** RSET after a refused message; false when the session cannot be reused. */
function reset(conn: Conn): Promise<boolean> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (ok: boolean) => {
      if (settled) return;
      settled = true;
      conn.off('end', onEnd);
      resolve(ok);
    };
    const onEnd = () => finish(false);
    conn.once('end', onEnd);
    conn.reset((err) => finish(!err));
  });
}

/** At most `limit` messages started per window of `deltaMs` (nodemailer's rateLimit / rateDelta). */
export class RateWindow {
  private counter = 0;
  private checkpoint = 0;
  constructor(
    private readonly limit: number,
    private readonly deltaMs: number,
  ) {}

  async take(): Promise<void> {
    for (;;) {
      const now = Date.now();
      if (now - this.checkpoint >= this.deltaMs) {
        this.checkpoint = now;
        this.counter = 0;
      }
      if (this.counter < this.limit) {
        this.counter++;
        return;
      }
      await sleep(this.checkpoint + this.deltaMs - now);
    }
  }
}
