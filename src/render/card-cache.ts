// The per-run card cache: each paper's full card and compact line, filled from the templates' shared
// pieces, escaped, highlighted and encoded ONCE (HTML as 7bit, text as quoted-printable), then reused as bytes by every digest
// that shows the paper (render/digest-email.ts joins them with the reader's own pieces).
//
// Key: the paper (by URL, then compared field by field so an edited paper is rebuilt). Highlights
// differ per reader; they are slots in the bytes (card-highlight.ts), lit per reader, so one entry
// serves everyone: the entry knows every topic that matched the paper in this run (DigestLoader gives
// them) and is rebuilt with the union when a reader's topic is new to it (rare: a topic edited mid-run).
//
// Bounded in bytes (RENDER_CACHE_MB per thread, default 48 MB): an entry counts what it holds on the heap
// (packCard: its bytes, its views, highlight slots and lit masks); entries not used lately go first (second
// chance, see card()). Keyed by paper, not by (paper, reader's topic set): that key thrashed on broad
// topics. Measured: BENCHMARKS.md § Why the code is shaped this way, card-cache.ts.
import type { Logger } from '../log.ts';
import { encodeHtmlSegment, type HtmlSegment } from './encode/html-body.ts';
import { fixedRunFor, joinPieces, type FixedRun } from './encode/html-fixed-run.ts';
import { encodeSegment, type QpSegment } from './encode/qp-body.ts';
import { createHighlighter, type HighlightTerms } from '../match/highlight.ts';
import { HIGHLIGHT_CLOSE, HIGHLIGHT_OPEN, makeTerms, markedHtml, splitMarks, topicKeyOf, withoutMarks, type SlotTopics } from './card-highlight.ts';
import { BoundedCache, buildParts, EMAIL_ABSTRACT_CHARS, emailAbstract, copyPaperInput, samePaper, type Highlight, type PaperInput, type PaperParts } from './render-parts.ts';
import type { BlockPieces, CardBlocks } from './render-templates.ts';

/** A highlight slot's open or close tag in a block: inserted for readers whose topics it names. */
export interface SlotRef {
  slot: number;
  open: boolean;
}

/** A shared piece with highlight slots, laid out once for any column (html-fixed-run.ts). */
export interface FixedItem {
  fixed: FixedRun;
}

/**
 * One block (full card or compact line) of one paper: shared pieces encoded (HTML as 7bit, encode/html-body.ts;
 * text as quoted-printable), reader pieces null.
 */
export interface EncodedBlock {
  html: Array<HtmlSegment | SlotRef | FixedItem | null>;
  text: Array<QpSegment | null>;
  /** Size of the shared HTML pieces as a client reads them (HtmlSegment.size: the clipping size counts these). */
  htmlBytes: number;
  /**
   * At most the bytes the shared pieces take when written (segments, a line break at each join, every
   * highlight tag lit): what a writer reserves to copy the block into its arena (digest-email.ts).
   */
  htmlMaxBytes: number;
}

/** The highlight's tags, as a fixed run writes them (plain ASCII). */
const TAGS = { open: HIGHLIGHT_OPEN, close: HIGHLIGHT_CLOSE };

/** A highlight tag as written, at most (HIGHLIGHT_OPEN is 73 characters). */
const SLOT_MAX_BYTES = 96;

export interface CardBytes {
  full: EncodedBlock;
  compact: EncodedBlock;
  /** Escaped parts, without highlights (reader pieces may use p.* too). */
  parts: PaperParts;
  /** Per highlight slot, the topics (indices) whose words it is. */
  slots: SlotTopics;
  /** Topic key (topicKeyOf) -> index, for every topic the entry was built with. */
  topicIndex: Map<string, number>;
  /**
   * Per topic index t, the slots that name it: `slots[start[t]]` up to `slots[start[t + 1]]` (`slots` inverted,
   * so a reader's mask costs its lit slots). Two arrays per card, not one per topic: a diverse card has ~50.
   */
  slotsOfTopic: { start: Uint32Array; slots: Uint16Array };
  /** Per slot, the highlight spans a lit slot opens in the full card and in the compact line (lit-slots.ts). */
  spans: { full: Uint16Array; compact: Uint16Array };
  /** What readers see lit, per set of their matched topics (digest-email.ts litSlots; bounded there). */
  lit: Map<string, LitSlots>;
}

/** What a reader sees lit in a card: the same for every reader with the same matched topics. */
export interface LitSlots {
  /** Per slot, 1 when lit. */
  lit: Uint8Array;
  /** Bytes the lit slots' tags add to the full card and to the compact line. */
  extra: { full: number; compact: number };
}

interface Entry {
  paper: PaperInput;
  card: CardBytes;
  bytes: number;
  /** Read since eviction last passed it over (second chance, see card()). */
  used: boolean;
}


/**
 * Whether every key is in the map. The keys come normalised once per topic list of a digest
 * (digest-email.ts PaperTopics.cacheKeys); before, every card put each of its topics through topicKeyOf's
 * memo again: one more Map lookup per card and topic, on a Map the message bytes keep out of the CPU's cache.
 */
function hasAll(map: ReadonlyMap<string, number>, keys: readonly string[]): boolean {
  for (let i = 0; i < keys.length; i++) if (!map.has(keys[i]!)) return false;
  return true;
}

/** Default RENDER_CACHE_MB (config.ts DEFAULT_RENDER_CACHE_MB). */
export const DEFAULT_CARD_CACHE_BYTES = 48 * 1024 * 1024;
/** What an entry costs beyond its pieces: the paper's copy, the strings of its parts, objects, the map slot. */
const ENTRY_OVERHEAD = 6_000;
/** A Buffer view into the card's one allocation, on the heap (heap snapshot: ~96 bytes). */
const VIEW_OVERHEAD = 100;
/** An HTML segment's object and its Uint32Array of usable spaces (its own ArrayBuffer). */
const SEGMENT_OVERHEAD = 300;
/** A highlight slot: its array of topic indices (per topic 8 bytes more, and 2 in slotsOfTopic). */
const SLOT_OVERHEAD = 40;
/** The card's four typed arrays of slotsOfTopic and spans: their objects and ArrayBuffers. */
const INDEX_OVERHEAD = 600;
/**
 * Readers' lit slots kept per card (digest-email.ts litSlots): one entry per set of matched topics. A broad
 * card has a handful; a card of a day whose readers typed thousands of phrases meets a new set every few
 * readers, and past this many they are made per digest and not kept. The budget counts a full map.
 */
export const LIT_PER_CARD = 16;
/** A lit entry: its object, key string and map slot, beside one byte per slot. */
const LIT_OVERHEAD = 200;

export class CardCache {
  private readonly entries = new Map<string, Entry>();
  private readonly highlighters = new BoundedCache<Highlight | null>(5_000);
  /** Each topic's terms, for the cards it matched (markedHtml reads a text's words once for all of them). */
  private readonly topicTerms = new BoundedCache<HighlightTerms | null>(5_000);
  private used = 0;
  hits = 0;
  misses = 0;

  constructor(
    private readonly t: CardBlocks,
    private readonly maxBytes: number = DEFAULT_CARD_CACHE_BYTES,
    private readonly logger?: Logger,
  ) {}

  get bytes(): number {
    return this.used;
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * The paper's encoded card and compact line. `matched`: the reader's topics for it, as keys (topicKeyOf);
   * `runTopics`: every topic text known to have matched it this run (so one entry serves every reader).
   */
  card(paper: PaperInput, matched: readonly string[], runTopics: readonly string[] = []): CardBytes {
    const key = paper.url;
    const hit = this.entries.get(key);
    if (hit !== undefined && samePaper(hit.paper, paper) && hasAll(hit.card.topicIndex, matched)) {
      this.hits++;
      hit.used = true;
      return hit.card;
    }
    this.misses++;
    const topics = new Set<string>();
    if (hit !== undefined) {
      if (samePaper(hit.paper, paper)) for (const t of hit.card.topicIndex.keys()) topics.add(t);
      this.remove(key, hit);
    }
    for (const t of runTopics) topics.add(topicKeyOf(t));
    for (const t of matched) topics.add(t);
    const card = this.build(paper, [...topics]);
    const entry: Entry = { paper: copyPaperInput(paper), card, bytes: packCard(card), used: false };
    this.entries.set(key, entry);
    this.used += entry.bytes;
    // Second chance (CLOCK): oldest first, but an entry used since it was last passed over moves to the
    // end instead of going (a Map's iteration visits it again there, flag cleared). A hit only sets a
    // flag: moving the entry to the end on every hit (a Map delete and set) cost more than the order is
    // worth here. The new entry stays.
    // Measured: BENCHMARKS.md § Why the code is shaped this way, card-cache.ts.
    for (const [k, e] of this.entries) {
      if (this.used <= this.maxBytes) break;
      if (k === key) continue;
      if (e.used) {
        e.used = false;
        this.entries.delete(k);
        this.entries.set(k, e);
      } else this.remove(k, e);
    }
    return card;
  }

  private build(paper: PaperInput, topics: string[]): CardBytes {
    const parts = buildParts(paper, null, EMAIL_ABSTRACT_CHARS);
    const terms = topics.map((t) => this.termsOf(t));
    const slots: SlotTopics = [];
    const abstract = emailAbstract(paper.abstract);
    const marked = { ...parts, titleHtml: markedHtml(parts.title, terms, slots), abstractHtml: markedHtml(abstract, terms, slots) };
    const view = { n: 0, p: marked, matched: [] };
    const full = encodeBlock(this.t.fullHtml, this.t.fullText, view);
    const compact = encodeBlock(this.t.compactHtml, this.t.compactText, view);
    const slotsOfTopic = invertSlots(slots, topics.length);
    const spans = { full: spansPerSlot(full, slots.length), compact: spansPerSlot(compact, slots.length) };
    return { full, compact, parts, slots, topicIndex: new Map(topics.map((t, i) => [t, i])), slotsOfTopic, spans, lit: new Map() };
  }

  private termsOf(topicKey: string): HighlightTerms | null {
    const cached = this.topicTerms.get(topicKey);
    if (cached !== undefined) return cached;
    const made = makeTerms(topicKey);
    this.topicTerms.set(topicKey, made);
    return made;
  }

  /** A highlighter per distinct topic set (also used for the web page, which is not cached). */
  highlighter(key: string, topicTexts: readonly string[]): Highlight | null {
    const cached = this.highlighters.get(key);
    if (cached !== undefined) return cached;
    let made: Highlight | null = null;
    if (topicTexts.length > 0) {
      try {
        made = createHighlighter([...topicTexts]);
      } catch (err) {
        // Highlighting is decoration: a topic it cannot handle must not stop the email.
        this.logger?.warn({ err, topics: topicTexts }, 'highlighter failed; rendering without highlights');
      }
    }
    this.highlighters.set(key, made);
    return made;
  }

  private remove(key: string, e: Entry): void {
    this.entries.delete(key);
    this.used -= e.bytes;
  }
}

/** Per topic index, the slots whose topics include it, in slot order (CardBytes.slotsOfTopic). */
function invertSlots(slots: SlotTopics, topicCount: number): CardBytes['slotsOfTopic'] {
  const start = new Uint32Array(topicCount + 1);
  for (const topics of slots) for (const t of topics) start[t + 1]!++;
  for (let t = 0; t < topicCount; t++) start[t + 1]! += start[t]!;
  const out = new Uint16Array(start[topicCount]!);
  const at = start.slice(0, topicCount);
  for (let s = 0; s < slots.length; s++) for (const t of slots[s]!) out[at[t]!++] = s;
  return { start, slots: out };
}

/** Per slot, how many highlight spans it opens in a block: a slot's open tag, or a fixed run's stretch of it. */
function spansPerSlot(block: EncodedBlock, slotCount: number): Uint16Array {
  const out = new Uint16Array(slotCount);
  for (const item of block.html) {
    if (item === null) continue;
    if ('slot' in item) {
      if (item.open) out[item.slot]!++;
    } else if ('fixed' in item) {
      const { slotOf } = item.fixed;
      for (let k = 0; k < slotOf.length; k++) if (slotOf[k]! >= 0) out[slotOf[k]!]!++;
    }
  }
  return out;
}

function encodeBlock(html: BlockPieces, text: BlockPieces, view: object): EncodedBlock {
  let htmlBytes = 0;
  let htmlMaxBytes = 0;
  const encodedHtml: EncodedBlock['html'] = [];
  for (const piece of html) {
    if (piece.reader) {
      encodedHtml.push(null);
      continue;
    }
    const parts = splitMarks(piece.fill(view));
    const fixed = parts.some((part) => typeof part !== 'string') ? fixedRunFor(parts, TAGS) : null;
    if (fixed !== null) {
      encodedHtml.push({ fixed });
      htmlBytes += fixed.size;
      htmlMaxBytes += fixed.maxBytes;
      continue;
    }
    for (const part of parts) {
      if (typeof part !== 'string') {
        encodedHtml.push(part);
        htmlMaxBytes += SLOT_MAX_BYTES;
        continue;
      }
      const seg = encodeHtmlSegment(part);
      htmlBytes += seg.size;
      htmlMaxBytes += seg.bytes.length + 2;
      encodedHtml.push(seg);
    }
  }
  const encodedText = text.map((piece) => (piece.reader ? null : encodeSegment(withoutMarks(piece.fill(view)))));
  return { html: encodedHtml, text: encodedText, htmlBytes, htmlMaxBytes };
}

/**
 * Moves every piece of a new card into one allocation and returns what the card holds on the heap.
 * Decision: one allocation, because each piece as a slice of Node's shared 8 KB pool kept its whole slab
 * alive; and the budget counts the views, slots and lit masks too, so RENDER_CACHE_MB is what the cache
 * holds on the heap. Measured: BENCHMARKS.md § Why the code is shaped this way, card-cache.ts.
 */
function packCard(card: CardBytes): number {
  const pieces: Buffer[] = [];
  const visit = (b: EncodedBlock) => {
    for (const s of b.html) {
      if (s === null || 'slot' in s) continue;
      if ('fixed' in s) {
        pieces.push(s.fixed.head, s.fixed.whole);
        for (const l of s.fixed.lit) if (l !== undefined) pieces.push(l);
      } else pieces.push(s.bytes);
    }
    for (const s of b.text) if (s !== null) pieces.push(s.bytes);
  };
  visit(card.full);
  visit(card.compact);
  let size = 0;
  for (const b of pieces) size += b.length;
  const slab = Buffer.allocUnsafeSlow(size);
  let at = 0;
  const move = (b: Buffer): Buffer => {
    b.copy(slab, at);
    const moved = slab.subarray(at, at + b.length);
    at += b.length;
    return moved;
  };
  let views = 0;
  let slotIndexBytes = 0;
  const repack = (b: EncodedBlock) => {
    for (const s of b.html) {
      if (s === null || 'slot' in s) continue;
      if ('fixed' in s) {
        const f = s.fixed;
        f.head = move(f.head);
        // The pieces as views into their one stretch (FixedRun.whole), moved as one.
        const joined = joinPieces(f.bytes, move(f.whole));
        f.whole = joined.whole;
        f.bytes = joined.bytes;
        for (let k = 0; k < f.lit.length; k++) if (f.lit[k] !== undefined) f.lit[k] = move(f.lit[k]!);
        views += 7 + f.bytes.length + f.lit.length;
        slotIndexBytes += 4 * (f.ends.length + f.slotted.length);
      } else {
        s.bytes = move(s.bytes);
        views += SEGMENT_OVERHEAD / VIEW_OVERHEAD;
      }
    }
    for (const s of b.text) {
      if (s === null) continue;
      // atLineStart is the same bytes without the leading soft break: a view into them.
      const skip = s.bytes.length - s.atLineStart.length;
      s.bytes = move(s.bytes);
      s.atLineStart = s.bytes.subarray(skip);
      views += 2;
    }
  };
  repack(card.full);
  repack(card.compact);
  let slotBytes = INDEX_OVERHEAD + slotIndexBytes + 4 * card.slots.length + 4 * card.topicIndex.size;
  for (const topics of card.slots) slotBytes += SLOT_OVERHEAD + 10 * topics.length;
  const litBytes = LIT_PER_CARD * (LIT_OVERHEAD + card.slots.length);
  return ENTRY_OVERHEAD + size + views * VIEW_OVERHEAD + slotBytes + litBytes + 64 * card.topicIndex.size;
}
