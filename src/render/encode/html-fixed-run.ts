// A run of a card's shared HTML with highlight slots in it, laid out ONCE for any column it is joined at.
//
// Joined piece by piece (HtmlBodyWriter.addSegment), a full card of a broad digest is ~10-30 segments: its
// highlights cut the title and abstract, and each segment's layout (where its first line may break,
// given the column the body has reached) is decided again for every reader. Here the run is cut at its
// first usable space instead: what comes before it (the head, e.g. `<div`) goes on the current line, that
// space becomes the line break, and everything after starts at column 0, so its line breaks no longer
// depend on the reader. They are placed once, as the encoder would place them with EVERY slot lit (each
// tag counted at its length, never broken inside): a reader who sees fewer highlights gets the same breaks
// on shorter lines, still within HTML_MAX_LINE. Per reader the run is then copied, one piece at a time: a
// highlighted stretch is kept twice, as it is and inside its tags, and the reader gets the one their
// topics light (one copy per stretch, where segments took three: open tag, text, close tag).
//
// Same HTML, byte for byte once decoded (tests/unit/html-fixed-run.test.ts): only where lines break
// differs. A run that cannot be laid out so (its head is not plain ASCII, a slot sits in the head or
// outside text, a line finds no usable space) gets no fixed form and is joined segment by segment. One
// whose head does not fit on the line a reader's body has reached (a few columns from the limit) is
// written for that reader as text (fixedRunHtml): no second form of every card is kept for that case.
import { S_TEXT } from './html-7bit.ts';
import { decodeHtmlBody } from './html-7bit.ts';
import { CRLF, encodeHtmlSegment, encodeInto, HTML_MAX_LINE, maxOut, type Layout } from './html-layout.ts';

/** A slot's open or close tag in a run. */
export interface RunSlot {
  slot: number;
  open: boolean;
}

export interface FixedRun {
  /** Written on the current line, before the break: printable ASCII without a usable space. */
  head: Buffer;
  /**
   * From column 0, piece by piece: the encoded bytes, and for a highlighted stretch (slotOf[k] >= 0) the
   * same bytes inside the highlight's tags (lit[k]), written instead for a reader who sees that slot lit:
   * one copy per stretch either way.
   */
  bytes: Buffer[];
  slotOf: Int32Array;
  lit: Array<Buffer | undefined>;
  /**
   * Every piece, unlit, one after another (`bytes` are views into it); `ends[k]`: where piece k ends in it;
   * `slotted`: the pieces that are highlighted stretches. A reader sees few of a card's slots lit (a diverse
   * digest: ~11 of ~300 pieces), so the writer looks only at the stretches and copies what lies between two
   * lit ones as one piece of `whole` (HtmlBodyWriter.addFixed), touching no piece's own Buffer.
   */
  whole: Buffer;
  ends: Uint32Array;
  slotted: Uint32Array;
  /** The close tag's length (a lit stretch that holds the last line break ends that line with it). */
  closeLength: number;
  /** Index of the last piece holding a line break (-1: none). */
  tailFrom: number;
  /** Bytes of the last line, every stretch on it unlit. */
  tailFixed: number;
  /** Line breaks inside the pieces (the one that replaces the head's space is not counted). */
  crlf: number;
  /** Size as a client reads it, no stretch lit: each line break counted as the space it replaces. */
  size: number;
  /** UTF-8 bytes of the HTML before encoding, no stretch lit. */
  textBytes: number;
  /** At most the bytes the run writes: head, break, every stretch lit. */
  maxBytes: number;
  /** The layout key it must be joined in (text state), and the state it ends in. */
  startKey: number;
  endState: number;
  rawNext: boolean;
}

/**
 * Lays out a shared run (text pieces, and highlighted stretches as open slot, text, close slot: what
 * card-highlight.ts markedHtml makes) for any column; null when it cannot be (see the header). `tags`:
 * the highlight's open and close tags (plain ASCII, written as they are). `lookahead` (fixedRunFor): each
 * piece is encoded with a stand-in for the character that follows it (nextLetter), taken off again, so that
 * its last blank may be a break.
 */
// Hot path (every shared run of a card, per column): one function on purpose, a named exception of
// tests/unit/function-budget.test.ts; split it only with an A/B run beside it (npm run bench:ab).
// Measured: BENCHMARKS.md § Why the code is shaped this way, the function budget's hot loops.
export function encodeFixedRun(parts: ReadonlyArray<string | RunSlot>, tags: { open: string; close: string }, lookahead = false): FixedRun | null {
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
  const open = Buffer.from(tags.open, 'latin1');
  const close = Buffer.from(tags.close, 'latin1');
  const bytes: Buffer[] = [];
  const slotOf: number[] = [];
  const lit: FixedRun['lit'] = [];
  let [tailFrom, tailFixed, total, extra] = [-1, 0, 0, 0];
  const encode = (text: string, next = ''): Buffer => {
    const scratch = Buffer.allocUnsafe(maxOut(text.length + 1));
    let end = encodeInto(text + next, scratch, 0, lay);
    if (next !== '') [end, lay.col, lay.utf8] = [end - 1, lay.col - 1, lay.utf8 - 1];
    const piece = Buffer.from(scratch.subarray(0, end));
    const nl = piece.lastIndexOf('\r\n');
    if (nl >= 0) {
      tailFrom = bytes.length;
      tailFixed = piece.length - nl - 2;
    } else tailFixed += piece.length;
    total += piece.length;
    return piece;
  };
  const addText = (text: string, k: number) => {
    if (text === '') return;
    bytes.push(encode(text, lookahead ? nextLetter(parts, k) : ''));
    slotOf.push(-1);
    lit.push(undefined);
  };
  addText(first.slice(at + 1), 0);
  for (let k = 1; k < parts.length; k++) {
    const part = parts[k]!;
    if (typeof part === 'string') {
      addText(part, k);
      continue;
    }
    // A highlighted stretch: its open tag, its text, its close tag. The tags are whole elements in text:
    // they leave the state as it was, nothing breaks inside them, and the layout counts them written.
    const text = parts[k + 1];
    const end = parts[k + 2];
    if (!part.open || typeof text !== 'string' || typeof end !== 'object' || end.open || end.slot !== part.slot) return null;
    if (lay.state !== S_TEXT || lay.rawNext) return null;
    lay.col += open.length;
    const piece = encode(text, lookahead ? nextLetter(parts, k + 2) : '');
    if (lay.state !== S_TEXT || lay.rawNext) return null;
    lay.col += close.length;
    if (lay.col > HTML_MAX_LINE) return null;
    bytes.push(piece);
    slotOf.push(part.slot);
    lit.push(Buffer.concat([open, piece, close]));
    extra += open.length + close.length;
    k += 2;
  }
  if (lay.fallback) return null;
  return {
    head,
    ...indexedPieces(bytes, slotOf),
    slotOf: Int32Array.from(slotOf),
    lit,
    closeLength: close.length,
    tailFrom,
    tailFixed,
    crlf: lay.crlf,
    size: head.length + 1 + total - lay.crlf,
    textBytes: headUtf8 + lay.utf8,
    maxBytes: head.length + 2 + total + extra,
    startKey: S_TEXT * 2,
    endState: lay.state,
    rawNext: lay.rawNext,
  };
}

/**
 * A card's shared run laid out for any column (encodeFixedRun), or null. Decision: a run whose highlights lie
 * close together (a diverse card carries the stretches of the ~50 phrases that matched its paper) often
 * found no break between column 760 and 990: its pieces between stretches are a blank or a short word,
 * and a piece's last blank is never a break (what follows it is not known to the encoder). About one card
 * in six of a diverse edition was then joined segment by segment, ~80 segments and slots per card for
 * every reader. Such a run is laid out again with each piece's next character known (`lookahead`); a run
 * that was laid out without it keeps that layout, byte for byte.
 */
export function fixedRunFor(parts: ReadonlyArray<string | RunSlot>, tags: { open: string; close: string }): FixedRun | null {
  return encodeFixedRun(parts, tags) ?? encodeFixedRun(parts, tags, true);
}

/**
 * What stands for the character the run's text goes on with after part k (the next text, whichever stretches
 * are lit: the tags aside) while part k is laid out: 'x' when a blank may be broken before it (anything but
 * '.', '-', a blank or a control character: html-layout.ts), so that part k's last blank is a usable space
 * in text; '' otherwise, and at the run's end (the reader part follows). A stand-in, not the character: one
 * column, no state change, and taken off again (encodeFixedRun's encode). Its kind is a space in text
 * (K_TEXT), never the earlier space between tags.
 */
function nextLetter(parts: ReadonlyArray<string | RunSlot>, k: number): string {
  for (let j = k + 1; j < parts.length; j++) {
    const p = parts[j]!;
    if (typeof p !== 'string' || p === '') continue;
    const c = p.charCodeAt(0);
    return c > 0x20 && c !== 0x2e && c !== 0x2d && c !== 0x7f ? 'x' : '';
  }
  return '';
}

/** A run's pieces as FixedRun keeps them: joined (joinPieces), where each ends, which are highlighted stretches. */
function indexedPieces(pieces: readonly Buffer[], slotOf: readonly number[]): Pick<FixedRun, 'whole' | 'bytes' | 'ends' | 'slotted'> {
  const ends = new Uint32Array(pieces.length);
  for (let k = 0, at = 0; k < pieces.length; k++) ends[k] = at += pieces[k]!.length;
  const slotted = Uint32Array.from(slotOf.flatMap((slot, k) => (slot >= 0 ? [k] : [])));
  return { ...joinPieces(pieces), ends, slotted };
}

/** The pieces copied into one Buffer (`whole`, or `into` when they are there already), and as views into it (`bytes`). */
export function joinPieces(pieces: readonly Buffer[], into?: Buffer): { whole: Buffer; bytes: Buffer[] } {
  const whole = into ?? Buffer.concat(pieces);
  const bytes: Buffer[] = [];
  let at = 0;
  for (const p of pieces) {
    bytes.push(whole.subarray(at, at + p.length));
    at += p.length;
  }
  return { whole, bytes };
}

/**
 * The run's HTML with `lit` slots' highlights, as text: for a body where the run cannot be joined as it is
 * (HtmlBodyWriter.addFixed said no), to be encoded from where that body is. Decoding gives back exactly what
 * was encoded (html-7bit.ts): the run's own line breaks become the spaces they replaced.
 */
export function fixedRunHtml(run: FixedRun, lit: ArrayLike<number | boolean>): string {
  const parts: Buffer[] = [run.head, CRLF];
  for (let k = 0; k < run.bytes.length; k++) {
    const slot = run.slotOf[k]!;
    parts.push(slot >= 0 && lit[slot] ? run.lit[k]! : run.bytes[k]!);
  }
  return decodeHtmlBody(Buffer.concat(parts));
}

/** Bytes a run holds (its pieces, and its stretches again inside their tags): what a cache counts for it. */
export function fixedRunBytes(run: FixedRun): number {
  let n = run.head.length;
  for (let k = 0; k < run.bytes.length; k++) n += run.bytes[k]!.length + (run.lit[k]?.length ?? 0) + 16;
  n += 4 * (run.ends.length + run.slotted.length);
  return n;
}
