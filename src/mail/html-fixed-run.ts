// A run of a card's shared HTML with highlight slots in it, laid out ONCE for any column it is joined at.
//
// Joined piece by piece (HtmlBodyWriter.addSegment), a full card of a broad digest is ~10-30 segments: its
// highlights cut the title and abstract, and each segment's layout (where its first line may break,
// given the column the body has reached) is decided again for every reader. Here the run is cut at its
// first usable space instead: what comes before it (the head, e.g. `<div`) goes on the current line, that
// space becomes the line break, and everything after starts at column 0, so its line breaks no longer
// depend on the reader. They are placed once, as the encoder would place them with EVERY slot lit (each
// tag counted at its length, never broken inside): a reader who sees fewer highlights gets the same breaks
// on shorter lines, still within HTML_MAX_LINE. Per reader the run is then copied: its pieces, and the
// tags of the slots that reader sees lit.
//
// Same HTML, byte for byte once decoded (tests/unit/html-fixed-run.test.ts): only where lines break
// differs. A run that cannot be laid out so (its head is not plain ASCII, a slot sits in the head or
// outside text, a line finds no usable space) gets no fixed form and is joined segment by segment.
import { S_TEXT } from './html-7bit.ts';
import { encodeHtmlSegment, encodeInto, HTML_MAX_LINE, maxOut, type Layout } from './html-body.ts';

/** A slot's open or close tag in a run. */
export interface RunSlot {
  slot: number;
  open: boolean;
}

export interface FixedRun {
  /** Written on the current line, before the break: printable ASCII without a usable space. */
  head: Buffer;
  /** From column 0: encoded bytes, and slot tags as slot * 2 + (open ? 1 : 0). */
  pieces: Array<Buffer | number>;
  /** Index of the last piece holding a line break (-1: none): tags after it add to the end column. */
  tailFrom: number;
  /** Bytes of the pieces on the last line (tags not counted). */
  tailFixed: number;
  /** Line breaks inside the pieces (the one that replaces the head's space is not counted). */
  crlf: number;
  /** Size as a client reads it, without tags: each line break counted as the space it replaces. */
  size: number;
  /** UTF-8 bytes of the HTML before encoding, without tags. */
  textBytes: number;
  /** At most the bytes the run writes: head, break, pieces, every tag. */
  maxBytes: number;
  /** The layout key it must be joined in (text state), and the state it ends in. */
  startKey: number;
  endState: number;
  rawNext: boolean;
}

/**
 * Lays out a shared run (text pieces and slot tags, in order) for any column; null when it cannot be (see
 * the header). `tagLength`: how long the open and close tags are as written (plain ASCII).
 */
export function encodeFixedRun(parts: ReadonlyArray<string | RunSlot>, tagLength: { open: number; close: number }): FixedRun | null {
  const first = parts[0];
  if (typeof first !== 'string') return null;
  const probe = encodeHtmlSegment(first);
  if (probe.fallback || probe.breaks.length === 0) return null;
  const at = probe.breaks[0]! >>> 2;
  const headText = first.slice(0, at);
  if (!/^[\x21-\x7e]*$/.test(headText) || first.charCodeAt(at) !== 0x20) return null;
  const lay: Layout = { col: 0, state: S_TEXT, rawNext: false, fallback: false, crlf: 0, utf8: 0 };
  const headBytes = Buffer.allocUnsafe(maxOut(headText.length));
  const head = Buffer.from(headBytes.subarray(0, encodeInto(headText, headBytes, 0, lay)));
  if (lay.crlf !== 0 || head.length !== headText.length) return null;
  const headUtf8 = lay.utf8 + 1; // and the space the break replaces
  lay.col = 0;
  lay.utf8 = 0;
  const startKey = S_TEXT * 2;
  const pieces: FixedRun['pieces'] = [];
  let tailFrom = -1;
  let tailFixed = 0;
  let bytes = 0;
  let tags = 0;
  const addText = (text: string) => {
    if (text === '') return;
    const scratch = Buffer.allocUnsafe(maxOut(text.length));
    const piece = Buffer.from(scratch.subarray(0, encodeInto(text, scratch, 0, lay)));
    const nl = piece.lastIndexOf('\r\n');
    if (nl >= 0) {
      tailFrom = pieces.length;
      tailFixed = piece.length - nl - 2;
    } else tailFixed += piece.length;
    bytes += piece.length;
    pieces.push(piece);
  };
  addText(first.slice(at + 1));
  for (let k = 1; k < parts.length; k++) {
    const part = parts[k]!;
    if (typeof part === 'string') {
      addText(part);
      continue;
    }
    // A tag is a whole element boundary in text: it leaves the state as it was, and nothing breaks inside it.
    if (lay.state !== S_TEXT || lay.rawNext) return null;
    const length = part.open ? tagLength.open : tagLength.close;
    lay.col += length;
    if (lay.col > HTML_MAX_LINE) return null;
    tags += length;
    pieces.push(part.slot * 2 + (part.open ? 1 : 0));
  }
  if (lay.fallback) return null;
  return {
    head,
    pieces,
    tailFrom,
    tailFixed,
    crlf: lay.crlf,
    size: head.length + 1 + bytes - lay.crlf,
    textBytes: headUtf8 + lay.utf8,
    maxBytes: head.length + 2 + bytes + tags,
    startKey,
    endState: lay.state,
    rawNext: lay.rawNext,
  };
}
