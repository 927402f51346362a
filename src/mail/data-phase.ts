// Did the whole message reach the relay before the connection failed?
//
// nodemailer 10 reports a dropped connection or a socket timeout the same way at every stage of a send
// (code ECONNECTION / ETIMEDOUT, command 'CONN'): a drop while saying RCPT TO and a drop while waiting
// for the answer to the final "." look alike. They are not alike for us: before the message is complete
// the relay cannot have accepted it (a retry is safe); once the final CRLF.CRLF is out, the relay may have
// queued it and only its answer was lost, and a retry may send a second copy. Nothing public tells the two
// apart (checked: the error's `command`, `code`, `response`; nodemailer's pool's `readableDidRead` only
// told "not a byte read yet"), so we watch the one place that knows: the writing of the message (dots
// escaped, the terminating CRLF.CRLF appended) to the socket. BODY_STARTED is set when the relay has said
// 354 and the first byte is about to be written; DATA_SENT once every byte, the terminator included, has
// been handed to the socket. An error after that is marked on the error object itself, which SMTPConnection
// passes unchanged to send()'s callback (our pool, smtp-pool.ts, hands it on as it is).
//
// The mark errs on the safe side: bytes handed to the socket may still sit in its buffers when the
// connection dies, so a few sends the relay never saw are called ambiguous (their row becomes 'unknown':
// not resent, papers carried to the next digest). The other way round cannot happen: an error without the
// mark came before the terminator was written, so the relay cannot have accepted the message.
//
// This patches two methods of nodemailer's SMTPConnection (send, _createSendStream) once per process; our
// pool (smtp-pool.ts) creates its connections from the same ESM module we import here.
// installDataPhaseWatch() throws when those methods (or _actionSMTPStream, which the path below queues)
// are missing (a nodemailer upgrade changed them), and tests/integration/relay-ambiguity.test.ts and
// smtp-data-phase.test.ts fail on a real relay if the marks stop coming.
//
// A message that is one Buffer (all of ours: raw-message.ts builds it whole, DKIM signing makes another
// whole one) no longer goes through SMTPConnection's data stream. That stream was a Transform (our
// dotStuffTransform in place of its byte loop: same bytes, 0.87 -> 0.03 ms per 88 KB message) piped into
// the socket: per message a Transform, a pipe with its listeners, push / 'data' / write, a flush for the
// terminator written apart once the body had drained, 'end' on a later tick. In its place, WholeMessageBody
// below: SMTPConnection.send() still does everything else (envelope, PIPELINING, the 354, the answer to the
// final ".", timeouts, errors; it only calls write(message), end() and reads outByteCount of what
// _createSendStream returns, and close() calls unpipe()). It writes dotStuffMessage(message) (the message
// itself unless there is something to stuff) and the same terminator:
// - over plain TCP in one write (cork, body, terminator, uncork: one syscall and one segment fewer per
//   message). DATA_SENT when the kernel has taken all of it: at once when it did so inside write() (always,
//   in the bench), else in the write's callback, which libuv runs from the same poll callback that wrote
//   the last byte, so before any later read of the relay's answer or goodbye. Compared with the stream,
//   the mark comes at the same point or later, never after the relay could have the terminator: between
//   "the terminator handed to socket.write()" and "the kernel took it" the relay cannot have it, and an
//   error there is now a plain (retryable) connection failure instead of an ambiguous one.
// - over TLS (STARTTLS, smtps) as the pipe did: body, then the terminator as soon as the socket has taken
//   the body (at once, or on 'drain'), DATA_SENT when the terminator is handed over. Not in one write:
//   TLSWrap reports even a write that went out at once a turn of the event loop later ("simulate
//   asynchronous finishing"), after a poll that may read the relay's goodbye; marking on that report
//   could leave a message the relay has without its mark.
// LMTP, `debug` connections and messages that are streams or strings keep nodemailer's stream.
// Measured with bench/smtp-send.ts (one 67 KB digest sent over and over through the pool to Postfix's
// smtp-sink; CPU of the sending process per message, user + system): before -> after, six alternating
// runs of each, medians 167 -> 108 µs (user 117 -> 69, system 42 -> 36). Step by step, variants
// alternating in one process (15 rounds of 1,500): stream 100.5 µs; no stream, dotStuff's indexOf walk
// 93.6; a hand-assembled WebAssembly SIMD scan instead 69.5 and one write 65.2 (38.1 user, 27.0 system).
// The scan was left out (dot-stuffing.ts says why): without it the figures above are ~15-20 µs higher.
// What is left is mostly the kernel taking 67 KB and the exchange's syscalls (1 fewer per message now),
// and nodemailer's reply handling (a setImmediate per reply: ~6.5 event-loop turns per message, strace).
// In `npm run bench` (20k friendly, --workers 1): the ceiling's CPU per message 0.283 -> 0.208 ms; in the
// render+send thread's profile the send path 170 -> 146 µs per message (of which the socket writes'
// syscalls 55 -> 48 and building the MIME 16 -> 18, which this does not touch).
import type { Socket } from 'node:net';
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import { AppError } from '../errors.ts';
import { dotStuffMessage, dotStuffTransform } from './dot-stuffing.ts';

/** Set (true) on an error that ended a send after the whole message, terminator included, was written. */
export const DATA_SENT: unique symbol = Symbol.for('paper-digest.smtp.dataSent');
/**
 * Set (true) on an error that ended a send after the relay said 354 and the message started to go out.
 * Without it not a byte of the message was written: our pool (smtp-pool.ts) may send it again over a fresh
 * connection, as nodemailer's pool requeued a message whose stream was never read.
 */
export const BODY_STARTED: unique symbol = Symbol.for('paper-digest.smtp.bodyStarted');

type SendCallback = (err: Error | null, info?: unknown) => void;
interface SendState {
  dataSent: boolean;
  bodyStarted: boolean;
  /** The message is one Buffer: SMTPConnection.send() hands it to the data stream in one write(), then end(). */
  whole: boolean;
}
/** What the fast path reads and writes of an SMTPConnection (checked at install and per send). */
interface ConnectionInternals {
  send(envelope: unknown, message: unknown, done: SendCallback): void;
  _createSendStream(callback: SendCallback): NodeJS.ReadableStream;
  _actionSMTPStream(str: string, callback: SendCallback): void;
  _socket: Socket | false;
  _responseActions: Array<(str: string) => void>;
  _currentDataStream: unknown;
  options: { lmtp?: boolean; debug?: boolean };
  logger: { info(meta: object, format: string, ...args: unknown[]): void };
}

const CURRENT = Symbol('paper-digest.smtp.currentSend');
const INSTALLED = Symbol.for('paper-digest.smtp.dataPhaseWatch');

/** Patches SMTPConnection once; later calls do nothing. */
export function installDataPhaseWatch(): void {
  const proto = (SMTPConnection as unknown as { prototype: ConnectionInternals & Record<symbol, unknown> }).prototype;
  if (proto[INSTALLED]) return;
  if (typeof proto.send !== 'function' || typeof proto._createSendStream !== 'function' || typeof proto._actionSMTPStream !== 'function') {
    throw new AppError(
      'SMTP_INTERNALS_CHANGED',
      'nodemailer no longer has SMTPConnection.send/_createSendStream/_actionSMTPStream: cannot tell a lost answer from a failed send (see src/mail/data-phase.ts)',
    );
  }
  const send = proto.send;
  const createSendStream = proto._createSendStream;
  proto.send = function (this: ConnectionInternals & Record<symbol, unknown>, envelope, message, done) {
    const state: SendState = { dataSent: false, bodyStarted: false, whole: Buffer.isBuffer(message) };
    this[CURRENT] = state;
    send.call(this, envelope, message, (err, info) => {
      if (err && state.dataSent) (err as unknown as Record<symbol, boolean>)[DATA_SENT] = true;
      if (err && state.bodyStarted) (err as unknown as Record<symbol, boolean>)[BODY_STARTED] = true;
      done(err, info);
    });
  };
  proto._createSendStream = function (this: ConnectionInternals & Record<symbol, unknown>, callback) {
    const state = this[CURRENT] as SendState | undefined;
    if (state?.whole && !this.options.lmtp && !this.options.debug && this._socket && Array.isArray(this._responseActions)) {
      // The answer to the final ".", queued as SMTPConnection's own _createSendStream queues it.
      this._responseActions.push((str) => this._actionSMTPStream(str, callback));
      const body = new WholeMessageBody(this, this._socket, state);
      this._currentDataStream = body;
      state.bodyStarted = true;
      return body as unknown as NodeJS.ReadableStream;
    }
    const stream = createSendStream.call(this, callback);
    (stream as unknown as { _transform: typeof dotStuffTransform })._transform = dotStuffTransform;
    if (state) state.bodyStarted = true;
    stream.once('end', () => {
      if (state) state.dataSent = true;
    });
    return stream;
  };
  proto[INSTALLED] = true;
}

const CR = 0x0d;
const LF = 0x0a;
// The terminator after the message's last byte, as nodemailer's DataStream._flush writes it.
const AFTER_LF = Buffer.from('.\r\n');
const AFTER_CR = Buffer.from('\n.\r\n');
const AFTER_OTHER = Buffer.from('\r\n.\r\n');

/**
 * Stands in for SMTPConnection's data stream when the message is one Buffer. send() calls write(message)
 * once, then end(), and reads outByteCount for its result; close() calls unpipe(). The bytes are the data
 * stream's: dotStuffMessage (the message itself when there is nothing to stuff), then the same
 * terminator. DATA_SENT is set where the stream's 'end' set it, or later but never after the relay can
 * have the terminator (see the header).
 */
class WholeMessageBody {
  inByteCount = 0;
  outByteCount = 0;
  private terminator: Buffer = AFTER_OTHER;
  /** close() detached us: nothing more is written or marked. */
  private detached = false;
  private onDrain: (() => void) | undefined;

  constructor(
    private readonly conn: ConnectionInternals,
    private readonly socket: Socket,
    private readonly state: SendState,
  ) {}

  write(message: Buffer): boolean {
    if (this.detached) return false;
    const body = dotStuffMessage(message);
    const last = message.length > 0 ? message[message.length - 1] : undefined;
    const terminator = last === LF ? AFTER_LF : last === CR ? AFTER_CR : AFTER_OTHER;
    this.terminator = terminator;
    this.inByteCount = message.length;
    this.outByteCount = body.length + terminator.length;
    const socket = this.socket;
    if ((socket as { encrypted?: boolean }).encrypted === true) {
      // TLS: as the pipe did (its write reports come a loop turn late, see the header).
      if (body.length > 0 && !socket.write(body) && socket.writableLength > 0) {
        if (socket.destroyed || socket.writableEnded) return false; // not written: the failure reaches send()
        this.onDrain = () => this.terminate();
        socket.once('drain', this.onDrain);
        return false;
      }
      if (socket.destroyed || socket.writableEnded) return false;
      this.terminate();
      return false;
    }
    // Plain TCP: one write; marked once the kernel has taken all of it (see the header).
    socket.cork();
    if (body.length > 0) socket.write(body);
    socket.write(terminator, (err?: Error | null) => {
      if (!err) this.sent();
    });
    socket.uncork();
    if (!socket.destroyed && socket.writableLength === 0) this.sent();
    return false;
  }

  end(): void {}

  /** SMTPConnection.close(): the message can no longer go out on this connection. */
  unpipe(): void {
    this.detached = true;
    if (this.onDrain) this.socket.off('drain', this.onDrain);
  }

  /** TLS: the body has been taken; hand over the terminator. */
  private terminate(): void {
    if (this.detached) return;
    this.socket.write(this.terminator);
    this.sent();
  }

  private sent(): void {
    if (this.detached || this.state.dataSent) return;
    this.state.dataSent = true;
    if (this.conn._currentDataStream === this) this.conn._currentDataStream = false;
    this.conn.logger.info(
      { tnx: 'message', inByteCount: this.inByteCount, outByteCount: this.outByteCount },
      '<%s bytes encoded mime message (source size %s bytes)>',
      this.outByteCount,
      this.inByteCount,
    );
  }
}

/** Marks `err` with how far the send in flight on `connection` got (for a failure not reported by send()). */
export function markProgress(connection: object, err: Error): Error {
  const state = (connection as Record<symbol, unknown>)[CURRENT] as SendState | undefined;
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
