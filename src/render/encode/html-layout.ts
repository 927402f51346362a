// A digest's HTML part as 7bit (RFC 2045 §2.7): pure ASCII in lines of at most 998 octets, sent without
// a transfer encoding: smaller than quoted-printable (no "=3D" for every '=' of a style) and in ~15x fewer
// lines, each of which the relay and our dot-stuffing read.
// Measured: BENCHMARKS.md § Why the code is shaped this way, html-layout.ts.
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
// This file lays text out (encodeInto) and encodes the shared pieces once (encodeHtmlSegment); html-body.ts
// joins them into a body.
import { nextState, S_COMMENT, S_RAW, S_TAG, S_TEXT, writeRef } from './html-7bit.ts';

/** A line is broken at the first usable space past this column... */
export const TARGET = 760;
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
// Hot loop (every character of every email's HTML part): one function on purpose, a named exception of
// tests/unit/function-budget.test.ts; split it only with an A/B run beside it (npm run bench:ab).
// Measured: BENCHMARKS.md § Why the code is shaped this way, the function budget's hot loops.
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

export function dueAt(kind: number): number {
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
