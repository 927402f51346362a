// The per-run card cache: each paper's full card and compact line, filled from the templates' shared
// pieces, escaped, highlighted and quoted-printable encoded ONCE, then reused as bytes by every digest
// that shows the paper (render/digest-email.ts joins them with the reader's own pieces).
//
// Key: the paper (by URL, then compared field by field so an edited paper is rebuilt) and the sorted
// set of topic texts that matched it for this reader, because highlighting shows those topics' words.
// Highlighting a paper with all of a run's topics for it instead would share one entry per paper but
// mark words a reader never asked for. Measured with the broad bench profile (bench/README in
// BENCHMARKS.md): the number of distinct (paper, topic set) keys stays a small multiple of the papers,
// so the per-key cost (~0.3 ms to highlight, fill and encode a card) is paid a few thousand times a run,
// not once per digest.
//
// Bounded in bytes (RENDER_CACHE_MB per thread, default 32 MB): an entry is its encoded bytes plus a
// fixed overhead per piece; least recently used entries go first. A full card is ~3-4 KB encoded (HTML
// and text), a compact line ~0.8 KB: 32 MB holds ~7,000 entries.
import type { Logger } from '../log.ts';
import { encodeSegment, type QpSegment } from '../mail/qp-body.ts';
import { createHighlighter } from '../topics/highlight.ts';
import { BoundedCache, buildParts, EMAIL_ABSTRACT_CHARS, samePaper, type Highlight, type PaperInput, type PaperParts } from './render-parts.ts';
import type { BlockPieces } from './render-templates.ts';

/** One block (full card or compact line) of one paper: shared pieces encoded, reader pieces null. */
export interface EncodedBlock {
  html: Array<QpSegment | null>;
  text: Array<QpSegment | null>;
  /** UTF-8 bytes of the shared HTML pieces (the clipping size counts these). */
  htmlBytes: number;
}

export interface CardBytes {
  full: EncodedBlock;
  compact: EncodedBlock;
  /** Escaped parts (reader pieces may use p.* too). */
  parts: PaperParts;
}

interface Entry {
  paper: PaperInput;
  card: CardBytes;
  bytes: number;
}

export interface CardTemplates {
  fullHtml: BlockPieces;
  fullText: BlockPieces;
  compactHtml: BlockPieces;
  compactText: BlockPieces;
}

/** Default RENDER_CACHE_MB. */
export const DEFAULT_CARD_CACHE_BYTES = 32 * 1024 * 1024;
/** What an entry costs beyond its encoded bytes: objects, strings of its parts, the map slot. */
const ENTRY_OVERHEAD = 3_000;

export class CardCache {
  private readonly entries = new Map<string, Entry>();
  private readonly highlighters = new BoundedCache<Highlight | null>(5_000);
  private used = 0;
  hits = 0;
  misses = 0;

  constructor(
    private readonly t: CardTemplates,
    private readonly maxBytes: number = DEFAULT_CARD_CACHE_BYTES,
    private readonly logger?: Logger,
  ) {}

  get bytes(): number {
    return this.used;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The paper's encoded card and compact line for readers whose matched topics are `topicTexts` (sorted). */
  card(paper: PaperInput, topicTexts: readonly string[]): CardBytes {
    const topicsKey = topicTexts.join('\u0001');
    const key = `${paper.url}\u0002${topicsKey}`;
    const hit = this.entries.get(key);
    if (hit !== undefined && samePaper(hit.paper, paper)) {
      this.hits++;
      // Most recently used last: Map keeps insertion order, so re-inserting moves it.
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit.card;
    }
    this.misses++;
    if (hit !== undefined) this.remove(key, hit);
    const parts = buildParts(paper, this.highlighter(topicsKey, topicTexts), EMAIL_ABSTRACT_CHARS);
    const view = { n: 0, p: parts, matched: [] };
    const full = encodeBlock(this.t.fullHtml, this.t.fullText, view);
    const compact = encodeBlock(this.t.compactHtml, this.t.compactText, view);
    const card: CardBytes = { full, compact, parts };
    const entry: Entry = { paper, card, bytes: ENTRY_OVERHEAD + blockBytes(full) + blockBytes(compact) };
    this.entries.set(key, entry);
    this.used += entry.bytes;
    for (const [k, e] of this.entries) {
      if (this.used <= this.maxBytes || k === key) break;
      this.remove(k, e);
    }
    return card;
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

function encodeBlock(html: BlockPieces, text: BlockPieces, view: object): EncodedBlock {
  let htmlBytes = 0;
  const encodedHtml = html.map((piece) => {
    if (piece.reader) return null;
    const seg = encodeSegment(piece.fill(view));
    htmlBytes += seg.textBytes;
    return seg;
  });
  const encodedText = text.map((piece) => (piece.reader ? null : encodeSegment(piece.fill(view))));
  return { html: encodedHtml, text: encodedText, htmlBytes };
}

function blockBytes(b: EncodedBlock): number {
  let n = 0;
  for (const s of b.html) n += s?.bytes.length ?? 0;
  for (const s of b.text) n += s?.bytes.length ?? 0;
  return n;
}
