// Builds a digest's complete MIME message as bytes, ready for the SMTP pool.
// nodemailer's own composer redoes, for every message, work that is the same for everyone (address and
// header formatting, transfer-encoding detection over the whole body, its quoted-printable in strings);
// here the constant pieces are made once per builder and each message costs two passes of the fast
// quoted-printable encoder over its bodies plus a few short header lines.
//
// Shape: From, To, Subject (RFC 2047 only when non-ASCII), Message-ID, Date, MIME-Version,
// List-Unsubscribe (ONE header: <https…>, <mailto:…>), List-Unsubscribe-Post, any extra headers,
// then multipart/alternative with text/plain and text/html, UTF-8; the text quoted-printable, the HTML
// quoted-printable or, for digests, 7bit (ASCII with references, laid out by render/encode/html-body.ts).
// CRLF line endings; every line, header or body, is under 998 bytes (quoted-printable bodies: at most 76).
import { randomBytes } from 'node:crypto';
import { AppError, errorMessage } from '../errors.ts';
import { encodeText, foldHeader, formatAddresses, parseAddressList, type ParsedAddress } from './headers.ts';
import { encodeQuotedPrintableInto, maxEncodedLength } from './quoted-printable.ts';
import type { OutgoingMail } from './types.ts';

export interface RawMessage {
  /** The whole message: headers, blank line, body. */
  raw: Buffer;
  /** SMTP envelope: the bare addresses. */
  envelope: { from: string; to: string[] };
  /** Message-ID without angle brackets. */
  messageId: string;
}

/** What the mailer needs to turn a mail into bytes (ours; nodemailer's MailComposer would do, slower). */
export interface MessageBuilder {
  /**
   * `messageId` without angle brackets; `date` becomes the Date header. `room`: where a digest's message
   * (bodies already encoded) is written, given its exact size; by default a new Buffer.
   */
  build(mail: OutgoingMail, messageId: string, date: Date, room?: (size: number) => Buffer): RawMessage;
}

/** A bare, plain ASCII address: no display name, nothing to quote or encode. */
const PLAIN_ADDRESS = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9.-]+$/;
/** Message-ID / URL tokens: no spaces, no angle brackets, no control characters. */
const ID_TOKEN = /^[\x21-\x3b\x3d\x3f-\x7e]+$/;
/** An RFC 5322 header field name. */
const HEADER_NAME = /^[\x21-\x39\x3b-\x7e]+$/;
/** Header lines longer than this are folded (RFC 5322 asks for 78; the hard limit is 998). */
const FOLD_AT = 76;
/** Headers this builder writes itself: a caller's extra header may not repeat them. */
const OWN_HEADERS = new Set([
  'from', 'to', 'subject', 'message-id', 'date', 'mime-version', 'list-unsubscribe', 'list-unsubscribe-post',
  'content-type', 'content-transfer-encoding',
]);

// Hot path (build() runs once per message): its closures share the per-builder buffers, a named exception
// of tests/unit/function-budget.test.ts; split it only with an A/B run beside it (npm run bench:ab).
// Measured: BENCHMARKS.md § Why the code is shaped this way, the function budget's hot loops.
export function createMessageBuilder(opts: { from: string }): MessageBuilder {
  let fromParsed: ParsedAddress[];
  try {
    fromParsed = parseAddressList(opts.from);
  } catch (e) {
    throw new AppError('MAIL_FROM_INVALID', `MAIL_FROM: "${opts.from}" has no email address in it (${errorMessage(e)})`);
  }
  if (fromParsed.length !== 1) throw new AppError('MAIL_FROM_INVALID', `MAIL_FROM: "${opts.from}" must be one address`);
  const fromAddress = fromParsed[0]!.address;
  // Constant for every message this builder makes.
  const fromLine = foldHeader(`From: ${formatAddresses(fromParsed)}`, FOLD_AT);
  // "=_" cannot occur in quoted-printable output, and no line of a 7bit HTML body starts with '-'
  // (render/encode/html-body.ts), so this boundary cannot collide with a body.
  const boundary = `=_pd_${randomBytes(12).toString('hex')}`;
  const partHeaders = (type: string, transfer = 'quoted-printable') =>
    `--${boundary}\r\nContent-Type: ${type}; charset=utf-8\r\nContent-Transfer-Encoding: ${transfer}\r\n\r\n`;
  const textStart = Buffer.from(`MIME-Version: 1.0\r\n`, 'latin1');
  const contentType = Buffer.from(`Content-Type: multipart/alternative;\r\n boundary="${boundary}"\r\n\r\n`, 'latin1');
  const textPart = Buffer.from(partHeaders('text/plain'), 'latin1');
  const htmlPart = Buffer.from(`\r\n${partHeaders('text/html')}`, 'latin1');
  const htmlPart7bit = Buffer.from(`\r\n${partHeaders('text/html', '7bit')}`, 'latin1');
  const closing = Buffer.from(`\r\n--${boundary}--\r\n`, 'latin1');
  const fixedBytes = textStart.length + contentType.length + textPart.length + htmlPart.length + closing.length;

  // Scratch space reused by every message (grown when a bigger one comes): the bodies' UTF-8 bytes,
  // and the message before it is copied out at its exact size.
  // (The encoder reads and writes through plain Uint8Array views: one element kind, faster loops.)
  let input = Buffer.allocUnsafe(64 * 1024);
  let inputView = viewOf(input);
  let output = Buffer.allocUnsafe(256 * 1024);
  let outputView = viewOf(output);
  let dateSecond = -1;
  let dateLine = '';

  const dateHeader = (date: Date): string => {
    const second = Math.floor(date.getTime() / 1000);
    if (second !== dateSecond) {
      dateSecond = second;
      dateLine = `Date: ${date.toUTCString().replace(/GMT$/, '+0000')}\r\n`;
    }
    return dateLine;
  };

  const headerBlock = (mail: OutgoingMail, messageId: string, date: Date): { text: string; to: string[] } => {
    const recipient = recipientOf(mail.to);
    let h = `${fromLine}\r\n${recipient.header}\r\n`;
    h += `${foldHeader(`Subject: ${encodeText(oneLine(mail.subject))}`, FOLD_AT)}\r\n`;
    h += `Message-ID: <${messageId}>\r\n`;
    h += dateHeader(date);
    if (mail.listUnsubscribe) h += listUnsubscribeHeaders(mail.listUnsubscribe);
    for (const [name, value] of Object.entries(mail.headers ?? {})) h += extraHeader(name, value);
    return { text: h, to: recipient.envelope };
  };

  return {
    build(mail, messageId, date, room) {
      if (!ID_TOKEN.test(messageId) || !messageId.includes('@')) {
        throw new AppError('MAIL_MESSAGE_INVALID', `messageId: "${messageId}" is not an id@domain token`);
      }
      const head = headerBlock(mail, messageId, date);
      const headBytes = Buffer.byteLength(head.text, 'utf8');
      const encoded = mail.encoded;
      if (encoded) {
        // Bodies already encoded (digests): only copied. Note: reading mail.html here would decode them.
        const htmlHead = encoded.htmlTransfer === '7bit' ? htmlPart7bit : htmlPart;
        let size = headBytes + fixedBytes - htmlPart.length + htmlHead.length;
        for (const b of encoded.text) size += b.length;
        for (const b of encoded.html) size += b.length;
        const raw = room ? room(size) : Buffer.allocUnsafe(size);
        let o = raw.write(head.text, 0, 'utf8');
        o += textStart.copy(raw, o);
        o += contentType.copy(raw, o);
        o += textPart.copy(raw, o);
        // TypedArray set: cheaper per call than Buffer#copy for the many short parts of a body.
        for (const b of encoded.text) {
          raw.set(b, o);
          o += b.length;
        }
        o += htmlHead.copy(raw, o);
        for (const b of encoded.html) {
          raw.set(b, o);
          o += b.length;
        }
        closing.copy(raw, o);
        return { raw, envelope: { from: envelopeFromOf(mail, fromAddress), to: head.to }, messageId };
      }
      // At most 3 UTF-8 bytes per UTF-16 unit: size the scratch by that, and learn the real length from
      // the write (one pass over each body instead of a length pass and a write pass).
      const inputNeeded = 3 * Math.max(mail.text.length, mail.html.length);
      if (input.length < inputNeeded) {
        input = Buffer.allocUnsafe(inputNeeded);
        inputView = viewOf(input);
      }
      const outputNeeded = headBytes + fixedBytes + maxEncodedLength(3 * mail.text.length) + maxEncodedLength(3 * mail.html.length);
      if (output.length < outputNeeded) {
        output = Buffer.allocUnsafe(outputNeeded);
        outputView = viewOf(output);
      }

      let o = output.write(head.text, 0, 'utf8');
      o += textStart.copy(output, o);
      o += contentType.copy(output, o);
      o += textPart.copy(output, o);
      const textBytes = input.write(mail.text, 0, 'utf8');
      o = encodeQuotedPrintableInto(inputView, 0, textBytes, outputView, o);
      o += htmlPart.copy(output, o);
      const htmlBytes = input.write(mail.html, 0, 'utf8');
      o = encodeQuotedPrintableInto(inputView, 0, htmlBytes, outputView, o);
      o += closing.copy(output, o);
      return { raw: Buffer.from(output.subarray(0, o)), envelope: { from: envelopeFromOf(mail, fromAddress), to: head.to }, messageId };
    },
  };
}

/** The To header and the envelope recipients; a bare ASCII address (every subscriber's) is the fast path. */
function recipientOf(to: string): { header: string; envelope: string[] } {
  if (PLAIN_ADDRESS.test(to)) return { header: `To: ${to}`, envelope: [to] };
  const list = /[\r\n]/.test(to) ? [] : parsedOrEmpty(to);
  if (list.length === 0) {
    throw new AppError('MAIL_ADDRESS_INVALID', `to: "${to.slice(0, 80)}" is not an email address`);
  }
  return { header: foldHeader(`To: ${formatAddresses(list)}`, FOLD_AT), envelope: list.map((a) => a.address) };
}

function parsedOrEmpty(value: string): ParsedAddress[] {
  try {
    return parseAddressList(value);
  } catch {
    return [];
  }
}

/** Extra headers that hold addresses are written as addresses; any other is unstructured text. */
const ADDRESS_HEADERS = new Set(['reply-to', 'sender', 'cc']);

/** RFC 2369 + RFC 8058: one List-Unsubscribe header with both URIs, and the one-click marker. */
function listUnsubscribeHeaders(lu: { url: string; mailto?: string | undefined }): string {
  if (!ID_TOKEN.test(lu.url)) throw new AppError('MAIL_MESSAGE_INVALID', `listUnsubscribe.url: "${lu.url.slice(0, 80)}" is not a URL`);
  const targets = [`<${lu.url}>`];
  if (lu.mailto !== undefined) {
    if (!PLAIN_ADDRESS.test(lu.mailto)) {
      throw new AppError('MAIL_MESSAGE_INVALID', `listUnsubscribe.mailto: "${lu.mailto}" is not a plain email address`);
    }
    targets.push(`<mailto:${lu.mailto}?subject=unsubscribe>`);
  }
  // Fold after each comma when the line is long: a URI itself is never broken.
  const oneLineHeader = `List-Unsubscribe: ${targets.join(', ')}`;
  const header = oneLineHeader.length <= FOLD_AT ? oneLineHeader : `List-Unsubscribe: ${targets.join(',\r\n ')}`;
  return `${header}\r\nList-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n`;
}

function extraHeader(name: string, value: string): string {
  if (!HEADER_NAME.test(name) || OWN_HEADERS.has(name.toLowerCase())) {
    throw new AppError('MAIL_MESSAGE_INVALID', `headers: "${name}" cannot be set as an extra header`);
  }
  let encoded: string;
  if (ADDRESS_HEADERS.has(name.toLowerCase())) {
    const list = parsedOrEmpty(oneLine(value));
    if (list.length === 0) throw new AppError('MAIL_MESSAGE_INVALID', `headers: ${name}: "${value.slice(0, 80)}" is not an email address`);
    encoded = formatAddresses(list);
  } else encoded = encodeText(oneLine(value));
  return `${foldHeader(`${name}: ${encoded}`, FOLD_AT)}\r\n`;
}

/** MAIL FROM: the caller's envelope sender (a VERP address) when given, else MAIL_FROM's address. */
function envelopeFromOf(mail: OutgoingMail, fromAddress: string): string {
  if (mail.envelopeFrom === undefined) return fromAddress;
  if (!PLAIN_ADDRESS.test(mail.envelopeFrom)) {
    throw new AppError('MAIL_MESSAGE_INVALID', `envelopeFrom: "${mail.envelopeFrom.slice(0, 80)}" is not a plain email address`);
  }
  return mail.envelopeFrom;
}

function viewOf(b: Buffer): Uint8Array {
  return new Uint8Array(b.buffer, b.byteOffset, b.length);
}

/** Header values are one line: CR/LF (header injection) become spaces. */
function oneLine(value: string): string {
  return value.replace(/[\r\n]+/g, ' ');
}
