// Bodies joined from pieces encoded apart (per-run card bytes + per-reader text) must be valid
// quoted-printable that decodes to exactly the joined text, lines within 76 characters, whatever the
// column each piece starts at; a real MIME parser (postal-mime) reads the message as written.
import PostalMime from 'postal-mime';
import { describe, expect, it } from 'vitest';
import { createMessageBuilder } from '../../src/mail/raw-message.ts';
import { ArenaPool, decodeQuotedPrintable, encodeSegment, leadSegment, QpBodyWriter } from '../../src/render/encode/qp-body.ts';
import { encodeQuotedPrintable } from '../../src/mail/quoted-printable.ts';

const pieces = [
  '<p style="margin:0">Ünïcödé title with = signs and a long run of words that goes past the line length for sure',
  '3. ',
  '.leading dot at a line start\n',
  'tail   \n',
  'x'.repeat(200),
  ' <a href="https://example.org/mute/tok?x=1">mute</a> ',
  '😀 emoji and\r\ncrlf\n\n',
  '=',
];

function assertLines(encoded: Buffer): void {
  for (const line of encoded.toString('latin1').split('\r\n')) {
    expect(line.length).toBeLessThanOrEqual(76);
    expect(line).not.toMatch(/[^\x20-\x7e]/);
    expect(line).not.toMatch(/[ \t]$/);
  }
}

describe('quoted-printable bodies joined from pieces', () => {
  it('any mix of shared segments and reader text decodes to the joined text, lines ≤ 76', () => {
    // Every split of the pieces into "shared" (encoded once) and "reader" (encoded in place).
    for (let mask = 0; mask < 1 << pieces.length; mask++) {
      const w = new QpBodyWriter(new ArenaPool(64, 4)); // tiny arenas, so new ones are started on the way
      for (let i = 0; i < pieces.length; i++) {
        if (mask & (1 << i)) w.addSegment(encodeSegment(pieces[i]!));
        else w.addText(pieces[i]!);
      }
      const joined = pieces.join('');
      expect(decodeQuotedPrintable(w.parts)).toBe(joined.replace(/\r\n/g, '\n'));
      expect(w.textBytes).toBe(Buffer.byteLength(joined));
      const all = Buffer.concat(w.parts);
      expect(w.bytes).toBe(all.length);
      assertLines(all);
    }
  });

  it('reader values and line breaks written between segments, in runs or not, from any column: same text, valid lines', () => {
    const values = ['https://digest.example.org/feedback/12.view-9.0.abc/5/more', '.dotted.value.' + 'y'.repeat(70), 'a=b', 'Zoë Ångström', '7'];
    for (let start = 0; start < 80; start += 3) {
      for (const run of [false, true]) {
        const w = new QpBodyWriter(new ArenaPool(256, 4));
        w.addText('z'.repeat(start));
        if (run) w.beginRun(4096);
        let joined = 'z'.repeat(start);
        for (const v of values) {
          w.addSegment(encodeSegment('   More like this: '));
          w.addText(v);
          w.addText('\n');
          joined += `   More like this: ${v}\n`;
        }
        if (run) w.endRun();
        expect(decodeQuotedPrintable(w.parts)).toBe(joined);
        expect(w.textBytes).toBe(Buffer.byteLength(joined));
        const all = Buffer.concat(w.parts);
        expect(w.bytes).toBe(all.length);
        assertLines(all);
        expect(all.toString('latin1')).not.toMatch(/\r\n\./);
        if (run) expect(w.parts.length).toBeLessThanOrEqual(2);
      }
    }
  });

  it('nested runs (a text card and its reader part), across arenas too small for them: the same bytes as written without runs', () => {
    // A card's run holds its shared segments and its reader part's own run (digest-email.ts addTextBlock);
    // an inner run or a shared segment that does not fit goes on in a new arena, and no byte may be lost
    // or doubled at the switch.
    const write = (w: QpBodyWriter, runs: boolean, need: number) => {
      for (let card = 0; card < 12; card++) {
        if (runs) w.beginRun(need);
        w.addSegment(encodeSegment(`${card}. A card's shared title, long enough to wrap somewhere = here\n`));
        if (runs) w.beginRun(need);
        w.addText(`Matched: phrase ${card}\n`);
        w.addPlain(`https://digest.example.org/feedback/1.v2.abc/${card}/more`);
        if (runs) w.endRun();
        w.addSegment(encodeSegment(`\n${'shared tail '.repeat(card)}\n`));
        if (runs) w.endRun();
      }
    };
    const plainWriter = new QpBodyWriter();
    write(plainWriter, false, 0);
    const expected = Buffer.concat(plainWriter.parts);
    for (const arena of [64, 128, 300, 4096]) {
      for (const need of [0, 40, 200]) {
        const w = new QpBodyWriter(new ArenaPool(arena, 2));
        write(w, true, need);
        const all = Buffer.concat(w.parts);
        expect(all.equals(expected)).toBe(true);
        expect(w.bytes).toBe(all.length);
        // Bytes written one after another in one arena are one part: 12 cards in a 4 KB arena, one part.
        if (arena === 4096) expect(w.parts.length).toBe(1);
      }
    }
  });

  it('a plain value copied a line at a time (addPlain) is byte for byte what encoding it gives, from every column', () => {
    // Printable ASCII without '=': canonical links (one over two lines from most columns, dots that land at
    // a line's start), a number, a value exactly one line long.
    const plain = [
      'https://digest.example.org/feedback/8.v8.ZGtQwP2v2PpBOh88oz-tIw/695/more',
      `${'a'.repeat(74)}.${'b'.repeat(74)}.${'.'.repeat(80)}`,
      '42',
      'x'.repeat(75),
      '.',
    ];
    for (const value of plain) {
      for (let start = 0; start <= 75; start++) {
        for (const run of [false, true]) {
          const write = (plainCopy: boolean) => {
            const w = new QpBodyWriter(new ArenaPool(128, 4)); // arenas smaller than some values' encoding
            w.addText('z'.repeat(start));
            if (run) w.beginRun(64);
            if (plainCopy) w.addPlain(value);
            else w.addText(value);
            w.addSegment(encodeSegment(' tail'));
            if (run) w.endRun();
            return { bytes: Buffer.concat(w.parts), col: w.column, textBytes: w.textBytes, counted: w.bytes };
          };
          const copied = write(true);
          const encoded = write(false);
          expect(copied.bytes.toString('latin1'), `${value.slice(0, 12)}… from column ${start}`).toBe(encoded.bytes.toString('latin1'));
          expect([copied.col, copied.textBytes, copied.counted]).toEqual([encoded.col, encoded.textBytes, copied.bytes.length]);
          assertLines(copied.bytes);
        }
      }
    }
  });

  it('a line break and a segment copied as one (addLineThen): CRLF, then the segment as at a line start, from any column', () => {
    for (const text of ['   Less like this: ', '.dot first', '', 'y'.repeat(90)]) {
      const seg = encodeSegment(text);
      for (const start of [0, 5, 75]) {
        const w = new QpBodyWriter();
        w.addText('z'.repeat(start));
        w.addLineThen(seg, leadSegment(seg));
        const bytes = Buffer.concat(w.parts);
        expect(bytes.toString('latin1')).toBe(`${'z'.repeat(start)}\r\n${seg.atLineStart.toString('latin1')}`);
        expect(decodeQuotedPrintable(w.parts)).toBe(`${'z'.repeat(start)}\n${text}`);
        expect([w.column, w.textBytes, w.bytes]).toEqual([seg.endCol, start + 1 + Buffer.byteLength(text), bytes.length]);
        assertLines(bytes);
      }
    }
  });

  it('a long reader text, encoded in pieces from pooled arenas, is byte for byte the text encoded at once', () => {
    // 40 KB of everything the cut must respect: blanks, CRLF, emoji (surrogate pairs), "=", leading dots,
    // long runs without '>' or a line break. Reused arenas must not leak one email's bytes into another.
    const pool = new ArenaPool(32 * 1024, 4);
    for (let round = 0; round < 3; round++) {
      let text = '';
      for (let i = 0; text.length < 40_000; i++) text += pieces[(i * 7 + round) % pieces.length]! + (i % 5 === 0 ? ' '.repeat(3) : '') + '😀'.repeat(i % 3);
      for (const startCol of [0, 17]) {
        const w = new QpBodyWriter(pool);
        if (startCol > 0) w.addText('x'.repeat(startCol));
        w.addText(text);
        const whole = encodeQuotedPrintable('x'.repeat(startCol) + text);
        expect(Buffer.concat(w.parts).equals(whole), `round ${round}, column ${startCol}`).toBe(true);
        w.release();
      }
    }
  });

  it('a shared segment joined at column 0 is byte for byte the whole text encoded at once', () => {
    const text = `${pieces[0]}\n`;
    const w = new QpBodyWriter();
    w.addSegment(encodeSegment(text));
    w.addSegment(encodeSegment(text));
    expect(Buffer.concat(w.parts).equals(encodeQuotedPrintable(text + text))).toBe(true);
  });

  it('a message built from encoded parts is read back by postal-mime as the same HTML and text', async () => {
    const html = new QpBodyWriter();
    const text = new QpBodyWriter();
    for (const p of pieces) {
      html.addSegment(encodeSegment(p));
      html.addText(`<b>${p.slice(0, 5)}</b>`);
      text.addText(p);
      text.addSegment(encodeSegment(p));
    }
    const builder = createMessageBuilder({ from: 'Paper Digest <digest@example.org>' });
    const { raw } = builder.build(
      { to: 'ada@example.org', subject: 'Joined', html: 'unused', text: 'unused', encoded: { html: html.parts, text: text.parts } },
      'id-1@example.org',
      new Date('2025-11-25T07:00:00Z'),
    );
    const parsed = await PostalMime.parse(raw);
    // postal-mime ends every part with a line break (it does so for the strings path too).
    expect(parsed.html).toBe(`${decodeQuotedPrintable(html.parts)}\n`);
    expect(parsed.text?.replace(/\r\n/g, '\n')).toBe(`${decodeQuotedPrintable(text.parts)}\n`);
    expect(parsed.html).toContain('😀 emoji');
  });
});
