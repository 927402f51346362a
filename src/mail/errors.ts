// What went wrong with one SMTP send, reduced to what the sender needs to decide: retry, fail, or pause.
import { AppError } from '../errors.ts';
import { sentWholeMessage } from './data-phase.ts';

/**
 * - temporary:  the relay answered 4xx for this message (or 503): retry later with backoff.
 * - permanent:  the relay answered 5xx for this recipient or message: record, count a hard failure.
 * - connection: the relay could not be used at all (refused, dropped, timeout, TLS or auth failure,
 *               sender refused, 421 "service not available, closing channel" at any stage): retry
 *               later; many in a row mean the relay is down.
 * - ambiguous:  the connection dropped or timed out AFTER the whole message, final "." included, was
 *               written, and no answer came: the relay may have queued it. Never retried (a retry may be a
 *               second copy): the row becomes 'unknown', as after a crash (see data-phase.ts, ledger/recover.ts).
 */
export type MailErrorKind = 'temporary' | 'permanent' | 'connection' | 'ambiguous';

export class MailError extends AppError {
  readonly kind: MailErrorKind;
  /** SMTP reply code when the server answered (e.g. 451, 550); undefined when no reply came. */
  readonly responseCode: number | undefined;
  /** The server's reply line, or a short description of the connection problem. */
  readonly response: string;

  constructor(kind: MailErrorKind, response: string, responseCode: number | undefined, cause?: unknown) {
    super(`MAIL_${kind.toUpperCase()}`, `SMTP ${kind} failure: ${response}`, {
      // 'ambiguous' is not retried: the send may have succeeded.
      temporary: kind === 'temporary' || kind === 'connection',
      cause,
      });
    this.name = 'MailError';
    this.kind = kind;
    this.responseCode = responseCode;
    this.response = response;
  }
}

/** The fields of an SMTP connection error (smtp-connection.ts) this module reads. */
interface TransportErrorLike {
  code?: string;
  originalCode?: string;
  responseCode?: number;
  response?: string;
  command?: string;
  message?: string;
}

/** Commands whose rejection is about this recipient or this message, not about the relay. */
const MESSAGE_LEVEL_COMMANDS = new Set(['RCPT TO', 'DATA', 'API']);

/** Turns whatever the SMTP connection threw into a MailError with a kind the sender can act on. */
export function toMailError(e: unknown): MailError {
  if (e instanceof MailError) return e;
  const err = (typeof e === 'object' && e !== null ? e : { message: String(e) }) as TransportErrorLike;
  const code = typeof err.responseCode === 'number' ? err.responseCode : undefined;
  const reply = (err.response ?? '').trim();
  // A refused sender (EENVELOPE at MAIL FROM) would be refused for everyone: that is the relay's problem.
  const messageLevel =
    err.code === 'EMESSAGE' || (err.code === 'EENVELOPE' && MESSAGE_LEVEL_COMMANDS.has(err.command ?? 'API'));

  if (messageLevel) {
    if (code === undefined || (code >= 500 && code !== 503)) {
      return new MailError('permanent', reply || err.message || 'message refused', code, e);
    }
    return new MailError('temporary', reply || err.message || 'message deferred', code, e);
  }
  // Anything else is about the relay or the connection to it.
  const what = [err.originalCode ?? err.code, reply || err.message].filter(Boolean).join(' ');
  // No answer at all after the whole message went out: it may be queued. An answer (even a 421 while
  // closing) is an answer: the relay did not take the message.
  if (code === undefined && sentWholeMessage(e)) {
    return new MailError('ambiguous', `no answer after the whole message was sent: ${what || 'connection lost'}`, undefined, e);
  }
  return new MailError('connection', what || 'connection failed', code, e);
}
