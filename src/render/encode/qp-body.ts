// A message body in quoted-printable, put together from pieces encoded apart: pieces that are the same
// for everyone who gets a paper (its card) are encoded once per run and reused as bytes; per message only
// the reader's own pieces (their links, their numbers, the shell) are encoded (render/digest-email.ts).
//
// Joining encoded pieces is exact because the encoder's only state is the output column:
// - a shared piece is encoded once from column 0 behind a soft line break ("=" CRLF, which decodes to
//   nothing), so it can follow any column: joined at column 0 the break is left out (subarray(3)), which
//   is byte for byte what encoding it there would give; joined mid-line the break ends that line;
// - a reader's piece is encoded from the column the body has reached (encodeQuotedPrintableInto's
//   startCol), so its lines stay within 76 characters too;
// - the column after every piece is known (after a shared piece: fixed, computed once).
// A piece's last blank is escaped (=20) even when the next piece goes on with the line: one harmless
// escape per piece, which a decoder reads as the same space.
import { encodeQuotedPrintableInto, MAX_CONTENT, maxEncodedLength } from '../../mail/quoted-printable.ts';
import { ArenaWriter } from './arena.ts';

export { ArenaPool } from './arena.ts';

const CR = 0x0d;
const LF = 0x0a;
const EQUALS = 0x3d;
const DOT = 0x2e;
const SOFT_BREAK = Buffer.from('=\r\n', 'latin1');
const CRLF_BYTES = Buffer.from('\r\n', 'latin1');

/** A piece encoded once, to be joined into many bodies. */
export interface QpSegment {
  /** "=" CRLF, then the piece encoded from column 0. */
  bytes: Buffer;
  /** The same without the soft break (for column 0): made once, as a Buffer view costs ~1 µs to make. */
  atLineStart: Buffer;
  /** Output column after the piece (when joined after the soft break). */
  endCol: number;
  /** UTF-8 bytes of the piece before encoding (what a mail client shows: the clipping size counts these). */
  textBytes: number;
}

/** CRLF and `seg` as written at a line's start: what QpBodyWriter.addLineThen copies. */
export function leadSegment(seg: QpSegment): Buffer {
  return Buffer.concat([CRLF_BYTES, seg.atLineStart]);
}

export function encodeSegment(text: string): QpSegment {
  const input = Buffer.from(text, 'utf8');
  const out = Buffer.allocUnsafe(SOFT_BREAK.length + maxEncodedLength(input.length));
  SOFT_BREAK.copy(out, 0);
  const end = encodeQuotedPrintableInto(input, 0, input.length, out, SOFT_BREAK.length);
  // Its own copy at the exact size: the scratch above is up to 3× larger.
  const bytes = Buffer.from(out.subarray(0, end));
  return { bytes, atLineStart: bytes.subarray(SOFT_BREAK.length), endCol: columnAfter(bytes, 0, bytes.length, 0), textBytes: input.length };
}

/**
 * A reader's text encoded for one column, to be joined wherever the body is at that column (a digest's
 * matched topics, the same on many of its cards: render/topic-runs.ts).
 */
export interface QpRun {
  /** The column it was encoded from. */
  col: number;
  bytes: Buffer;
  endCol: number;
  textBytes: number;
}

export function encodeQpRun(text: string, col: number): QpRun {
  const input = Buffer.from(text, 'utf8');
  const out = Buffer.allocUnsafe(maxEncodedLength(input.length));
  const end = encodeQuotedPrintableInto(input, 0, input.length, out, 0, col);
  return { col, bytes: out.subarray(0, end), endCol: columnAfter(out, 0, end, col), textBytes: input.length };
}

/** The output column after bytes [from, to) written starting at column `startCol`. */
function columnAfter(b: Uint8Array, from: number, to: number, startCol: number): number {
  for (let i = to - 1; i >= from; i--) if (b[i] === LF && i > from && b[i - 1] === CR) return to - i - 1;
  return startCol + (to - from);
}

/** Quoted-printable body being put together: shared segments by reference, own text encoded here. */
export class QpBodyWriter extends ArenaWriter {
  /** UTF-8 bytes of the text so far (before encoding). */
  textBytes = 0;
  private col = 0;

  addSegment(seg: QpSegment): void {
    const b = this.col === 0 ? seg.atLineStart : seg.bytes;
    if (b.length === 0) return;
    this.pushUncounted(b);
    this.textBytes += seg.textBytes;
    this.col = seg.endCol;
  }

  /** The output column the next piece starts at. */
  get column(): number {
    return this.col;
  }

  /** A run encoded for the current column (encodeQpRun with `column`): the caller checks run.col. */
  addRun(run: QpRun): void {
    this.pushUncounted(run.bytes);
    this.textBytes += run.textBytes;
    this.col = run.endCol;
  }

  /**
   * A line break, then `seg` at the start of the new line, as one copy (addText('\n') then addSegment(seg)
   * write the same). `led` is CRLF followed by seg.atLineStart (leadSegment), made once with the segment.
   */
  addLineThen(seg: QpSegment, led: Buffer): void {
    this.pushUncounted(led);
    this.textBytes += 1 + seg.textBytes;
    this.col = seg.endCol;
  }

  /**
   * A value known to be printable ASCII without '=' (a number, a canonical link: reader-shape.ts
   * plainSlots), written as encodeQuotedPrintableInto would write it, without its pass over every byte:
   * copied whole, with its soft breaks and the =2E of a '.' that starts a line put in after. (~150 links
   * of ~75 characters in a broad digest's text part; each was copied to the arena, then encoded there.)
   */
  addPlain(value: string): void {
    const n = value.length;
    if (n === 0) return;
    const a = this.space(maxEncodedLength(n));
    const start = this.used;
    let p = start;
    let col = this.col;
    if (col >= MAX_CONTENT) {
      p = escape3(a, p, EQUALS, CR, LF);
      col = 0;
    }
    // Written whole, then opened where a soft break or a line-leading dot's escape goes (one per line of
    // it). Written a line at a time instead, a link (a cons string) was sliced, which flattens it first:
    // a new string and a copy per link.
    let end = p + a.write(value, p, 'latin1');
    for (let left = n; ; ) {
      if (col === 0 && a[p] === DOT) {
        a.copyWithin(p + 3, p + 1, end);
        p = escape3(a, p, EQUALS, 0x32, 0x45);
        end += 2;
        col = 3;
        if (--left === 0) break;
      }
      const room = MAX_CONTENT - col;
      if (left <= room) {
        col += left;
        break;
      }
      p += room;
      left -= room;
      a.copyWithin(p + 3, p, end);
      p = escape3(a, p, EQUALS, CR, LF);
      end += 3;
      col = 0;
    }
    this.textBytes += n;
    this.col = col;
    this.wrote(start, end);
  }

  /**
   * Encodes the reader's own text at the current column. A long text (a digest's shell is ~15 KB) goes in
   * pieces of at most TEXT_PIECE characters, cut where the encoder keeps no state (after '>' or a line
   * break when there is one, never after a CR, a blank or half a surrogate pair), so the bytes are those
   * of encoding it whole, and each piece's worst case fits a pooled arena.
   */
  addText(text: string): void {
    if (text.length <= TEXT_PIECE) {
      this.addPiece(text);
      return;
    }
    for (let from = 0; from < text.length; ) {
      const to = from + TEXT_PIECE >= text.length ? text.length : cutAt(text, from, from + TEXT_PIECE);
      this.addPiece(text.slice(from, to));
      from = to;
    }
  }

  private addPiece(text: string): void {
    if (text === '') return;
    const max = 3 * text.length; // UTF-8 bytes per UTF-16 unit, at most
    const a = this.space(max + maxEncodedLength(max));
    const inAt = a.length - max; // the UTF-8 input at the arena's end, the output from `used`
    const n = a.write(text, inAt, 'utf8');
    const start = this.used;
    const end = encodeQuotedPrintableInto(a, inAt, inAt + n, a, start, this.col);
    if (end > inAt) throw new Error('quoted-printable arena overrun'); // cannot happen: need covers the worst case
    this.textBytes += n;
    this.col = columnAfter(a, start, end, this.col);
    this.wrote(start, end);
  }
}

/** Three bytes at `o` (a soft break, an escape); returns the offset after them. */
function escape3(a: Buffer, o: number, x: number, y: number, z: number): number {
  a[o] = x;
  a[o + 1] = y;
  a[o + 2] = z;
  return o + 3;
}

/** Characters encoded at a time: worst case 3 UTF-8 bytes each, escaped (×3): ~12.7 KB of scratch. */
const TEXT_PIECE = 1024;

/** Where to end a piece of `text` that starts at `from`, at or before `max` (see addText). */
function cutAt(text: string, from: number, max: number): number {
  for (let i = max; i > from + TEXT_PIECE / 2; i--) {
    const c = text.charCodeAt(i - 1);
    if (c === 0x3e /* > */ || c === 0x0a) return i;
  }
  let i = max;
  for (;;) {
    const c = text.charCodeAt(i - 1);
    const unsafe = c === 0x0d || c === 0x20 || c === 0x09 || (c >= 0xd800 && c <= 0xdbff);
    if (!unsafe || i - 1 <= from) return i;
    i--;
  }
}

/**
 * Decodes quoted-printable (soft breaks removed, =XX decoded, CRLF back to LF) into a string: for
 * readers of a rendered email's .html/.text (tests, `digest preview`), never on the send path.
 */
export function decodeQuotedPrintable(parts: readonly Uint8Array[]): string {
  const input = Buffer.concat(parts);
  const out = Buffer.allocUnsafe(input.length);
  let o = 0;
  for (let i = 0; i < input.length; i++) {
    const c = input[i]!;
    if (c === 0x3d) {
      if (input[i + 1] === CR && input[i + 2] === LF) {
        i += 2;
        continue;
      }
      out[o++] = parseInt(String.fromCharCode(input[i + 1]!, input[i + 2]!), 16);
      i += 2;
    } else if (c === CR && input[i + 1] === LF) {
      out[o++] = LF;
      i++;
    } else {
      out[o++] = c;
    }
  }
  return out.toString('utf8', 0, o);
}
