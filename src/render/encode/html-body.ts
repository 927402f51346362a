// A digest's HTML part as 7bit (RFC 2045 §2.7), put together from pieces: how text is laid out and
// encoded as 7bit is html-layout.ts's (why 7bit, and the rules that keep what a client shows).
//
// The pieces are joined as the quoted-printable ones were (qp-body.ts): a paper's shared pieces are laid
// out once per run from column 0 with the spaces of their first line remembered, and at a join the
// first one past the column the body has reached becomes the break (the segment is then copied as two
// views around a CRLF); the reader's own text is laid out from that column.
// A card's highlighted run is laid out once for any column instead (html-fixed-run.ts, addFixed).
import { S_TEXT } from './html-7bit.ts';
import { ArenaWriter, type ArenaPool } from './arena.ts';
import { CRLF, dueAt, encodeInto, HTML_MAX_LINE, maxOut, TARGET, type HtmlSegment, type Layout } from './html-layout.ts';
import { encodeQuotedPrintable } from '../../mail/quoted-printable.ts';
import type { FixedRun } from './html-fixed-run.ts';

export { encodeHtmlSegment, HTML_MAX_LINE, type HtmlSegment } from './html-layout.ts';

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
  addFixed(run: FixedRun, lit: ArrayLike<number | boolean>): boolean {
    const lay = this.lay;
    if (lay.fallback || run.startKey !== this.layoutKey || lay.col + run.head.length > HTML_MAX_LINE) return false;
    this.push(run.head);
    this.push(CRLF);
    const { slotOf, slotted, ends, whole, tailFrom } = run;
    let col = run.tailFixed;
    let tags = 0;
    // Only the highlighted stretches are looked at; what lies between two lit ones is copied as one piece
    // of `whole` (from: where the bytes not written yet start).
    let from = 0;
    for (let j = 0; j < slotted.length; j++) {
      const k = slotted[j]!;
      if (!lit[slotOf[k]!]) continue;
      const start = k === 0 ? 0 : ends[k - 1]!;
      if (start > from) this.push(whole.subarray(from, start));
      const b = run.lit[k]!;
      this.push(b);
      from = ends[k]!;
      const t = b.length - (from - start);
      tags += t;
      // On the last line: the whole stretch when it starts after the last break, else its close tag.
      if (k > tailFrom) col += t;
      else if (k === tailFrom) col += run.closeLength;
    }
    if (whole.length > from) this.push(from === 0 ? whole : whole.subarray(from));
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
