// The digest's shell: everything around the cards (head and styles, header, intro, compact heading, the
// button to the web view, "You may also like", footer), for one reader and one layout (how many cards in
// full and in short).
//
// Filled by Handlebars once per shape, as the reader parts are (reader-shape.ts): the view's values (the
// reader's address, links, subject, counts, suggestions) are replaced by marks, and what decides how the
// shell reads apart from them (which values are empty, how many suggestions, whether there are compact
// lines and a button) is the shape's key. Per message only the values are escaped and written between
// the shape's texts, which are encoded once (HTML as 7bit segments): the values are a few hundred bytes
// of the shell's ~10 KB. Measured: BENCHMARKS.md § Why the code is shaped this way, digest-shell.ts.
//
// A template that writes a value unescaped (`{{{…}}}` or `{{&…}}`, but for the card slots) gets no
// shapes: such a shell is filled per message with its values marked (shell-html.ts), as before.
import type { HtmlBodyWriter } from './encode/html-body.ts';
import { htmlWireLength } from './encode/html-body.ts';
import { addShellHtml, own, shellHtmlSize } from './shell-html.ts';
import { fillPart, htmlPart, mark, MAX_SLOTS, parse, shapedMaxBytes, writeShapedHtml, type ShapedPart } from './reader-shape.ts';
import { escapeValue, type CompiledTemplates, type Fill } from './render-templates.ts';
import { AppError } from '../errors.ts';
import { plural } from '../words.ts';

/** Stand in for the card lists while the shell is filled; cannot occur in escaped output. */
const CARDS_MARK = '\u0000cards\u0000';
const COMPACT_MARK = '\u0000compact\u0000';

/** The reader's values of the shell, before any layout (digest-email.ts makes them). */
export interface ShellValues {
  subject: string;
  preview: string;
  edition: string;
  email: string;
  intro: string;
  /** Per topic, how many papers matched ("diffusion models 12 · agents 7 · 3 you may also like"); '' for none. */
  glance: string;
  /** The best few papers' titles at the top, so that the first phone screen shows them. */
  picks: Array<{ url: string; title: string }>;
  links: { preferences: string; unsubscribe: string; webView: string; home: string };
  suggestions: ShellPaper[];
  /** "From authors you follow" (DigestView.followed): `why` names the followed author. */
  followed: ShellPaper[];
}

/** A paper the shell lists apart from the cards: a suggestion, or a followed author's. */
export type ShellPaper = { p: { url: string; title: string; authors: string }; why: string; fb: { more: string; less: string; follow: string | null; followName: string } | null };

export interface DigestShell {
  /** Size of the HTML shell as sent (what the clipping size counts) for this layout. */
  size(full: number, compact: number): number;
  /** Writes piece k of the HTML shell (0: before the cards, 1: between cards and compact lines, 2: after). */
  writeHtml(w: HtmlBodyWriter, full: number, compact: number, piece: 0 | 1 | 2): void;
  /** The text shell's three pieces. */
  text(full: number, compact: number): [string, string, string];
}

type Layout = (full: number, compact: number, marks: boolean, v: (s: string) => string) => object;

/** One reader's shell: by shapes when the templates allow it, else filled per layout. */
export function digestShell(t: CompiledTemplates, values: ShellValues, total: number, shapes: ShellShapes | undefined): DigestShell {
  const layout: Layout = (full, compact, marks, v) => {
    const hidden = total - full - compact;
    return {
      subject: v(values.subject),
      preview: v(values.preview),
      edition: v(values.edition),
      email: v(values.email),
      intro: v(values.intro),
      glance: v(values.glance),
      picks: values.picks.map((k) => ({ url: v(k.url), title: v(k.title) })),
      links: { preferences: v(values.links.preferences), unsubscribe: v(values.links.unsubscribe), webView: v(values.links.webView), home: v(values.links.home) },
      suggestions: values.suggestions.map((s) => shellPaper(s, v)),
      followed: values.followed.map((s) => shellPaper(s, v)),
      cards: marks ? CARDS_MARK : '',
      compact: marks ? COMPACT_MARK : '',
      compactCount: compact,
      compactHeading: v(compact > 0 ? `${plural(compact, 'more paper', 'more papers')} by topic` : ''),
      more: hidden + compact,
      moreLabel: v(hidden > 0 ? `${plural(hidden, 'more paper', 'more papers')} in this digest` : compact > 0 ? `All ${total} papers with their abstracts` : ''),
    };
  };
  return shapes?.usable ? shapedShell(shapes, layout) : filledShell(t, layout);
}

function shellPaper(s: ShellPaper, v: (s: string) => string): object {
  return { p: { url: v(s.p.url), title: v(s.p.title), authors: v(s.p.authors) }, why: v(s.why), fb: s.fb && { ...s.fb, more: v(s.fb.more), less: v(s.fb.less) } };
}

/** The shell filled by Handlebars per layout, its values marked as the reader's own (shell-html.ts). */
function filledShell(t: CompiledTemplates, layout: Layout): DigestShell {
  const plain = (x: string) => x;
  return {
    size: (full, compact) => shellHtmlSize(t.digestShellHtml(layout(full, compact, false, own))),
    writeHtml(w, full, compact, piece) {
      addShellHtml(w, splitShell(t.digestShellHtml(layout(full, compact, true, own)))[piece]);
    },
    text: (full, compact) => splitShell(t.digestShellText(layout(full, compact, true, plain))),
  };
}

/** The shell from its shape: values between texts filled once per shape. */
function shapedShell(shapes: ShellShapes, layout: Layout): DigestShell {
  const plain = (x: string) => x;
  let last: { full: number; compact: number; made: Shaped } | undefined;
  const shaped = (full: number, compact: number): Shaped => {
    if (last?.full !== full || last.compact !== compact) last = { full, compact, made: shapes.shape(layout(full, compact, true, plain)) };
    return last.made;
  };
  // A value's size as sent, escaped: most values are the same in every layout asked about (a long digest
  // asks for several near the clipping size), so each is measured once.
  const wire = new Map<string, number>();
  const wireOf = (value: string): number => {
    let n = wire.get(value);
    if (n === undefined) wire.set(value, (n = htmlWireLength(escapeValue(value))));
    return n;
  };
  return {
    size(full, compact) {
      const { shape, values } = shaped(full, compact);
      let size = 0;
      for (const part of shape.html) {
        size += part.size;
        for (const slot of part.slots) size += wireOf(values[slot]!);
      }
      return size;
    },
    writeHtml(w, full, compact, piece) {
      const { shape, escaped } = shaped(full, compact);
      // One run: the shell's texts copied beside its values, one Buffer part instead of a view per value.
      const values = escaped();
      w.beginRun(shapedMaxBytes(shape.html[piece], values));
      writeShapedHtml(w, shape.html[piece], values);
      w.endRun();
    },
    text(full, compact) {
      const { shape, values } = shaped(full, compact);
      return [fillPart(shape.text[0], values), fillPart(shape.text[1], values), fillPart(shape.text[2], values)];
    },
  };
}

interface ShellShape {
  html: [ShapedPart, ShapedPart, ShapedPart];
  text: [ShapedPart, ShapedPart, ShapedPart];
}

interface Shaped {
  shape: ShellShape;
  values: string[];
  /** The values escaped for HTML (made once per layout, when asked). */
  escaped: () => string[];
}

/** Shapes a renderer has seen: a few dozen (suggestions 0-3, compact lines or not, button or not). */
const MAX_SHAPES = 256;

/** Shell shapes of one renderer (one thread). */
export class ShellShapes {
  private readonly map = new Map<string, ShellShape>();
  private readonly html: Fill;
  private readonly text: Fill;
  /** False when the templates write a value unescaped (see the header). */
  readonly usable: boolean;

  constructor(t: Pick<CompiledTemplates, 'digestShellHtml' | 'digestShellText' | 'digestShellSource'>) {
    this.html = t.digestShellHtml;
    this.text = t.digestShellText;
    const bare = t.digestShellSource.replaceAll('{{{cards}}}', '').replaceAll('{{{compact}}}', '');
    this.usable = !/\{\{\{|\{\{&/.test(bare);
  }

  /** The shape of a shell view (card marks in it) and this view's values, in slot order. */
  shape(view: object): Shaped {
    const values: string[] = [];
    let key = '';
    // One walk gives the key and the values. The view with marks in place of its values is made only for
    // a shape not seen yet: made for every message, its mark strings alone were ~30% of the walk.
    // Measured: BENCHMARKS.md § Why the code is shaped this way, digest-shell.ts.
    const walk = (v: unknown, marks: boolean): unknown => {
      if (typeof v === 'string') {
        if (v === '') return (key += '0'), v;
        key += '1';
        values.push(v);
        return marks ? mark(values.length - 1) : v;
      }
      if (typeof v === 'number') {
        if (v === 0 || Number.isNaN(v)) return (key += '0'), v;
        key += '1';
        values.push(String(v));
        return marks ? mark(values.length - 1) : v;
      }
      if (Array.isArray(v)) {
        key += '[';
        let out: unknown[] | undefined;
        if (marks) out = v.map((x) => walk(x, true));
        else for (const x of v) walk(x, false);
        key += ']';
        return out;
      }
      if (v !== null && typeof v === 'object') {
        key += '{';
        let out: Record<string, unknown> | undefined;
        if (marks) {
          out = {};
          for (const [k, x] of Object.entries(v)) out[k] = walk(x, true);
        } else for (const x of Object.values(v)) walk(x, false);
        key += '}';
        return out;
      }
      key += v === null ? 'n' : String(v);
      return v;
    };
    walk(view, false);
    if (values.length > MAX_SLOTS) throw new AppError('template_invalid', `digest shell: ${values.length} values, more than ${MAX_SLOTS}`);
    let shape = this.map.get(key);
    if (shape === undefined) {
      // Walked again with marks: the same key and values, made anew.
      const seen = key;
      key = '';
      values.length = 0;
      const marked = walk(view, true) as object;
      shape = this.make(marked, values);
      if (this.map.size >= MAX_SHAPES) this.map.clear();
      this.map.set(seen, shape);
    }
    let escaped: string[] | undefined;
    return { shape, values, escaped: () => (escaped ??= values.map(escapeValue)) };
  }

  private make(marked: object, values: readonly string[]): ShellShape {
    const cut = (filled: string, html: boolean): [ShapedPart, ShapedPart, ShapedPart] => {
      const part = parse(filled, values.length, html);
      if (part === null) throw new AppError('template_invalid', 'digest shell: a value mark was not where it was put');
      return splitAtCards(part, values, html);
    };
    return { html: cut(this.html(marked), true), text: cut(this.text(marked), false) };
  }
}

/** A shell part cut where the cards and the compact lines go (the slots whose value is their mark). */
function splitAtCards(part: ShapedPart, values: readonly string[], html: boolean): [ShapedPart, ShapedPart, ShapedPart] {
  const pieces: Array<{ texts: string[]; slots: number[] }> = [{ texts: [part.texts[0]!], slots: [] }];
  let sawCards = false;
  for (let k = 0; k < part.slots.length; k++) {
    const slot = part.slots[k]!;
    const value = values[slot];
    if (value === CARDS_MARK || value === COMPACT_MARK) {
      if ((value === CARDS_MARK) === sawCards) throw new AppError('template_invalid', 'digest template: the paper card block must come before the compact block');
      sawCards = true;
      pieces.push({ texts: [part.texts[k + 1]!], slots: [] });
      continue;
    }
    const cur = pieces[pieces.length - 1]!;
    cur.slots.push(slot);
    cur.texts.push(part.texts[k + 1]!);
  }
  if (!sawCards) throw new AppError('template_invalid', 'digest template: the paper card block must come before the compact block');
  // No compact lines: the template leaves their section (and its slot) out.
  while (pieces.length < 3) pieces.push({ texts: [''], slots: [] });
  const made = pieces.map((p) => (html ? htmlPart(p.texts, p.slots) : { ...p, size: 0 }));
  return [made[0]!, made[1]!, made[2]!];
}

/** The three pieces of a shell filled with the card marks in it. */
function splitShell(filled: string): [string, string, string] {
  const a = filled.indexOf(CARDS_MARK);
  const b = filled.indexOf(COMPACT_MARK);
  // No compact lines: the template leaves their section (and its slot) out.
  if (a >= 0 && b < 0) return [filled.slice(0, a), filled.slice(a + CARDS_MARK.length), ''];
  if (a < 0 || b < a) throw new AppError('template_invalid', 'digest template: the paper card block must come before the compact block');
  return [filled.slice(0, a), filled.slice(a + CARDS_MARK.length, b), filled.slice(b + COMPACT_MARK.length)];
}
