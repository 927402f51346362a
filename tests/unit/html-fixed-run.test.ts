// A card's shared run laid out once for any column (src/render/encode/html-fixed-run.ts) against the same run joined
// segment by segment (HtmlBodyWriter.addSegment, the path it replaces): at every column a body can be at
// and for every set of lit highlights, the same HTML once decoded, the same sizes (what the clipping cap
// counts), and a valid 7bit layout: every line within HTML_MAX_LINE, none starting with '.' or '-'.
import { describe, expect, it } from 'vitest';
import { decodeHtmlBody, encodeHtmlSegment, HtmlBodyWriter, HTML_MAX_LINE } from '../../src/render/encode/html-body.ts';
import { encodeFixedRun, fixedRunFor, fixedRunHtml, type RunSlot } from '../../src/render/encode/html-fixed-run.ts';
import { HIGHLIGHT_CLOSE, HIGHLIGHT_OPEN } from '../../src/render/card-highlight.ts';

const TAGS = { open: HIGHLIGHT_OPEN, close: HIGHLIGHT_CLOSE };

/** A card's shared run as the card cache cuts it: text pieces and highlight slots around words. */
function cardRun(words: number, highlightEvery: number, word: (i: number) => string): Array<string | RunSlot> {
  const parts: Array<string | RunSlot> = ['<div class="pd-c"> <h2><a href="https://arxiv.org/abs/2511.1">'];
  let slot = 0;
  let text = '';
  for (let i = 0; i < words; i++) {
    if (i % highlightEvery === 3) {
      parts.push(text, { slot, open: true }, word(i), { slot, open: false });
      slot++;
      text = ' ';
    } else text += `${word(i)} `;
    if (i === 12) text += '</a></h2> <p class="pd-x">';
  }
  parts.push(`${text}</p> <p class="pd-muted">▲ 12 upvotes</p> `);
  return parts.filter((p) => p !== '');
}

/** The run joined the old way, from column `col`, with `lit` slots' tags. */
function joinedBySegments(parts: Array<string | RunSlot>, lit: boolean[], col: string): HtmlBodyWriter {
  const w = new HtmlBodyWriter();
  w.addText(col);
  for (const p of parts) {
    if (typeof p === 'string') w.addSegment(encodeHtmlSegment(p));
    else if (lit[p.slot]) w.addSegment(encodeHtmlSegment(p.open ? HIGHLIGHT_OPEN : HIGHLIGHT_CLOSE));
  }
  w.addText(AFTER);
  return w;
}

/** What follows the run: text the writer lays out from the column the run left it at. */
const AFTER = ` <p>after ${'word '.repeat(400)}</p>`;

function joinedFixed(parts: Array<string | RunSlot>, lit: boolean[], col: string): HtmlBodyWriter {
  const run = fixedRunFor(parts, TAGS);
  expect(run).not.toBeNull();
  const w = new HtmlBodyWriter();
  w.addText(col);
  expect(w.addFixed(run!, lit)).toBe(true);
  w.addText(AFTER);
  return w;
}

function linesOf(w: HtmlBodyWriter): string[] {
  return Buffer.concat(w.parts).toString('latin1').split('\r\n');
}

const WORDS = ['reinforcement', 'learning', 'Élan', 'vital', 'résumé', 'of', '.5', 'accuracy', '-3', 'dB', '😀', '強化学習'];

const PHRASE = 'group relative policy optimization, a phrase that a line break may fall inside';

/**
 * A diverse card's run: nearly every word a highlighted stretch (the ~50 phrases that matched its paper),
 * a blank or a comma between two, some side by side (two topics' words with no text between), some before
 * '.' or '-' (no break there). Laid out without knowing what follows a piece, no line of it finds a break between column 760
 * and 990 (encodeFixedRun says null).
 */
const DENSE_WORDS = ['reinforcement', 'learning', 'policy', 'of', '.5', 'accuracy', '-3', 'dB', 'vision', 'language', 'résumé'];

function denseRun(words: number): Array<string | RunSlot> {
  const parts: Array<string | RunSlot> = ['<div class="pd-c"> <p class="pd-x">'];
  for (let i = 0; i < words; i++) {
    parts.push({ slot: i, open: true }, DENSE_WORDS[i % DENSE_WORDS.length]!, { slot: i, open: false });
    if (i % 7 === 0) continue; // side by side with the next stretch
    parts.push(i % 5 === 1 ? ', ' : ' ');
  }
  parts.push('</p> </div> ');
  return parts;
}

it('a run of stretches side by side, laid out without looking ahead, is declined (why fixedRunFor looks ahead)', () => {
  expect(encodeFixedRun(denseRun(400), TAGS)).toBeNull();
  expect(fixedRunFor(cardRun(400, 7, (i) => WORDS[i % WORDS.length]!), TAGS)).toEqual(encodeFixedRun(cardRun(400, 7, (i) => WORDS[i % WORDS.length]!), TAGS));
});

describe.each([
  ['words', cardRun(400, 7, (i) => WORDS[i % WORDS.length]!)],
  ['phrases', cardRun(400, 5, (i) => (i % 5 === 3 ? PHRASE : WORDS[i % WORDS.length]!))],
  ['side by side', denseRun(400)],
])('a shared run laid out once for any column (highlighted %s)', (_, parts) => {
  const slots = parts.filter((p) => typeof p !== 'string').length / 2;
  const patterns: Array<[string, boolean[]]> = [
    ['none lit', Array.from({ length: slots }, () => false)],
    ['all lit', Array.from({ length: slots }, () => true)],
    ['every third lit', Array.from({ length: slots }, (_, i) => i % 3 === 0)],
  ];
  // Columns a body can be at when a card comes: its start, mid-line, and as far as a head still fits.
  const columns = ['', 'x'.repeat(400), `<p>${'y'.repeat(HTML_MAX_LINE - 10)}`];

  for (const [name, lit] of patterns) {
    for (const col of columns) {
      it(`${name}, from column ${col.length}: the same HTML and sizes as segment by segment, lines within the limit`, () => {
        const a = joinedBySegments(parts, lit, col);
        const b = joinedFixed(parts, lit, col);
        expect(b.fallback).toBe(false);
        expect(decodeHtmlBody(Buffer.concat(b.parts))).toBe(decodeHtmlBody(Buffer.concat(a.parts)));
        expect(b.size).toBe(a.size);
        expect(b.textBytes).toBe(a.textBytes);
        expect(b.size).toBe(Buffer.concat(b.parts).toString('latin1').replace(/\r\n/g, '\n').length);
        for (const line of linesOf(b)) {
          expect(line.length).toBeLessThanOrEqual(HTML_MAX_LINE);
          expect(line).not.toMatch(/^[.-]/);
          expect(line).toMatch(/^[\x20-\x7e\t]*$/);
        }
        // The body goes on from the column the run left: the text after it breaks where the layout says
        // (a space in text, at the first one past column 820), which it would not if that column were wrong.
        const lines = linesOf(b);
        const joined = lines.findIndex((l) => l.includes('<p>after'));
        expect(lines[joined]!.length).toBeGreaterThanOrEqual(820);
        expect(lines[joined]!.length).toBeLessThanOrEqual(826);
      });
    }
  }

  it('is declined when its head would not fit on the current line, and then written as its text', () => {
    const run = fixedRunFor(parts, TAGS)!;
    const lit = patterns[2]![1];
    const col = `<p>${'z'.repeat(HTML_MAX_LINE - 3)}`;
    const w = new HtmlBodyWriter();
    w.addText(col);
    const before = w.bytes;
    expect(w.addFixed(run, lit)).toBe(false);
    expect(w.bytes).toBe(before);
    // What the card writer does then (digest-email.ts): the run's HTML, encoded from where the body is.
    w.addText(fixedRunHtml(run, lit));
    w.addText(AFTER);
    const a = joinedBySegments(parts, lit, col);
    expect(decodeHtmlBody(Buffer.concat(w.parts))).toBe(decodeHtmlBody(Buffer.concat(a.parts)));
    expect(w.size).toBe(a.size);
    // At that column neither way can break before the head (no usable space since the line began): the
    // part goes as quoted-printable of the same bytes, both ways (html-body.ts, its header).
    expect(a.fallback).toBe(true);
    expect(w.encoded().transfer).toBe('quoted-printable');
  });

  it('is not made when it cannot be laid out so: a slot in its head, or a line with no usable space', () => {
    expect(fixedRunFor([{ slot: 0, open: true }, 'word', { slot: 0, open: false }, ' rest'], TAGS)).toBeNull();
    expect(fixedRunFor(['<div class="pd-c"> ', { slot: 0, open: true }, 'x'.repeat(1200), { slot: 0, open: false }], TAGS)).toBeNull();
    expect(fixedRunFor(['<dïv class="pd-c"> ', { slot: 0, open: true }, 'a', { slot: 0, open: false }], TAGS)).toBeNull();
  });
});
