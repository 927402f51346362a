// A digest's HTML part as 7bit (RFC 2045 §2.7): pure ASCII in lines of at most 998 octets, sent without
// a transfer encoding. Quoted-printable, which the part used before, turned every '=' of an inline style
// into "=3D" and cut a line every 76 characters: measured on an 18-paper digest (bench/message-bytes.ts),
// 37.3 KB of HTML became 41.0 KB in 776 lines, each of which the relay reads as a line (Postfix reads DATA
// line by line) and our dot-stuffing looks at. As 7bit the same HTML is ~37.5 KB in ~50 lines.
//
// How the HTML is made 7bit without changing what a client shows:
// - every non-ASCII character is a numeric character reference, written `&#0<decimal>;` (the leading zero
//   is legal and no other code makes it: Handlebars writes `&#x3D;`, src/html.ts `&#61;`, so the decoder in
//   html-7bit.ts can tell ours apart and give back exactly the HTML that was encoded);
// - a line break in text or inside an attribute becomes `&#010;` (same meaning: whitespace in text, the
//   same character in an attribute); inside <style> or a comment, where references are not decoded, it
//   stays a line break (CRLF);
// - lines are kept short by turning one SPACE into CRLF, only where HTML treats the two alike: in text
//   (whitespace collapses; no <pre> in our templates) or between a tag's attributes, never inside an
//   attribute value, a comment (Outlook's conditional comments) or <style>. Preferred: a space between two
//   tags, then one in text, then one inside a tag. A line is broken at the first such space past TARGET
//   characters; it may reach HARD (990, under RFC 5322's 998) before a space comes;
// - a break is never put before '.' or '-': no line of the part starts with a dot (nothing for the SMTP
//   layer to stuff; it would still be correct, see src/mail/dot-stuffing.ts) or with "--" (a feed's text
//   can then never form a MIME boundary line, whatever it contains).
// Where that cannot be done (a run of ~230 characters with no usable space, e.g. a long unbroken word,
// or non-ASCII inside <style>), the writer says so (`fallback`) and the renderer sends that part as
// quoted-printable of these same bytes instead: always correct, merely larger.
//
// The pieces are joined as the quoted-printable ones were (qp-body.ts): a paper's shared pieces are laid
// out once per run from column 0 with the spaces of their first line remembered, and at a join the
// first one past the column the body has reached becomes the break (the segment is then copied as two
// views around a CRLF); the reader's own text is laid out from that column.
import { nextState, S_COMMENT, S_RAW, S_TAG, S_TEXT, writeRef } from './html-7bit.ts';
import { ArenaWriter, type ArenaPool } from './arena.ts';
import { encodeQuotedPrintable } from './quoted-printable.ts';
import type { FixedRun } from './html-fixed-run.ts';

/** A line is broken at the first usable space past this column... */
const TARGET = 760;
/** ...and must never be longer than this (RFC 5322: 998 octets before CRLF). */
export const HTML_MAX_LINE = 990;
/** Past this column, the next character may not fit (a reference is up to 11): break first. */
const HARD_CHECK = HTML_MAX_LINE - 12;
/** Past TARGET, a space in text waits this long for a space between tags; one inside a tag, twice that. */
const TEXT_GRACE = 60;
export const CRLF = Buffer.from('\r\n', 'latin1');

/** Kinds of break candidates, best first. */
const K_GAP = 0;
const K_TEXT = 1;
const K_TAG = 2;

/** What the layout carries from one piece to the next. */
export interface Layout {
  col: number;
  state: number;
  /** A tag being read opens <style> or <script>: its content is raw text. */
  rawNext: boolean;
  fallback: boolean;
  /** CRLFs written (each stands for one character: a space, or a line break in <style> or a comment). */
  crlf: number;
  /** UTF-8 bytes of the text encoded. */
  utf8: number;
}

/** A piece encoded once, to be joined into many bodies (see the header). */
export interface HtmlSegment {
  bytes: Buffer;
  /** Length of the first line (up to the first CRLF, or all). */
  firstLine: number;
  /** Column after the piece: endCol when it holds a CRLF, else col + bytes.length. */
  multiline: boolean;
  endCol: number;
  /** Usable spaces of the first line: offset * 4 + kind. */
  breaks: Uint32Array;
  /** The layout state it was encoded from (layoutKey: text state for card pieces); it must be joined so. */
  startKey: number;
  /** It ends in this state. */
  endState: number;
  rawNext: boolean;
  /** Could not be laid out as 7bit (see the header). */
  fallback: boolean;
  /** UTF-8 bytes of the piece before encoding (the decoded HTML's size). */
  textBytes: number;
  /** Bytes as a client reads the HTML: each CRLF counted as the one character it stands for. */
  size: number;
}

/** Largest output for `units` UTF-16 units: `&#065535;` is 9 bytes, plus breaks. */
export function maxOut(units: number): number {
  return units * 9 + 16;
}

/**
 * Encodes `text` into `out` from `o`, laid out from `lay` (updated). Returns the new offset. `first`:
 * when given, the usable spaces met before the first break are pushed to it (offset from `o0`).
 */
export function encodeInto(text: string, out: Buffer, o: number, lay: Layout, first?: number[]): number {
  const o0 = o;
  let { col, state, rawNext } = lay;
  let utf8 = 0;
  let broke = false;
  // The last usable space of this line written by this call (output offset), or -1.
  let cand = -1;
  const n = text.length;
  // (No closures over o, col or cand: captured, they would live in a heap context instead of registers,
  // which measured ~3x slower for this loop.)
  let crlf = 0;
  for (let i = 0; i < n; i++) {
    let c = text.charCodeAt(i);
    // Line about to be too long: break at the last usable space of this call, if any.
    if (col >= HARD_CHECK && cand >= 0) {
      if (col - (o - cand) > HTML_MAX_LINE) lay.fallback = true;
      out.copyWithin(cand + 2, cand + 1, o);
      out[cand] = 0x0d;
      out[cand + 1] = 0x0a;
      crlf++;
      if (!broke && first) {
        const keep = first.findIndex((b) => b >>> 2 >= cand - o0);
        if (keep >= 0) first.length = keep;
      }
      o++;
      col = o - (cand + 2);
      cand = -1;
      broke = true;
    }
    // Hot path: a run of characters that change no state and allow no break (printable ASCII other than
    // the blank and < > " '), copied up to where the line must be looked at again.
    if (c > 0x20 && c < 0x7f && c !== 0x3c && c !== 0x3e && c !== 0x22 && c !== 0x27 && col < HARD_CHECK) {
      const limit = Math.min(n, i + (HARD_CHECK - col));
      let j = i;
      for (;;) {
        out[o++] = c;
        if (++j >= limit) break;
        c = text.charCodeAt(j);
        if (c <= 0x20 || c >= 0x7f || c === 0x3c || c === 0x3e || c === 0x22 || c === 0x27) break;
      }
      utf8 += j - i;
      col += j - i;
      i = j - 1;
      continue;
    }
    if (c === 0x20 && (state === S_TEXT || state === S_TAG)) {
      utf8++;
      // What follows must be known (not '.', '-' or another blank): a piece's last blank is never a break.
      const next = i + 1 < n ? text.charCodeAt(i + 1) : 0x20;
      if (next !== 0x2e && next !== 0x2d && next !== 0x20) {
        const prev = o > o0 ? out[o - 1] : 0;
        const kind = state === S_TAG ? K_TAG : prev === 0x3e && next === 0x3c ? K_GAP : K_TEXT;
        if (col >= dueAt(kind)) {
          if (col > HTML_MAX_LINE) lay.fallback = true;
          crlf++;
          out[o++] = 0x0d;
          out[o++] = 0x0a;
          col = 0;
          cand = -1;
          broke = true;
          continue;
        }
        if (!broke && first) first.push(((o - o0) << 2) | kind);
        cand = o;
      }
      out[o++] = 0x20;
      col++;
      continue;
    }
    if (c < 0x80 && c >= 0x20 && c !== 0x7f) {
      utf8++;
      out[o++] = c;
      col++;
      // States (decodeHtmlBody runs the same machine over the encoded bytes).
      if (c === 0x3c || c === 0x3e || c === 0x22 || c === 0x27) {
        const k = nextState(state, rawNext, c, text, i, o - o0 >= 3 && out[o - 2] === 0x2d && out[o - 3] === 0x2d);
        state = k >> 1;
        rawNext = (k & 1) === 1;
      }
      continue;
    }
    if (c === 0x09) {
      utf8++;
      out[o++] = c;
      col++;
      continue;
    }
    if (state === S_COMMENT || state === S_RAW) {
      // References are not read here: a line break stays one; anything else past ASCII is written as
      // UTF-8 and the part goes as quoted-printable.
      if (c === 0x0a || c === 0x0d) {
        utf8++;
        if (c === 0x0d && text.charCodeAt(i + 1) === 0x0a) {
          i++;
          utf8++;
        }
        if (col > HTML_MAX_LINE) lay.fallback = true;
        crlf++;
        out[o++] = 0x0d;
        out[o++] = 0x0a;
        col = 0;
        cand = -1;
        broke = true;
        continue;
      }
      lay.fallback = true;
      const ch = c >= 0xd800 && c <= 0xdbff && i + 1 < n ? text.slice(i, ++i + 1) : text[i]!;
      const w = out.write(ch, o, 'utf8');
      utf8 += w;
      o += w;
      col += w;
      continue;
    }
    // Control characters (a line break included) and everything past ASCII: a reference.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
      const lo = text.charCodeAt(i + 1);
      if (lo >= 0xdc00 && lo <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (lo - 0xdc00);
        i++;
      }
    }
    if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd; // half a surrogate pair: what UTF-8 encoding makes of it
    utf8 += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
    const start = o;
    o = writeRef(out, o, c);
    col += o - start;
  }
  if (col > HTML_MAX_LINE) lay.fallback = true;
  lay.crlf += crlf;
  lay.utf8 += utf8;
  lay.col = col;
  lay.state = state;
  lay.rawNext = rawNext;
  return o;
}

function dueAt(kind: number): number {
  return kind === K_GAP ? TARGET : kind === K_TEXT ? TARGET + TEXT_GRACE : TARGET + 2 * TEXT_GRACE;
}

/**
 * Encodes a piece once, from column 0 in text state, or in the state a writer's layoutKey names (a piece
 * of the digest's shell that starts inside an attribute value or <style>, see render/shell-html.ts).
 */
export function encodeHtmlSegment(text: string, startKey = S_TEXT * 2): HtmlSegment {
  const scratch = Buffer.allocUnsafe(maxOut(text.length));
  const lay: Layout = { col: 0, state: startKey >> 1, rawNext: (startKey & 1) === 1, fallback: false, crlf: 0, utf8: 0 };
  const first: number[] = [];
  const o = encodeInto(text, scratch, 0, lay, first);
  const bytes = Buffer.from(scratch.subarray(0, o));
  const nl = bytes.indexOf(CRLF);
  return {
    bytes,
    firstLine: nl < 0 ? bytes.length : nl,
    multiline: nl >= 0,
    endCol: lay.col,
    breaks: Uint32Array.from(first),
    startKey,
    endState: lay.state,
    rawNext: lay.rawNext,
    fallback: lay.fallback,
    textBytes: lay.utf8,
    size: o - lay.crlf,
  };
}

/** An HTML body being put together as 7bit: shared segments by reference, own text encoded here. */
export class HtmlBodyWriter extends ArenaWriter {
  /** UTF-8 bytes of the HTML before encoding. */
  textBytes = 0;
  private readonly lay: Layout = { col: 0, state: S_TEXT, rawNext: false, fallback: false, crlf: 0, utf8: 0 };

  /**
   * The HTML's size as a client reads it (references as written, each line break one character): what the
   * clipping size counts, and what htmlWireLength and HtmlSegment.size sum to beforehand.
   */
  get size(): number {
    return this.bytes - this.lay.crlf;
  }
  constructor(pool?: ArenaPool) {
    super(pool);
  }

  /** The layout state a segment joined now must have been encoded from (encodeHtmlSegment's startKey). */
  get layoutKey(): number {
    return this.lay.state * 2 + (this.lay.rawNext ? 1 : 0);
  }

  /** True when the body could not be laid out as 7bit: send it as quoted-printable (encoded()). */
  get fallback(): boolean {
    return this.lay.fallback;
  }

  /** The body for the MIME part, with its transfer encoding. */
  encoded(): { parts: Buffer[]; transfer: '7bit' | 'quoted-printable' } {
    if (!this.lay.fallback) return { parts: this.parts, transfer: '7bit' };
    return { parts: [encodeQuotedPrintable(Buffer.concat(this.parts))], transfer: 'quoted-printable' };
  }

  /**
   * Joins a shared segment. `reserve`: the length of a value that will follow on the segment's last line
   * (addValue): a value has no place to break, so the line is broken in this segment when the value would
   * not fit after it.
   */
  addSegment(seg: HtmlSegment, reserve = 0): void {
    const lay = this.lay;
    this.textBytes += seg.textBytes;
    if (seg.fallback || seg.startKey !== this.layoutKey) lay.fallback = true;
    const col = lay.col;
    const firstLine = seg.firstLine + (seg.multiline ? 0 : reserve);
    let cut = -1;
    if (col + firstLine > TARGET && !lay.fallback) {
      // The first usable space past TARGET (as if the piece were encoded here), or failing that the last
      // one that keeps the line within HARD when the whole first line would not fit.
      let lastFit = -1;
      for (const b of seg.breaks) {
        const at = b >>> 2;
        const kind = b & 3;
        if (col + at > HTML_MAX_LINE) break;
        if (col + at >= dueAt(kind)) {
          cut = at;
          break;
        }
        lastFit = at;
      }
      if (cut < 0 && col + firstLine > HTML_MAX_LINE) {
        if (lastFit >= 0) cut = lastFit;
        else lay.fallback = true;
      }
    }
    lay.crlf += seg.bytes.length - seg.size;
    if (cut >= 0) {
      lay.crlf++;
      this.push(seg.bytes.subarray(0, cut));
      this.push(CRLF);
      this.push(seg.bytes.subarray(cut + 1));
      lay.col = seg.multiline ? seg.endCol : seg.firstLine - cut - 1;
    } else {
      this.push(seg.bytes);
      lay.col = seg.multiline ? seg.endCol : col + seg.bytes.length;
    }
    lay.state = seg.endState;
    lay.rawNext = seg.rawNext;
  }

  /**
   * Joins a run laid out once for any column (html-fixed-run.ts): its head on the current line, the
   * space after it as the line break, then its pieces as they are, a highlighted stretch inside its tags
   * when `lit` says the reader sees that slot. Nothing is laid out here: a piece costs one copy, where
   * addSegment decided a layout per segment (a card was ~10-30, three per highlight). False (nothing written) when the head does not fit on the current line or the
   * body is not in the run's state: the caller joins the run's segments instead.
   */
  addFixed(run: FixedRun, lit: readonly boolean[]): boolean {
    const lay = this.lay;
    if (lay.fallback || run.startKey !== this.layoutKey || lay.col + run.head.length > HTML_MAX_LINE) return false;
    this.push(run.head);
    this.push(CRLF);
    const { bytes, slotOf, tailFrom } = run;
    let col = run.tailFixed;
    let tags = 0;
    for (let k = 0; k < bytes.length; k++) {
      const slot = slotOf[k]!;
      if (slot < 0 || !lit[slot]) {
        this.push(bytes[k]!);
        continue;
      }
      const b = run.lit[k]!;
      this.push(b);
      const t = b.length - bytes[k]!.length;
      tags += t;
      // On the last line: the whole stretch when it starts after the last break, else its close tag.
      if (k > tailFrom) col += t;
      else if (k === tailFrom) col += run.closeLength;
    }
    lay.crlf += run.crlf + 1;
    this.textBytes += run.textBytes + tags;
    lay.col = col;
    lay.state = run.endState;
    lay.rawNext = run.rawNext;
    return true;
  }

  /**
   * A reader's value between two segments (a link, a number: reader-shape.ts): printable ASCII that
   * changes no state and holds no usable space is copied as it is, with the line kept within HTML_MAX_LINE
   * by the `reserve` of the segment before it; anything else is encoded as text. `plain`: the caller
   * knows the value is such (a canonical link of ours, a number), so it is not tested again.
   */
  addValue(value: string, plain = false): void {
    const lay = this.lay;
    if ((!plain && !HOT_RUN.test(value)) || lay.col + value.length > HTML_MAX_LINE) {
      this.addText(value);
      return;
    }
    const a = this.space(value.length);
    const start = this.used;
    this.wrote(start, start + a.write(value, start, 'latin1'));
    lay.col += value.length;
    lay.utf8 += value.length;
    this.textBytes += value.length;
  }

  /**
   * Encodes the reader's own text at the current column, in pieces that fit a pooled arena, never cut
   * inside a surrogate pair (an emoji cut in two would be written as two U+FFFD).
   */
  addText(text: string): void {
    for (let from = 0; from < text.length; ) {
      let to = Math.min(text.length, from + TEXT_PIECE);
      const last = text.charCodeAt(to - 1);
      if (to < text.length && last >= 0xd800 && last <= 0xdbff) to--;
      this.addPiece(text.slice(from, to));
      from = to;
    }
  }

  private addPiece(text: string): void {
    if (text === '') return;
    const a = this.space(maxOut(text.length));
    const start = this.used;
    const before = this.lay.utf8;
    const o = encodeInto(text, a, start, this.lay);
    this.textBytes += this.lay.utf8 - before;
    this.wrote(start, o);
  }
}

/** What addValue copies as it is: the encoder's hot path (printable ASCII but the blank and < > " '). */
const HOT_RUN = /^[!#-&(-;=?-~]*$/;

/**
 * Characters encoded at a time: at most 9 bytes each (~9 KB), within a pooled 32 KB arena. A piece may
 * end anywhere but inside a surrogate pair (the layout's state carries over) — see addText.
 */
const TEXT_PIECE = 1024;

export { decodeHtmlBody, htmlWireLength } from './html-7bit.ts';
