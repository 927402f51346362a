// Our SMTP connection pool over our own SMTP client (smtp-connection.ts: greeting, EHLO, STARTTLS or
// smtps, AUTH, PIPELINING, timeouts, replies; data-phase.ts writes the message, one Buffer, dots stuffed
// only when needed). One message at a time per connection. Why our own and not a library's transport:
// README, "Where we wrote our own".
//
// What it keeps (as nodemailer's pool did before it):
// - at most `poolSize` connections, each reused for up to `maxMessages` messages, then QUIT and reopened;
// - a message that failed on a REUSED connection before a byte of its body went out, with no answer (the
//   relay closed an idle connection, or dropped it at RCPT TO) is sent again over a fresh connection, at
//   most `maxRequeues` times: safe, the relay cannot have the message (data-phase.ts marks BODY_STARTED);
// - a message the relay refused (4xx / 5xx to RCPT TO or DATA, not 421) leaves the connection usable: RSET;
// - any other failure closes the connection; the next message opens a new one;
// - SMTP_RATE_PER_SECOND: at most `limit` messages started per `delta` ms window over the whole pool.
import { setTimeout as sleep } from 'node:timers/promises';
import { startedBody } from './data-phase.ts';
import { SmtpConnection, type Credentials, type SmtpEndpoint } from './smtp-connection.ts';
import { parseSmtpUrl } from './smtp-url.ts';

export interface SmtpPoolOptions {
  /** smtp://user:pass@host:port or smtps://… (query options: smtp-url.ts, e.g. tls.rejectUnauthorized=false) */
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

type Conn = SmtpConnection;

interface Slot {
  conn: Conn | undefined;
  /** Messages sent (or tried) over `conn`. */
  messages: number;
}

/** An error shaped like the connection's (code, command), so errors.ts reads it the same way. */
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
 * answer ("closing channel"), reported as it is and counted toward "relay down"
 * (tests/integration/delivery-mailer.test.ts).
 */
function lostConnection(e: unknown): boolean {
  const err = e as ErrorLike;
  return err.responseCode === undefined && (err.code === 'ECONNECTION' || err.code === 'ESOCKET' || err.code === 'ETIMEDOUT');
}

export class SmtpPool {
  private readonly free: Slot[] = [];
  private readonly waiting: Array<(slot: Slot | undefined) => void> = [];
  private readonly endpoint: SmtpEndpoint;
  private readonly auth: Credentials | undefined;
  private readonly maxMessages: number;
  private readonly maxRequeues: number;
  private readonly rate: RateWindow | undefined;
  private readonly open = new Set<Conn>();
  /** `?forceAuth=true` in the URL: log in even when EHLO does not offer AUTH. */
  private readonly forceAuth: boolean;
  private readonly allowPlainAuth: boolean;
  private closed = false;

  constructor(opts: SmtpPoolOptions) {
    const url = parseSmtpUrl(opts.url);
    this.forceAuth = url.forceAuth;
    this.allowPlainAuth = opts.allowPlainAuth ?? false;
    this.endpoint = { ...url.endpoint, timeoutMs: opts.timeoutMs };
    this.auth = url.auth;
    this.maxMessages = opts.maxMessages ?? 1000;
    this.maxRequeues = opts.maxRequeues ?? 2;
    this.rate = opts.rate ? new RateWindow(opts.rate.limit, opts.rate.deltaMs) : undefined;
    for (let i = 0; i < Math.max(1, opts.poolSize); i++) this.free.push({ conn: undefined, messages: 0 });
  }

  /** Sends one message; resolves with the relay's final reply ("250 …"), rejects with the connection's error. */
  async send(envelope: Envelope, raw: Buffer): Promise<string> {
    const slot = await this.acquire();
    try {
      for (let requeues = 0; ; requeues++) {
        if (this.rate) await this.rate.take();
        const conn = await this.connection(slot);
        const reused = slot.messages > 0;
        slot.messages++;
        try {
          const response = await conn.send(envelope, raw);
          if (slot.messages >= this.maxMessages) this.retire(slot, 'quit');
          return response;
        } catch (e) {
          if (reused && !startedBody(e) && lostConnection(e) && requeues < this.maxRequeues && !this.closed) {
            // Not a byte of the message went out: the relay cannot have it. Again, over a new connection.
            this.retire(slot, 'close');
            continue;
          }
          const refused = (e as ErrorLike).code === 'EENVELOPE' || (e as ErrorLike).code === 'EMESSAGE';
          if (refused && (e as ErrorLike).responseCode !== 421 && conn.usable) {
            // The relay refused this message; the session is fine once reset.
            if (!(await conn.reset())) this.retire(slot, 'close');
          } else this.retire(slot, 'close');
          throw e;
        }
      }
    } finally {
      this.release(slot);
    }
  }

  /**
   * Closes every connection; sends waiting for one, and sends still in flight, fail as connection failures,
   * marked as far as each got (data-phase.ts): a message whose final "." went out is ambiguous.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const conn of this.open) conn.close(poolError('the SMTP pool was closed while the message was being sent'));
    this.open.clear();
    for (const w of this.waiting.splice(0)) w(undefined);
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
    if (slot.conn?.usable) return slot.conn;
    if (this.closed) throw poolError('the SMTP pool was closed');
    slot.conn = undefined;
    slot.messages = 0;
    // An idle connection the relay closed, or that sat past the socket timeout, is forgotten here.
    let conn: Conn | undefined;
    const forget = () => {
      if (!conn) return;
      this.open.delete(conn);
      if (slot.conn === conn) {
        slot.conn = undefined;
        slot.messages = 0;
      }
    };
    conn = await SmtpConnection.open(this.endpoint, forget);
    this.open.add(conn);
    try {
      if (this.auth && (conn.offersAuth || this.forceAuth)) {
        if (!conn.secure && !this.allowPlainAuth) throw plainAuthRefused();
        await conn.login(this.auth);
      }
    } catch (e) {
      this.open.delete(conn);
      conn.close();
      throw e;
    }
    if (this.closed || !conn.usable) {
      this.open.delete(conn);
      conn.close();
      throw this.closed ? poolError('the SMTP pool was closed') : poolError('Connection closed unexpectedly');
    }
    slot.conn = conn;
    return conn;
  }
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
