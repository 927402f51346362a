// The reader's own parts of a card (why it matched, its mute and feedback links, its number), filled by
// Handlebars ONCE per shape instead of once per reader and paper.
//
// A shape is what decides how a reader part reads apart from the reader's own values: the block (full
// card or compact line), how many of their topics matched and which feedback links there are. The part is
// filled once with marks in place of the values (the number, each link, the author's name, each topic's
// text) and kept as text between the marks; per reader and paper only the values are escaped and put
// between the texts. A run fills a few dozen shapes; a shape's text size is measured once. The topic
// texts are values, not part of the shape: as part of it, a broad run made tens of thousands of shapes.
// Measured: BENCHMARKS.md § Why the code is shaped this way, reader-shape.ts.
//
// Templates whose reader parts read the paper (`p.…`, `@root`, `../`) get no shapes: their parts are
// filled per reader as before (digest-email.ts falls back).
import { encodeHtmlSegment, htmlWireLength, type HtmlBodyWriter, type HtmlSegment } from './encode/html-body.ts';
import { S_TEXT } from './encode/html-7bit.ts';
import { encodeSegment, leadSegment, type QpBodyWriter, type QpSegment } from './encode/qp-body.ts';
import { maxEncodedLength } from '../mail/quoted-printable.ts';
import { escapeValue, type BlockPieces, type CardBlocks } from './render-templates.ts';
import { FIRST_TOPIC_SLOT, runSpan, type RunSpan, type TopicRuns } from './topic-runs.ts';

/**
 * A value's mark: MARK_OPEN, the slot as one character of the private use area, MARK_CLOSE. Characters no
 * template holds and Handlebars never escapes (a slot written as '<' or '=' came back as an entity).
 */
const MARK_OPEN = '\u0003';
const MARK_CLOSE = '\u0004';
const SLOT_BASE = 0xe000;

/** Slots: the paper's number, the feedback links, the author's name, then per matched topic its mute link and its text. */
const SLOT_N = 0;
const SLOT_MORE = 1;
const SLOT_LESS = 2;
const SLOT_FOLLOW = 3;
const SLOT_FOLLOW_NAME = 4;
const SLOT_MUTE = FIRST_TOPIC_SLOT;
/** Slots a part may have (a mark's slot is one character: U+E000 to U+E3FF). */
export const MAX_SLOTS = 1024;
/** Topics per shape at most (a subscriber has at most MAX_TOPICS). */
const MAX_MATCHED = 60;

/** One reader part as text around value slots: texts.length === slots.length + 1. */
export interface ShapedPart {
  texts: string[];
  slots: number[];
  /** The texts' size in the HTML as sent (htmlWireLength summed): the clipping size counts it. */
  size: number;
  /** HTML parts: the texts encoded as 7bit segments, laid out from text state (where a reader part starts). */
  segments?: HtmlSegment[];
  /**
   * Text parts: the texts as quoted-printable segments. A text that starts a line ("\n   Less like this: ")
   * is kept without its line break, which the writer puts first: joined after a value as a segment, it
   * would start with a soft break, an empty line more per link. `led`: that break and the segment as
   * written at a line's start, one copy (QpBodyWriter.addLineThen; four per card were a fifth of the
   * pieces a broad digest copies).
   */
  qp?: Array<{ seg: QpSegment; led: Buffer | undefined }>;
  /** Reader parts: where the matched topics' values lie, written as one run per digest (topic-runs.ts). */
  run?: RunSpan | undefined;
}

export interface ReaderShape {
  html: ShapedPart[];
  text: ShapedPart[];
}

/** What a shape's feedback links are: none, more/less only, or more/less and follow an author. */
export type FeedbackKind = 0 | 1 | 2;

/** Bytes of shapes kept per renderer: a shape is ~1-2 KB and a run makes a few dozen (a bound, not a need). */
export const DEFAULT_SHAPE_BYTES = 4 * 1024 * 1024;
/** What a shape costs beyond its texts (arrays, map slot, key). */
const SHAPE_OVERHEAD = 400;

/** The shapes of one renderer (one thread), bounded in bytes: past the budget the cache starts over. */
export class ReaderShapes {
  private readonly map = new Map<string, ReaderShape | null>();
  private used = 0;
  private readonly usable: { full: boolean; compact: boolean };

  constructor(
    private readonly t: CardBlocks,
    private readonly maxBytes = DEFAULT_SHAPE_BYTES,
  ) {
    const free = (pieces: BlockPieces) => pieces.every((p) => !p.reader || !p.readsPaper);
    this.usable = { full: free(t.fullHtml) && free(t.fullText), compact: free(t.compactHtml) && free(t.compactText) };
  }

  /** The shape of a reader part, or null when this one must be filled per reader (see the header). */
  shape(kind: 'full' | 'compact', matched: number, fb: FeedbackKind): ReaderShape | null {
    if (!this.usable[kind] || matched > MAX_MATCHED) return null;
    const key = `${kind}${fb}${matched}`;
    const hit = this.map.get(key);
    if (hit !== undefined) return hit;
    const made = this.make(kind, matched, fb);
    const cost = SHAPE_OVERHEAD + key.length * 2 + (made === null ? 0 : shapeBytes(made));
    if (this.used + cost > this.maxBytes) {
      this.map.clear();
      this.used = 0;
    }
    this.map.set(key, made);
    this.used += cost;
    return made;
  }

  private make(kind: 'full' | 'compact', matched: number, fb: FeedbackKind): ReaderShape | null {
    const view = {
      n: mark(SLOT_N),
      p: null,
      matched: Array.from({ length: matched }, (_, j) => ({ text: mark(SLOT_MUTE + 2 * j + 1), muteUrl: mark(SLOT_MUTE + 2 * j) })),
      fb: fb === 0 ? null : { more: mark(SLOT_MORE), less: mark(SLOT_LESS), follow: fb === 2 ? mark(SLOT_FOLLOW) : null, followName: fb === 2 ? mark(SLOT_FOLLOW_NAME) : '' },
    };
    const slots = SLOT_MUTE + 2 * matched;
    const parts = (pieces: BlockPieces, html: boolean): ShapedPart[] | null => {
      const out: ShapedPart[] = [];
      for (const p of pieces) {
        if (!p.reader) continue;
        const part = parse(p.fill(view), slots, html);
        if (part === null) return null;
        out.push(part);
      }
      return out;
    };
    const html = parts(kind === 'full' ? this.t.fullHtml : this.t.compactHtml, true);
    const text = parts(kind === 'full' ? this.t.fullText : this.t.compactText, false);
    if (html === null || text === null) return null;
    for (const part of [...html, ...text]) part.run = runSpan(part.slots);
    return { html, text };
  }
}

export function mark(slot: number): string {
  return MARK_OPEN + String.fromCharCode(SLOT_BASE + slot) + MARK_CLOSE;
}

/** A filled part cut at its marks; null when a mark is not one of ours (the part is then filled per reader). */
export function parse(filled: string, slotCount: number, html: boolean): ShapedPart | null {
  const texts: string[] = [];
  const slots: number[] = [];
  let at = 0;
  for (;;) {
    const open = filled.indexOf(MARK_OPEN, at);
    if (open < 0) break;
    const slot = filled.charCodeAt(open + 1) - SLOT_BASE;
    if (!(slot >= 0 && slot < slotCount) || filled[open + 2] !== MARK_CLOSE) return null;
    texts.push(flat(filled.slice(at, open)));
    slots.push(slot);
    at = open + 3;
  }
  const last = filled.slice(at);
  if (last.includes(MARK_CLOSE)) return null;
  texts.push(flat(last));
  if (texts.some((t) => t.includes(MARK_CLOSE))) return null;
  return html ? htmlPart(texts, slots) : textPart(texts, slots);
}

/** A text part from its texts and slots: the texts encoded once as quoted-printable segments. */
export function textPart(texts: string[], slots: number[]): ShapedPart {
  const qp = texts.map((t) => {
    const lead = t.startsWith('\n');
    const seg = encodeSegment(lead ? t.slice(1) : t);
    return { seg, led: lead ? leadSegment(seg) : undefined };
  });
  return { texts, slots, size: 0, qp };
}

/**
 * Writes a shaped text part with one reader's values, as one Buffer part (a run of the writer's arena).
 * `topics`: the digest's runs of the card's topic list, for its matched values (topic-runs.ts).
 */
export function writeShapedText(w: QpBodyWriter, part: ShapedPart, values: readonly string[], plain = 0, topics?: TopicRuns): void {
  const qp = part.qp!;
  let need = 0;
  for (const q of qp) need += q.seg.bytes.length + 2;
  for (const slot of part.slots) {
    const n = 3 * values[slot]!.length;
    need += n + maxEncodedLength(n);
  }
  w.beginRun(need);
  const run = topics === undefined ? undefined : part.run;
  for (let k = 0; k < qp.length; k++) {
    const q = qp[k]!;
    if (q.led !== undefined) w.addLineThen(q.seg, q.led);
    else w.addSegment(q.seg);
    if (k === run?.from) {
      w.addRun(topics!.textRun(part, w.column));
      k = run.to;
      continue;
    }
    if (k < part.slots.length) {
      // A plain value (a number, a canonical link) is copied a line at a time; any other is encoded. (A
      // byte-by-byte copy loop for plain ASCII measured no faster than encoding: what addPlain saves is the pass.)
      const slot = part.slots[k]!;
      if (isPlain(plain, slot)) w.addPlain(values[slot]!);
      else w.addText(values[slot]!);
    }
  }
  w.endRun();
}

/** An HTML part from its texts and slots: their size measured and their segments encoded once. */
export function htmlPart(texts: string[], slots: number[]): ShapedPart {
  let size = 0;
  for (const t of texts) size += htmlWireLength(t);
  return { texts, slots, size, segments: segmentChain(texts, TEXT_KEY) };
}

/** The layout key (HtmlBodyWriter.layoutKey) of text state, where our templates' reader parts start. */
const TEXT_KEY = S_TEXT * 2;

/**
 * The texts as segments, each laid out from the state the one before it ends in: a value between two
 * changes no state (addValue copies only what the encoder's hot path would; anything else is escaped).
 */
function segmentChain(texts: readonly string[], startKey: number): HtmlSegment[] {
  const out: HtmlSegment[] = [];
  let key = startKey;
  for (const t of texts) {
    const seg = encodeHtmlSegment(t, key);
    out.push(seg);
    key = seg.endState * 2 + (seg.rawNext ? 1 : 0);
  }
  return out;
}

/**
 * Writes a shaped HTML part with one reader's values: its texts as shared bytes, only the values copied.
 * A part met in another state than text (a template whose reader part starts inside a tag) is encoded
 * for it here, uncached.
 */
export function writeShapedHtml(w: HtmlBodyWriter, part: ShapedPart, values: readonly string[], plain = 0, topics?: TopicRuns): void {
  const key = w.layoutKey;
  const shared = key === TEXT_KEY && part.segments !== undefined;
  const segments = shared ? part.segments! : segmentChain(part.texts, key);
  // The matched topics as one segment (topic-runs.ts), laid out from the state the shared segments reach.
  const run = shared && topics !== undefined ? part.run : undefined;
  const n = part.slots.length;
  for (let k = 0; k < n; k++) {
    if (k === run?.from) {
      const seg = topics!.htmlRun(part).seg;
      // The segment before keeps room for the run's first stretch, where it cannot break.
      w.addSegment(segments[k]!, seg.breaks.length > 0 ? seg.breaks[0]! >>> 2 : seg.firstLine);
      w.addSegment(seg);
      k = run.to;
      continue;
    }
    const slot = part.slots[k]!;
    const value = values[slot]!;
    w.addSegment(segments[k]!, value.length);
    w.addValue(value, isPlain(plain, slot));
  }
  w.addSegment(segments[n]!);
}

/**
 * At most the bytes writeShapedHtml writes (HtmlBodyWriter.beginRun's `need`): its texts encoded from
 * another state than text are assumed as large as references make them, a line break at each join, and
 * every value encoded at its worst (9 bytes a character).
 */
export function shapedMaxBytes(part: ShapedPart, values: readonly string[]): number {
  let need = 2 * (part.texts.length + 1);
  if (part.segments) for (const seg of part.segments) need += seg.bytes.length;
  else for (const t of part.texts) need += 9 * t.length + 16;
  for (const slot of part.slots) need += 9 * values[slot]!.length + 16;
  return need;
}

/** A string V8 keeps as one flat sequence (a slice of Handlebars' output is otherwise a view of a rope). */
function flat(s: string): string {
  return s === '' ? '' : Buffer.from(s, 'utf8').toString('utf8');
}

function shapeBytes(s: ReaderShape): number {
  let n = 0;
  // A text as a string (2 bytes a character) and, in HTML parts, as its encoded segment (~1 a character).
  for (const p of s.html) for (const t of p.texts) n += 3 * t.length + 96;
  for (const p of s.text) for (const t of p.texts) n += 3 * t.length + 96;
  return n;
}

/**
 * One reader's values for a part, in slot order: the number, the links, the author's name, then per
 * matched topic its mute link and its text (`topics`: TopicRuns.html or .text, escaped or not already).
 * HTML values are escaped as Handlebars would have escaped them.
 */
export function slotValues(
  n: number,
  fb: { more: string; less: string; follow: string | null; followName: string; canonical?: boolean } | null,
  topics: readonly string[],
  html: boolean,
): string[] {
  // Canonical links (FeedbackLinks.canonical) hold nothing HTML escapes: written as they are. Sized once
  // and filled by index: no closure and no growing of the array per card (a diverse digest fills ~50).
  const escapeLinks = html && fb?.canonical !== true;
  const values = new Array<string>(SLOT_MUTE + topics.length);
  values[SLOT_N] = String(n);
  values[SLOT_MORE] = fb ? (escapeLinks ? escapeValue(fb.more) : fb.more) : '';
  values[SLOT_LESS] = fb ? (escapeLinks ? escapeValue(fb.less) : fb.less) : '';
  values[SLOT_FOLLOW] = fb?.follow ? (escapeLinks ? escapeValue(fb.follow) : fb.follow) : '';
  values[SLOT_FOLLOW_NAME] = fb ? (html ? escapeValue(fb.followName) : fb.followName) : '';
  for (let i = 0; i < topics.length; i++) values[SLOT_MUTE + i] = topics[i]!;
  return values;
}

/**
 * The slots of a reader's HTML values known to be printable ASCII with nothing to escape and no blank
 * (HtmlBodyWriter.addValue's hot path), as a bit mask: the number, and the feedback links when they are
 * canonical (FeedbackLinks.canonical: PUBLIC_URL and token characters). Such a value is written and sized
 * as it is, without the regular expressions that check any other (~250 values in a broad digest: testing
 * each twice was ~5% of rendering it, bench/load-render-loop.mjs). In the text part the same slots are
 * copied by QpBodyWriter.addPlain rather than encoded byte by byte.
 */
export function plainSlots(fb: { follow: string | null; canonical?: boolean } | null): number {
  let mask = 1 << SLOT_N;
  if (fb?.canonical === true) mask |= (1 << SLOT_MORE) | (1 << SLOT_LESS) | (fb.follow === null ? 0 : 1 << SLOT_FOLLOW);
  return mask;
}

/** Whether slot `slot` is in a plainSlots mask (only the first slots ever are). */
function isPlain(plain: number, slot: number): boolean {
  return slot < SLOT_MUTE && ((plain >> slot) & 1) === 1;
}

/** A shaped part with one reader's values: the string to encode, and (HTML) its size as sent. */
export function fillPart(part: ShapedPart, values: readonly string[]): string {
  let s = part.texts[0]!;
  for (let k = 0; k < part.slots.length; k++) s += values[part.slots[k]!]! + part.texts[k + 1]!;
  return s;
}

/**
 * The size a filled HTML part adds (its texts' size, measured once, plus the values it shows; its matched
 * topics' measured once per digest when `topics` is given).
 */
export function filledSize(part: ShapedPart, values: readonly string[], plain = 0, topics?: TopicRuns): number {
  let size = part.size;
  const run = topics === undefined ? undefined : part.run;
  const slots = part.slots;
  for (let k = 0; k < slots.length; k++) {
    if (k === run?.from) {
      size += topics!.htmlRun(part).valuesSize;
      k = run.to;
      continue;
    }
    const slot = slots[k]!;
    size += isPlain(plain, slot) ? values[slot]!.length : htmlWireLength(values[slot]!);
  }
  return size;
}
