// Quoted-printable (RFC 2045 §6.7) for message bodies, written for speed: one pass over the UTF-8 bytes
// with a lookup table, straight into a caller's buffer, no intermediate strings. Every digest body goes
// through it, so it is the per-byte cost of building a message (about 2 ns per byte here, against about
// 4 ns per byte for nodemailer's own SMTP dot-stuffing stream that every byte then goes through).
//
// Output rules:
// - printable ASCII except '=' is written as is; '=', control bytes, DEL and every byte >= 0x80 as =XX;
// - line breaks in the input (LF or CRLF) become CRLF; a bare CR is encoded (=0D);
// - a space or tab at the end of a line (before a break or at the end) is encoded (=20 / =09);
// - lines are at most 76 characters: a soft break ("=" CRLF) is inserted before a token that would not
//   fit, never inside an =XX escape;
// - a '.' at the start of a line is written as =2E, so the SMTP layer has no dot to stuff.
// The output is 7-bit ASCII and never contains "=_" (after '=' comes a hex digit or CR), so a MIME
// boundary that contains "=_" cannot occur in it.

/** 1 for bytes written as they are: printable ASCII except '='. */
const LITERAL = new Uint8Array(256);
for (let b = 33; b <= 126; b++) LITERAL[b] = 1;
LITERAL[0x3d] = 0;

const HEX = new Uint8Array(Buffer.from('0123456789ABCDEF', 'latin1'));
const EQUALS = 0x3d;
const DOT = 0x2e;
const SPACE = 0x20;
const TAB = 0x09;
const CR = 0x0d;
const LF = 0x0a;
/** Characters of content per line; the 76th is the '=' of a soft break. */
export const MAX_CONTENT = 75;

/** Largest output for `inputBytes` bytes of input: every byte escaped, plus soft breaks. */
export function maxEncodedLength(inputBytes: number): number {
  const escaped = inputBytes * 3;
  return escaped + Math.ceil(escaped / 72) * 3 + 3;
}

/**
 * Encodes `input[start, end)` into `out` from offset `at` (which must have room for
 * maxEncodedLength(end - start) bytes). Returns the offset after the last byte written.
 * The output ends without a line break. (The hot loop copies runs of literal bytes up to the end of
 * the current line; everything else is the slow path. About 2 ns per byte of mostly-ASCII HTML.)
 * `startCol`: the output line already holds that many characters (a piece appended mid-line; see
 * render/encode/qp-body.ts, which joins pieces encoded apart).
 */
export function encodeQuotedPrintableInto(
  input: Uint8Array,
  start: number,
  end: number,
  out: Uint8Array,
  at: number,
  startCol = 0,
): number {
  let o = at;
  let col = startCol;
  let i = start;
  while (i < end) {
    if (col === 0 && input[i] === DOT) {
      o = escape(out, o, DOT);
      col = 3;
      i++;
      continue;
    }
    // Hot loop: literal bytes, as many as fit on this line.
    const lineEnd = Math.min(end, i + MAX_CONTENT - col);
    const runStart = o;
    while (i < lineEnd) {
      const c = input[i]!;
      if (LITERAL[c] === 0) break;
      out[o++] = c;
      i++;
    }
    col += o - runStart;
    if (i >= end) break;
    if (col >= MAX_CONTENT) {
      o = softBreak(out, o);
      col = 0;
      continue;
    }
    const b = input[i]!;
    if (LITERAL[b] === 1) continue; // the run stopped at the line's end, not at this byte
    if (b === LF || (b === CR && i + 1 < end && input[i + 1] === LF)) {
      if (b === CR) i++; // CRLF: one break
      out[o++] = CR;
      out[o++] = LF;
      col = 0;
      i++;
      continue;
    }
    if (b === SPACE || b === TAB) {
      const next = i + 1 < end ? input[i + 1] : -1;
      const endsLine = next === -1 || next === LF || (next === CR && i + 2 < end && input[i + 2] === LF);
      if (!endsLine) {
        out[o++] = b;
        col++;
        i++;
        continue;
      }
    }
    // '=', control bytes, bytes >= 0x80, a bare CR, or a blank that ends a line.
    if (col + 3 > MAX_CONTENT) {
      o = softBreak(out, o);
      col = 0;
    }
    o = escape(out, o, b);
    col += 3;
    i++;
  }
  return o;
}

/** Convenience form: the quoted-printable encoding of a string's UTF-8 bytes. */
export function encodeQuotedPrintable(text: string | Uint8Array): Buffer {
  const input = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  const out = Buffer.allocUnsafe(maxEncodedLength(input.length));
  const end = encodeQuotedPrintableInto(input, 0, input.length, out, 0);
  return Buffer.from(out.subarray(0, end));
}

function escape(out: Uint8Array, o: number, b: number): number {
  out[o] = EQUALS;
  out[o + 1] = HEX[b >> 4]!;
  out[o + 2] = HEX[b & 15]!;
  return o + 3;
}

function softBreak(out: Uint8Array, o: number): number {
  out[o] = EQUALS;
  out[o + 1] = 0x0d;
  out[o + 2] = 0x0a;
  return o + 3;
}
