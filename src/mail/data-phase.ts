// Did the whole message reach the relay before the connection failed?
//
// nodemailer 10 reports a dropped connection or a socket timeout the same way at every stage of a send
// (code ECONNECTION / ETIMEDOUT, command 'CONN'): a drop while saying RCPT TO and a drop while waiting
// for the answer to the final "." look alike. They are not alike for us: before the message is complete
// the relay cannot have accepted it (a retry is safe); once the final CRLF.CRLF is out, the relay may have
// queued it and only its answer was lost, and a retry may send a second copy. Nothing public tells the two
// apart (checked: the error's `command`, `code`, `response`; nodemailer's pool's `readableDidRead` only
// told "not a byte read yet"), so we watch the one place that knows: SMTPConnection's data stream (the message
// with dots escaped and the terminating CRLF.CRLF appended, piped into the socket). Its 'end' fires once
// every byte, the terminator included, has been handed to socket.write(). An error after that is marked
// DATA_SENT on the error object itself, which SMTPConnection passes unchanged to send()'s callback (our pool,
// smtp-pool.ts, hands it on as it is).
//
// The mark errs on the safe side: bytes handed to socket.write() may still sit in the socket's buffer when
// the connection dies, so a few sends the relay never saw are called ambiguous (their row becomes
// 'unknown': not resent, papers carried to the next digest). The other way round cannot happen: an error
// without the mark came before the terminator was written, so the relay cannot have accepted the message.
//
// This patches two methods of nodemailer's SMTPConnection (send, _createSendStream) once per process; our
// pool (smtp-pool.ts) creates its connections from the same ESM module we import here.
// installDataPhaseWatch() throws when those methods are missing (a nodemailer upgrade changed them), and
// tests/integration/relay-ambiguity.test.ts fails on a real relay if the mark stops coming.
//
// The same wrap swaps the data stream's byte-by-byte dot-stuffing loop for src/mail/dot-stuffing.ts
// (same bytes out, measured 0.87 -> 0.03 ms per 88 KB message): it is per stream, nothing global.
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import { AppError } from '../errors.ts';
import { dotStuffTransform } from './dot-stuffing.ts';

/** Set (true) on an error that ended a send after the whole message, terminator included, was written. */
export const DATA_SENT: unique symbol = Symbol.for('paper-digest.smtp.dataSent');
/**
 * Set (true) on an error that ended a send after the relay said 354 and the message started to go out.
 * Without it not a byte of the message was written: our pool (smtp-pool.ts) may send it again over a fresh
 * connection, as nodemailer's pool requeued a message whose stream was never read.
 */
export const BODY_STARTED: unique symbol = Symbol.for('paper-digest.smtp.bodyStarted');

type SendCallback = (err: Error | null, info?: unknown) => void;
interface ConnectionInternals {
  send(envelope: unknown, message: unknown, done: SendCallback): void;
  _createSendStream(callback: SendCallback): NodeJS.ReadableStream;
}

const CURRENT = Symbol('paper-digest.smtp.currentSend');
const INSTALLED = Symbol.for('paper-digest.smtp.dataPhaseWatch');

/** Patches SMTPConnection once; later calls do nothing. */
export function installDataPhaseWatch(): void {
  const proto = (SMTPConnection as unknown as { prototype: ConnectionInternals & Record<symbol, unknown> }).prototype;
  if (proto[INSTALLED]) return;
  if (typeof proto.send !== 'function' || typeof proto._createSendStream !== 'function') {
    throw new AppError(
      'SMTP_INTERNALS_CHANGED',
      'nodemailer no longer has SMTPConnection.send/_createSendStream: cannot tell a lost answer from a failed send (see src/mail/data-phase.ts)',
    );
  }
  const send = proto.send;
  const createSendStream = proto._createSendStream;
  proto.send = function (this: ConnectionInternals & Record<symbol, unknown>, envelope, message, done) {
    const state = { dataSent: false, bodyStarted: false };
    this[CURRENT] = state;
    send.call(this, envelope, message, (err, info) => {
      if (err && state.dataSent) (err as unknown as Record<symbol, boolean>)[DATA_SENT] = true;
      if (err && state.bodyStarted) (err as unknown as Record<symbol, boolean>)[BODY_STARTED] = true;
      done(err, info);
    });
  };
  proto._createSendStream = function (this: ConnectionInternals & Record<symbol, unknown>, callback) {
    const stream = createSendStream.call(this, callback);
    (stream as unknown as { _transform: typeof dotStuffTransform })._transform = dotStuffTransform;
    const state = this[CURRENT] as { dataSent: boolean; bodyStarted: boolean } | undefined;
    if (state) state.bodyStarted = true;
    stream.once('end', () => {
      if (state) state.dataSent = true;
    });
    return stream;
  };
  proto[INSTALLED] = true;
}

/** Marks `err` with how far the send in flight on `connection` got (for a failure not reported by send()). */
export function markProgress(connection: object, err: Error): Error {
  const state = (connection as Record<symbol, unknown>)[CURRENT] as { dataSent: boolean; bodyStarted: boolean } | undefined;
  if (state?.dataSent) (err as unknown as Record<symbol, boolean>)[DATA_SENT] = true;
  if (state?.bodyStarted) (err as unknown as Record<symbol, boolean>)[BODY_STARTED] = true;
  return err;
}

/** True when `e` ended a send after some of the message had been written (the relay had said 354). */
export function startedBody(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[BODY_STARTED] === true;
}

/** True when `e` ended a send after the whole message had been written to the relay. */
export function sentWholeMessage(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[DATA_SENT] === true;
}
