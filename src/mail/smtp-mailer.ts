// The Mailer over SMTP: our pool (smtp-pool.ts: pool size, rate limit, timeouts) of our own SMTP
// connections (smtp-connection.ts: STARTTLS / smtps, AUTH, PIPELINING) and optional DKIM (dkim.ts).
// Messages are built by raw-message.ts (headers from a template, fast quoted-printable bodies), signed
// when DKIM is configured, and sent as bytes over one of the pool's connections. Errors come out as
// MailError with a kind (temporary / permanent / connection / ambiguous) the sender acts on; 'ambiguous'
// (no answer after the whole message went out) comes from the send's progress (data-phase.ts).
import { randomUUID } from 'node:crypto';
import type { Logger } from '../log.ts';
import { errorMessage } from '../errors.ts';
import { DkimSigner } from './dkim.ts';
import { MailError, toMailError } from './errors.ts';
import { SmtpPool } from './smtp-pool.ts';
import { createMessageBuilder, type RawMessage } from './raw-message.ts';
import type { DkimConfig, Mailer, OutgoingMail, SentMail } from './types.ts';

export interface SmtpMailerOptions {
  /** smtp://user:pass@host:port or smtps://… */
  url: string;
  /** MAIL_FROM, e.g. "Paper Digest <digest@example.org>" */
  from: string;
  /** Open connections at most (SMTP_POOL_SIZE). */
  poolSize: number;
  /** Messages per second over the whole pool; 0 = no limit (SMTP_RATE_PER_SECOND). */
  ratePerSecond: number;
  /** Connect, greeting and socket inactivity timeout (SMTP_TIMEOUT_MS). */
  timeoutMs: number;
  dkim?: DkimConfig | undefined;
  logger: Logger;
  /** Log in without TLS (SMTP_ALLOW_PLAIN_AUTH); refused by default. */
  allowPlainAuth?: boolean;
}

/**
 * Headers every DKIM signature covers. RFC 8058 asks for List-Unsubscribe and List-Unsubscribe-Post
 * to be signed.
 */
export const DKIM_SIGNED_HEADERS = [
  'From', 'Sender', 'Reply-To', 'Subject', 'Date', 'Message-ID', 'To', 'Cc', 'MIME-Version',
  'Content-Type', 'Content-Transfer-Encoding', 'List-Id', 'List-Unsubscribe', 'List-Unsubscribe-Post',
].join(':');

/** The pool counts messages per window: turn "messages per second" (maybe < 1) into that. */
export function rateWindow(ratePerSecond: number): { rateLimit: number; rateDelta: number } | undefined {
  if (!(ratePerSecond > 0)) return undefined;
  if (ratePerSecond >= 1) return { rateLimit: Math.floor(ratePerSecond), rateDelta: 1000 };
  return { rateLimit: 1, rateDelta: Math.round(1000 / ratePerSecond) };
}

/** The domain of an address, with or without a display name: "A <x@example.org>" -> "example.org". */
export function domainOf(address: string): string {
  const m = /@([^@<>\s]+?)>?\s*$/.exec(address.trim());
  return m?.[1]?.toLowerCase() ?? 'localhost';
}

export function createSmtpMailer(opts: SmtpMailerOptions): Mailer {
  const log = opts.logger.child({ component: 'smtp' });
  const window = rateWindow(opts.ratePerSecond);
  const pool = new SmtpPool({
    url: opts.url,
    poolSize: opts.poolSize,
    rate: window && { limit: window.rateLimit, deltaMs: window.rateDelta },
    timeoutMs: opts.timeoutMs,
    maxMessages: 1000,
    // A message is sent again over a fresh connection only when not a byte of it reached the server (a
    // reused connection the relay had closed, or dropped at RCPT TO): safe to repeat, so a small bound.
    maxRequeues: 2,
    allowPlainAuth: opts.allowPlainAuth,
  });
  const dkim = opts.dkim
    ? new DkimSigner({
        domainName: opts.dkim.domainName,
        keySelector: opts.dkim.keySelector,
        privateKey: opts.dkim.privateKey,
        headerFieldNames: DKIM_SIGNED_HEADERS,
      })
    : undefined;
  const builder = createMessageBuilder({ from: opts.from });
  const fromDomain = domainOf(opts.from);
  let closed = false;
  const rooms = new MessageRooms(opts.poolSize);

  /** Hands a built message to the pool. Holds only the bytes while the relay works, not the bodies. */
  const deliver = async (envelope: RawMessage['envelope'], raw: Buffer, messageId: string, room: Buffer | undefined): Promise<SentMail> => {
    try {
      // Signed: a new Buffer (signature header + message); the room is free again at once.
      const bytes = dkim ? dkim.sign(raw) : raw;
      if (bytes !== raw && room) {
        rooms.release(room);
        room = undefined;
      }
      const response = await pool.send(envelope, bytes);
      // Accepted after the final dot: every byte was read. (After a failure the bytes are left to the
      // garbage collector: a relay that answered early may leave the data stream still reading them.)
      if (room) rooms.release(room);
      return { messageId, response };
    } catch (e) {
      const err = toMailError(e);
      log.debug({ to: envelope.to, kind: err.kind, code: err.responseCode, response: err.response }, 'send failed');
      throw err;
    }
  };

  return {
    send(mail: OutgoingMail): Promise<SentMail> {
      const messageId = mail.messageId ?? `${randomUUID()}@${fromDomain}`;
      let built: RawMessage;
      let room: Buffer | undefined;
      try {
        built = builder.build(mail, messageId, new Date(), (size) => (room = rooms.take(size)).subarray(0, size));
      } catch (e) {
        // Nothing was sent and sending this message cannot work (bad address or header): permanent.
        return Promise.reject(new MailError('permanent', errorMessage(e), undefined, e));
      }
      return deliver(built.envelope, built.raw, messageId, room);
    },
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      pool.close();
    },
  };
}

/**
 * Buffers a digest's message is written into, reused once the relay has it: a send run would otherwise
 * allocate one 60-150 KB Buffer per message, garbage outside V8's heap that is collected only once it
 * reaches tens of MB (measured: 74 MB of "external" memory during a friendly send run). At most one per
 * message in flight is kept (SMTP_POOL_SIZE), each as large as the largest message it held.
 */
export class MessageRooms {
  private readonly free: Buffer[] = [];
  constructor(private readonly keep: number) {}

  take(size: number): Buffer {
    for (let i = this.free.length - 1; i >= 0; i--) {
      const b = this.free[i]!;
      if (b.length >= size) {
        this.free.splice(i, 1);
        return b;
      }
    }
    // None big enough: a new one with room to spare, so that slightly larger messages fit it next time.
    return Buffer.allocUnsafeSlow(Math.ceil((size * 1.25) / 4096) * 4096);
  }

  release(b: Buffer): void {
    if (this.free.length < this.keep) {
      this.free.push(b);
      return;
    }
    // Full: keep the larger ones.
    let smallest = 0;
    for (let i = 1; i < this.free.length; i++) if (this.free[i]!.length < this.free[smallest]!.length) smallest = i;
    if (this.free.length > 0 && this.free[smallest]!.length < b.length) this.free[smallest] = b;
  }
}
