// A topic list's HTML run (topic-runs.ts) laid out once per run of the service, not once per digest.
//
// A run is a card part's stretch of matched topics: per topic its text and its mute link, with the
// template's texts between. Its topic texts recur across readers (many follow the same phrases); its mute
// links never do (each carries the reader's manage token and topic id). But a mute link is printable ASCII
// that the 7bit layout copies as it is (html-layout.ts encodeInto's hot path: no state change, no place to
// break), so where it lands and how the run is laid out depend on its length only. So the run is laid out
// once per (part, topic texts, link lengths) with placeholders for the links, and per digest only copied
// and the links written over the placeholders' bytes. Measured (callgrind, `bench/load-render-loop.mjs`
// over 500 rows of a 20k broad edition): laying the runs out per digest was 5.5% of the instructions a
// broad digest costs to load, render and build; with the templates, 3,676K -> 3,468K per digest (-5.7%);
// a friendly digest has fewer and shorter runs: 2,494K -> 2,479K.
//
// Exact by construction, checked once per template: the layout with two different placeholders ('a…',
// 'b…') must differ in exactly the links' bytes, one stretch per link of its length, and the template
// filled with the first digest's links must equal that digest's run laid out directly; otherwise the key
// is remembered as one to lay out per digest.
import { encodeHtmlSegment, htmlWireLength, type HtmlSegment } from '../mail/html-body.ts';

/** What a template needs of a shaped part (reader-shape.ts ShapedPart; topic-runs.ts RunPart). */
export interface TemplatePart {
  texts: string[];
  slots: number[];
  run?: { from: number; to: number } | undefined;
}

/** A run of the HTML: its segment, and the size its values add (as filledSize sums them per value). */
export interface HtmlRun {
  seg: HtmlSegment;
  valuesSize: number;
}

interface Template {
  seg: HtmlSegment;
  valuesSize: number;
  /** Output offset of each link's bytes, in the order of the run's link slots. */
  holes: number[];
}

/** Default byte budget of one renderer's templates (one sending thread). */
export const DEFAULT_RUN_TEMPLATE_BYTES = 2 * 1024 * 1024;
/**
 * What an entry costs beyond its bytes and key: the segment object, its two typed arrays (a JS object and a
 * backing store each), the holes, the map slot. Measured: 5,000 templates of three topics took 2.0-2.1 KB
 * each of heap and external memory (process.memoryUsage after a full collection), and this counts them at
 * 2.1 KB. So 2 MB holds ~1,000: in a 20k broad edition 79% of the runs came from a template (90% with
 * 2,800), in a 20k friendly one 89%.
 */
const ENTRY_OVERHEAD = 1_500;

/** Printable ASCII that the layout copies as it is (html-layout.ts encodeInto's hot path). */
const HOT = /^[!#-&(-;=?-~]+$/;

/**
 * The templates of one renderer, bounded in bytes: past the budget, the oldest go first. A key that could
 * not be made a template is remembered (null) so that it is not tried again.
 */
export class RunTemplates {
  private readonly entries = new Map<string, Template | null>();
  private readonly partIds = new WeakMap<TemplatePart, number>();
  private nextPartId = 0;
  private used = 0;
  hits = 0;
  misses = 0;

  constructor(private readonly maxBytes = DEFAULT_RUN_TEMPLATE_BYTES) {}

  get bytes(): number {
    return this.used;
  }

  /**
   * The run of `part` with `values` (per topic its escaped mute link, then its escaped text, as
   * TopicRuns.html; slot s is values[s - first]), laid out from `startKey`; undefined when it cannot come
   * from a template (a link that is not plain ASCII, a text with a control character): lay it out directly.
   */
  htmlRun(part: TemplatePart, values: readonly string[], first: number, startKey: number): HtmlRun | undefined {
    const span = part.run!;
    let partId = this.partIds.get(part);
    if (partId === undefined) {
      partId = this.nextPartId++;
      this.partIds.set(part, partId);
    }
    let key = `${partId}\u0002${startKey}`;
    for (let k = span.from; k <= span.to; k++) {
      const i = part.slots[k]! - first;
      const v = values[i]!;
      if (i % 2 === 0) {
        if (!HOT.test(v)) return undefined;
        key += `\u0001\u0000${v.length}`;
      } else {
        if (v.includes('\u0000') || v.includes('\u0001')) return undefined;
        key += `\u0001${v}`;
      }
    }
    const t = this.entries.get(key);
    if (t === null) return undefined;
    if (t !== undefined) {
      this.hits++;
      return { seg: fill(t, part, values, first), valuesSize: t.valuesSize };
    }
    this.misses++;
    const made = makeTemplate(part, values, first, startKey);
    this.remember(key, made);
    return made === null ? undefined : { seg: fill(made, part, values, first), valuesSize: made.valuesSize };
  }

  private remember(key: string, t: Template | null): void {
    const cost = ENTRY_OVERHEAD + 2 * key.length + (t === null ? 0 : t.seg.bytes.length + t.seg.breaks.byteLength + 8 * t.holes.length);
    if (cost > this.maxBytes) return;
    this.used += cost;
    this.entries.set(key, t);
    for (const [k, e] of this.entries) {
      if (this.used <= this.maxBytes) break;
      this.entries.delete(k);
      this.used -= ENTRY_OVERHEAD + 2 * k.length + (e === null ? 0 : e.seg.bytes.length + e.seg.breaks.byteLength + 8 * e.holes.length);
    }
  }
}

/** The run's text with `link(i, v)` in place of each mute link (values index i, even). */
function runText(part: TemplatePart, values: readonly string[], first: number, link: (v: string) => string): string {
  const { from, to } = part.run!;
  let s = '';
  for (let k = from; k <= to; k++) {
    const i = part.slots[k]! - first;
    if (k > from) s += part.texts[k]!;
    s += i % 2 === 0 ? link(values[i]!) : values[i]!;
  }
  return s;
}

/** The run laid out as it always was (topic-runs.ts did this per digest). */
export function layOutRun(part: TemplatePart, values: readonly string[], first: number, startKey: number): HtmlRun {
  const { from, to } = part.run!;
  let valuesSize = 0;
  for (let k = from; k <= to; k++) valuesSize += htmlWireLength(values[part.slots[k]! - first]!);
  return { seg: encodeHtmlSegment(runText(part, values, first, (v) => v), startKey), valuesSize };
}

function makeTemplate(part: TemplatePart, values: readonly string[], first: number, startKey: number): Template | null {
  const a = encodeHtmlSegment(runText(part, values, first, (v) => 'a'.repeat(v.length)), startKey);
  const b = encodeHtmlSegment(runText(part, values, first, (v) => 'b'.repeat(v.length)), startKey);
  if (!sameLayout(a, b)) return null;
  // The links' lengths, in order; their bytes must be exactly the stretches where a and b differ.
  const lengths: number[] = [];
  for (let k = part.run!.from; k <= part.run!.to; k++) {
    const i = part.slots[k]! - first;
    if (i % 2 === 0) lengths.push(values[i]!.length);
  }
  const holes: number[] = [];
  for (let p = 0; p < a.bytes.length; ) {
    if (a.bytes[p] === b.bytes[p]) {
      p++;
      continue;
    }
    const len = lengths[holes.length];
    if (len === undefined) return null;
    for (let q = p; q < p + len; q++) if (a.bytes[q] !== 0x61 || b.bytes[q] !== 0x62) return null;
    holes.push(p);
    p += len;
  }
  if (holes.length !== lengths.length) return null;
  const direct = layOutRun(part, values, first, startKey);
  // Kept bytes of their own: a.bytes is a slice of Buffer's shared 8 KB pool, and a template outlives the
  // per-digest garbage around it there, so each one kept a whole pool slab alive. Measured: +50 MB of peak
  // RSS in a 30k broad `digest run` (2,800 templates per thread), and none with their own memory.
  const own = Buffer.allocUnsafeSlow(a.bytes.length);
  a.bytes.copy(own);
  const t: Template = { seg: { ...a, bytes: own }, valuesSize: direct.valuesSize, holes };
  const filled = fill(t, part, values, first);
  if (!sameLayout(filled, direct.seg) || !filled.bytes.equals(direct.seg.bytes)) return null;
  return t;
}

/** The template's bytes with this digest's links written over the placeholders. */
function fill(t: Template, part: TemplatePart, values: readonly string[], first: number): HtmlSegment {
  const bytes = Buffer.allocUnsafe(t.seg.bytes.length);
  t.seg.bytes.copy(bytes);
  let h = 0;
  const { from, to } = part.run!;
  for (let k = from; k <= to; k++) {
    const i = part.slots[k]! - first;
    if (i % 2 === 0) bytes.write(values[i]!, t.holes[h++]!, 'latin1');
  }
  return { ...t.seg, bytes };
}

/** Everything but the bytes the same (the links' stretches may differ). */
function sameLayout(x: HtmlSegment, y: HtmlSegment): boolean {
  if (x.bytes.length !== y.bytes.length || x.breaks.length !== y.breaks.length) return false;
  for (let i = 0; i < x.breaks.length; i++) if (x.breaks[i] !== y.breaks[i]) return false;
  return (
    x.firstLine === y.firstLine &&
    x.multiline === y.multiline &&
    x.endCol === y.endCol &&
    x.startKey === y.startKey &&
    x.endState === y.endState &&
    x.rawNext === y.rawNext &&
    x.fallback === y.fallback &&
    x.textBytes === y.textBytes &&
    x.size === y.size
  );
}
