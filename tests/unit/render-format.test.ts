// The small text helpers behind the cards: what a reader sees when feeds send odd data.
import { describe, expect, it } from 'vitest';
import {
  authorsLine,
  digestSubject,
  displayDate,
  escapeHtml,
  paperDaysLabel,
  safeHref,
  tidy,
  trimOnWord,
  wrapText,
} from '../../src/render/render-format.ts';
import { highlightHtml } from '../../src/render/render-parts.ts';

describe('safeHref', () => {
  it('keeps http(s) links and turns everything else into #', () => {
    expect(safeHref('https://arxiv.org/abs/2511.01234')).toBe('https://arxiv.org/abs/2511.01234');
    expect(safeHref('  HTTP://example.org/a b ')).toBe('http://example.org/a%20b');
    for (const bad of [
      'javascript:alert(1)',
      ' JaVaScRiPt:alert(1)',
      'java\nscript:alert(1)',
      'data:text/html,<script>',
      'vbscript:x',
      '//evil.example/x',
      '/relative',
      'mailto:a@b.c',
      'https://',
      '',
      null,
    ]) {
      expect(safeHref(bad), String(bad)).toBe('#');
    }
  });

  it('gives what URL parsing gives for 20,000 generated links, its shortcut for canonical ones included', () => {
    // The reference: trim, http(s) only, WHATWG URL's serialisation, '#' for anything it refuses.
    const reference = (url: string): string => {
      const trimmed = url.trim();
      if (!/^https?:\/\//i.test(trimmed)) return '#';
      try {
        const u = new URL(trimmed);
        return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : '#';
      } catch {
        return '#';
      }
    };
    const pieces = ['a', 'Z', '0', '9', '-', '.', '..', '/', '//', '~', '_', '%41', '?', '=', '&', '#', ':', '@', 'xn--', 'x', ' ', '\\', '0x7f', 'é'];
    let s = 42;
    const next = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
    const pick = () => pieces[Math.floor(next() * pieces.length)]!;
    let canonical = 0;
    for (let i = 0; i < 20_000; i++) {
      let host = '';
      for (let k = Math.floor(next() * 6); k >= 0; k--) host += pick();
      let rest = '';
      for (let k = Math.floor(next() * 8); k > 0; k--) rest += pick();
      const url = `${next() < 0.5 ? 'https' : 'http'}://${host}${next() < 0.8 ? '/' : ''}${rest}`;
      expect(safeHref(url), url).toBe(reference(url));
      if (reference(url) === url) canonical++;
    }
    // The generator must reach the shortcut, or this test proves nothing about it.
    expect(canonical).toBeGreaterThan(1_000);
    expect(safeHref('https://digest.example.org/feedback/12.paper-3.0.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG/3/more')).toBe(
      'https://digest.example.org/feedback/12.paper-3.0.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG/3/more',
    );
  });
});

describe('escapeHtml', () => {
  it('escapes everything that could open a tag or leave an attribute', () => {
    expect(escapeHtml(`<a href="x" onclick='y'>&=\``)).toBe('&lt;a href&#61;&quot;x&quot; onclick&#61;&#39;y&#39;&gt;&amp;&#61;&#96;');
  });
});

describe('trimOnWord', () => {
  it('cuts long text on a word boundary with an ellipsis and leaves short text alone', () => {
    const words = Array.from({ length: 200 }, (_, i) => `word${i}`).join(' ');
    const cut = trimOnWord(words, 600);
    expect(cut.endsWith('…')).toBe(true);
    expect(cut.length).toBeLessThanOrEqual(601);
    expect(cut.length).toBeGreaterThan(540);
    expect(words.startsWith(`${cut.slice(0, -1)} `)).toBe(true);
    expect(trimOnWord('short abstract.', 600)).toBe('short abstract.');
    expect(trimOnWord('Sentence ends here. And more words follow on', 20)).toBe('Sentence ends here…');
    // One unbroken 1,000-character token is still cut.
    expect(trimOnWord('x'.repeat(1000), 600)).toBe(`${'x'.repeat(600)}…`);
  });
});

describe('authorsLine and dates', () => {
  it('shows up to four authors, otherwise three and et al.', () => {
    expect(authorsLine([])).toBe('');
    expect(authorsLine(['A', 'B', 'C', 'D'])).toBe('A, B, C, D');
    expect(authorsLine(['A', ' B\n', 'C', 'D', 'E'])).toBe('A, B, C et al.');
  });
  it('shows ISO dates as YYYY-MM-DD', () => {
    expect(displayDate('2025-11-24T17:02:11.000Z')).toBe('2025-11-24');
    expect(displayDate('Aug 16, 2017')).toBe('Aug 16, 2017');
    expect(displayDate(null)).toBe('');
  });
});

describe('wrapText', () => {
  it('wraps on spaces within the width, indented', () => {
    const text = 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu';
    const wrapped = wrapText(text, 20, '  ');
    for (const line of wrapped.split('\n')) expect(line.length).toBeLessThanOrEqual(22);
    expect(wrapped.replace(/\n {2}/g, ' ').trim()).toBe(text);
  });
});

describe('digestSubject', () => {
  it('is one short line: count, first topics, date', () => {
    expect(digestSubject(3, ['speculative decoding', 'MoE'], '2025-11-25')).toBe(
      '3 new papers on speculative decoding, MoE — 2025-11-25',
    );
    expect(digestSubject(1, [], '2025-11-25')).toBe('1 new paper — 2025-11-25');
    const long = digestSubject(12, ['x'.repeat(80), 'y'.repeat(80), 'z'], '2025-11-25\r\nBcc: a@b.c');
    expect(long).not.toMatch(/[\r\n]/);
    expect(long.length).toBeLessThan(100);
    expect(long).toContain('and more');
  });
});

describe('highlightHtml', () => {
  it('escapes the text and wraps only the hits', () => {
    const highlight = (text: string) => [
      { text: text.slice(0, 4), hit: false },
      { text: text.slice(4, 8), hit: true },
      { text: text.slice(8), hit: false },
    ];
    expect(highlightHtml('<b> <i>x & y', highlight)).toBe(
      '&lt;b&gt; <span class="pd-hl" style="background-color:#fde68a;color:#111827;">&lt;i&gt;x</span> &amp; y',
    );
  });
  it('falls back to plain escaped text when the highlighter misbehaves', () => {
    expect(highlightHtml('a <b>', () => [{ text: 'lost', hit: true }])).toBe('a &lt;b&gt;');
    expect(
      highlightHtml('a <b>', () => {
        throw new Error('boom');
      }),
    ).toBe('a &lt;b&gt;');
  });
});

describe('paperDaysLabel', () => {
  it('names the batch days of a digest compactly, across months and years, and nothing for odd input', () => {
    expect(paperDaysLabel({ first: '2025-11-25', last: '2025-11-25' })).toBe('papers of 25 Nov');
    expect(paperDaysLabel({ first: '2025-11-24', last: '2025-11-25' })).toBe('papers of 24–25 Nov');
    expect(paperDaysLabel({ first: '2025-11-28', last: '2025-12-02' })).toBe('papers of 28 Nov – 2 Dec');
    expect(paperDaysLabel({ first: '2025-12-30', last: '2026-01-02' })).toBe('papers of 30 Dec 2025 – 2 Jan 2026');
    expect(paperDaysLabel({ first: '2025-13-01', last: '2025-13-02' })).toBe('');
    expect(paperDaysLabel(undefined)).toBe('');
  });
});

describe('tidy', () => {
  it('collapses every kind of whitespace a feed sends into single spaces, and leaves tidy text as it is', () => {
    expect(tidy('  Speculative\n\tdecoding\u00a0 at\u2028scale  ')).toBe('Speculative decoding at scale');
    expect(tidy('Ana  Silva')).toBe('Ana Silva');
    expect(tidy(' Ana')).toBe('Ana');
    expect(tidy('Ana ')).toBe('Ana');
    expect(tidy('Ana Silva')).toBe('Ana Silva');
    expect(tidy('')).toBe('');
    // The fast path (tidy text returned as it is) agrees with the full collapse on generated strings
    // made of letters and every whitespace character JavaScript knows.
    const spaces = [' ', '\t', '\n', '\r', '\v', '\f', '\u00a0', '\u1680', '\u2000', '\u200a', '\u2028', '\u2029', '\u202f', '\u205f', '\u3000', '\ufeff'];
    const alphabet = ['a', 'é', ' ', ' ', ...spaces];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let n = 0; n < 3000; n++) {
      let text = '';
      for (let len = next() % 8; len > 0; len--) text += alphabet[next() % alphabet.length];
      expect(tidy(text)).toBe(text.replace(/\s+/g, ' ').trim());
    }
  });
});
