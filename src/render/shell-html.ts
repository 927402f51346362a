// The digest's shell (everything around the cards: head and styles, header, compact heading, button,
// suggestions, footer) as 7bit HTML, with what is the same in every message encoded once per thread.
//
// Why: the shell is ~10 KB of HTML, of which a reader's own values (address, links, counts, subject) are
// a few hundred bytes; encoding it whole per message was the largest single cost of a friendly digest's
// render once the cards were cached. The HTML shell is filled with every string value wrapped in marks
// (\u0001…\u0002, which escaping leaves alone and no template or feed text holds); what lies between
// values is the template's own text, looked up here and encoded once per layout state it starts in (a
// piece after a link starts inside an attribute value); only the values are encoded per message.
// Measured: BENCHMARKS.md § Why the code is shaped this way, shell-html.ts.
import { encodeHtmlSegment, htmlWireLength, type HtmlBodyWriter, type HtmlSegment } from './encode/html-body.ts';

const OPEN = '\u0001';
const CLOSE = '\u0002';

/** A value of the HTML shell's view, marked as the reader's own (empty stays empty: `{{#if}}` reads it). */
export function own(value: string): string {
  return value === '' ? '' : OPEN + value + CLOSE;
}

/** Template text between values, per layout state: a few dozen entries (one per branch of the shell). */
const segments = new Map<number, Map<string, HtmlSegment>>();
/** Bound on the entries per state: a template whose static text varied per message must not grow it. */
const MAX_ENTRIES = 512;

function segmentOf(text: string, startKey: number): HtmlSegment {
  let byText = segments.get(startKey);
  if (byText === undefined) segments.set(startKey, (byText = new Map()));
  let seg = byText.get(text);
  if (seg === undefined) {
    if (byText.size >= MAX_ENTRIES) byText.clear();
    seg = encodeHtmlSegment(text, startKey);
    byText.set(text, seg);
  }
  return seg;
}

/** Writes a filled (marked) piece of the shell: template text by reference, the reader's values encoded. */
export function addShellHtml(w: HtmlBodyWriter, filled: string): void {
  let at = 0;
  for (;;) {
    const open = filled.indexOf(OPEN, at);
    const end = open < 0 ? filled.length : open;
    if (end > at) w.addSegment(segmentOf(filled.slice(at, end), w.layoutKey));
    if (open < 0) return;
    const close = filled.indexOf(CLOSE, open + 1);
    w.addText(filled.slice(open + 1, close));
    at = close + 1;
  }
}

/** The size a filled (marked) shell adds to the HTML, as HtmlBodyWriter.size counts it. */
export function shellHtmlSize(filled: string): number {
  let size = 0;
  let at = 0;
  for (;;) {
    const open = filled.indexOf(OPEN, at);
    const end = open < 0 ? filled.length : open;
    // Size does not depend on the layout state: any entry of the text will do.
    if (end > at) size += staticSize(filled.slice(at, end));
    if (open < 0) return size;
    const close = filled.indexOf(CLOSE, open + 1);
    size += htmlWireLength(filled.slice(open + 1, close));
    at = close + 1;
  }
}

const sizes = new Map<string, number>();

function staticSize(text: string): number {
  let n = sizes.get(text);
  if (n === undefined) {
    if (sizes.size >= MAX_ENTRIES) sizes.clear();
    n = htmlWireLength(text);
    sizes.set(text, n);
  }
  return n;
}
