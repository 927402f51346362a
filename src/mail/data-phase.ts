// The DATA phase of one send: writing the message after the relay's 354, and knowing how far it got.
//
// A dropped connection or a timeout looks the same at every stage of a send, yet before the final
// CRLF.CRLF is out the relay cannot have accepted the message (a retry is safe), and after it the relay
// may have queued it with only its answer lost (a retry may be a second copy). So each send keeps its
// progress: BODY_STARTED once the relay said 354 and the first byte is about to be written, DATA_SENT once
// every byte, terminator included, was handed to the socket; the error that ends the send is marked with
// both (smtp-connection.ts). The mark errs on the safe side: bytes handed to the socket may never leave,
// so a few sends the relay never saw are called ambiguous; an error without DATA_SENT came before the
// terminator was written, so the relay cannot have the message.
//
// The bytes are SMTP's transparency (dot-stuffing.ts: the message itself when nothing needs stuffing)
// and the terminator. Over plain TCP in one write (cork, body, terminator, uncork); DATA_SENT once the
// kernel took all of it, at once or in the write's callback, which runs before any later read of the
// relay's answer. Over TLS, body then terminator once the socket took the body: TLS reports a write a
// loop turn late, after a poll that may already have read the relay's goodbye.
import type { Socket } from 'node:net';
import { dotStuffMessage } from './dot-stuffing.ts';

/** Set (true) on an error that ended a send after the whole message, terminator included, was written. */
export const DATA_SENT: unique symbol = Symbol.for('paper-digest.smtp.dataSent');
/**
 * Set (true) on an error that ended a send after the relay said 354 and the message started to go out.
 * Without it not a byte of the message was written: the pool may send it again over a fresh connection.
 */
export const BODY_STARTED: unique symbol = Symbol.for('paper-digest.smtp.bodyStarted');

export interface SendProgress {
  bodyStarted: boolean;
  dataSent: boolean;
}

export function newSendProgress(): SendProgress {
  return { bodyStarted: false, dataSent: false };
}

/** Marks `err` with how far the send got; returns it. */
export function markProgress(progress: SendProgress, err: Error): Error {
  const marks = err as unknown as Record<symbol, boolean>;
  if (progress.dataSent) marks[DATA_SENT] = true;
  if (progress.bodyStarted) marks[BODY_STARTED] = true;
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

const CR = 0x0d;
const LF = 0x0a;
// The terminator after the message's last byte: CRLF.CRLF, sharing the line end the message has.
const AFTER_LF = Buffer.from('.\r\n');
const AFTER_CR = Buffer.from('\n.\r\n');
const AFTER_OTHER = Buffer.from('\r\n.\r\n');

/** Writes the message (dots stuffed, line ends CRLF) and its terminator; `progress` follows the writes. */
export function writeMessage(socket: Socket, message: Buffer, progress: SendProgress): void {
  const body = dotStuffMessage(message);
  const last = message.length > 0 ? message[message.length - 1] : undefined;
  const terminator = last === LF ? AFTER_LF : last === CR ? AFTER_CR : AFTER_OTHER;
  progress.bodyStarted = true;
  if ((socket as { encrypted?: boolean }).encrypted === true) {
    const terminate = () => {
      if (socket.destroyed || socket.writableEnded) return;
      socket.write(terminator);
      progress.dataSent = true;
    };
    if (body.length > 0 && !socket.write(body) && socket.writableLength > 0) socket.once('drain', terminate);
    else terminate();
    return;
  }
  socket.cork();
  if (body.length > 0) socket.write(body);
  socket.write(terminator, (err?: Error | null) => {
    if (!err) progress.dataSent = true;
  });
  socket.uncork();
  if (!socket.destroyed && socket.writableLength === 0) progress.dataSent = true;
}
