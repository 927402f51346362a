// The digest's HTML part as 7bit (src/render/encode/html-body.ts), read back by an independent parser (postal-mime):
// the same HTML as before the encoding, pure ASCII, every line within 998 octets, non-ASCII (accents, emoji,
// CJK) intact, no line starting with '.' or '-'; where a 7bit layout is impossible, quoted-printable of the
// same bytes.
import { convert } from 'html-to-text';
import PostalMime from 'postal-mime';
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeHtmlBody, encodeHtmlSegment, HtmlBodyWriter, htmlWireLength, HTML_MAX_LINE } from '../../src/render/encode/html-body.ts';
import { ArenaPool } from '../../src/render/encode/qp-body.ts';
import { createMessageBuilder } from '../../src/mail/raw-message.ts';
import { createRenderer, type DigestPaperView, type DigestView, type Renderer } from '../../src/render/render.ts';

const LINKS = {
  preferences: 'https://digest.example.org/preferences/tok-pref',
  unsubscribe: 'https://digest.example.org/unsubscribe/tok-unsub',
  webView: 'https://digest.example.org/digests/tok-view',
  home: 'https://digest.example.org/',
};

const TITLES = [
  'Pokémon-playing agents: naïve self-play — “quoted” = fine',
  'Emoji 😀 and 🧪 in a title about reinforcement learning',
  '大規模言語モデルの強化学習 (reinforcement learning for LLMs)',
  '.NET agents -- a title that starts with a dot and holds dashes',
];

function paper(i: number): DigestPaperView {
  const abstract =
    i % 5 === 3
      ? 'We compare 強化学習 (RL) with 教師あり学習 for 大規模言語モデル, and 😀 results. '.repeat(8)
      : `We study reinforcement learning at scale (${i}). ${'Élan vital — résumé of results, .5 accuracy and -3 dB noise. '.repeat(12)}`;
  return {
    title: TITLES[i % TITLES.length]!,
    url: `https://arxiv.org/abs/2511.${10000 + i}`,
    authors: ['Zoë Ångström', '李小龙', 'Ann Lee', 'Bo Chen', 'Cy Diaz'],
    abstract,
    upvotes: i,
    categories: ['cs.LG'],
    publishedAt: '2025-11-24',
    codeUrl: i % 2 === 0 ? `https://github.com/ex/r${i}` : null,
    matchedTopics: [{ text: 'reinforcement learning', muteUrl: 'https://digest.example.org/mute/tok-0' }],
    feedback: { more: `https://d.example/f/${i}/more`, less: `https://d.example/f/${i}/less`, follow: { url: `https://d.example/fo/${i}`, name: 'Zoë Ångström' } },
    runTopics: ['reinforcement learning'],
  };
}

const view = (n: number): DigestView => ({ email: 'zoë@example.org', edition: '2025-11-25', papers: Array.from({ length: n }, (_, i) => paper(i)), links: LINKS });

/** Lines of the HTML part of a raw message (between its headers and the closing boundary). */
function htmlPartOf(raw: Buffer): { headers: string; body: string } {
  const s = raw.toString('latin1');
  const start = s.indexOf('Content-Type: text/html');
  const bodyAt = s.indexOf('\r\n\r\n', start) + 4;
  const end = s.indexOf('\r\n--=_pd_', bodyAt);
  return { headers: s.slice(start, bodyAt), body: s.slice(bodyAt, end) };
}

describe('digest HTML as 7bit', () => {
  let renderer: Renderer;
  beforeAll(async () => {
    renderer = await createRenderer();
  });

  it('a rendered digest (accents, emoji, CJK, leading dots and dashes in its text) arrives as the same HTML, in short ASCII lines', async () => {
    const builder = createMessageBuilder({ from: 'Paper Digest <digest@example.org>' });
    for (const n of [1, 18, 60]) {
      const email = renderer.digest(view(n));
      const { raw } = builder.build(
        { to: 'reader@example.org', subject: email.subject, html: '', text: '', encoded: email.encoded },
        `m${n}@example.org`,
        new Date('2025-11-25T07:00:00Z'),
      );
      expect(email.encoded!.htmlTransfer).toBe('7bit');
      const part = htmlPartOf(raw);
      expect(part.headers).toContain('Content-Transfer-Encoding: 7bit');
      const lines = part.body.split('\r\n');
      for (const line of lines) {
        expect(line.length).toBeLessThanOrEqual(HTML_MAX_LINE);
        expect(line).not.toMatch(/^[.-]/);
      }
      // Long lines (the <style> rules are the short ones): quoted-printable had one every 76 characters.
      expect(lines.length * 150).toBeLessThan(part.body.length);
      // The whole message is 7-bit, and every line of it within RFC 5322's 998 octets.
      expect(raw.every((b) => b < 0x80)).toBe(true);
      for (const line of raw.toString('latin1').split('\r\n')) expect(line.length).toBeLessThanOrEqual(998);

      const parsed = await PostalMime.parse(raw);
      const received = parsed.html!.replace(/\r?\n$/, '');
      // The encoding undone: exactly the HTML the renderer made.
      expect(decodeHtmlBody(Buffer.from(received.replace(/\r?\n/g, '\r\n'), 'latin1'))).toBe(email.html);
      // And what a reader sees is the same text, non-ASCII included (references read by an HTML parser).
      const seen = convert(received, { wordwrap: false });
      expect(seen).toBe(convert(email.html, { wordwrap: false }));
      const seenLower = seen.toLowerCase(); // (html-to-text writes headings in capitals)
      expect(seen).toContain('Pokémon-playing agents');
      if (n >= 4) {
        expect(seenLower).toContain('emoji 😀 and 🧪');
        expect(seenLower).toContain('大規模言語モデルの強化学習');
        expect(seenLower).toContain('.net agents -- a title');
        expect(seen).toContain('We compare 強化学習 (RL) with 教師あり学習');
      }
      expect(seen).toContain('Zoë Ångström, 李小龙, Ann Lee et al.');
      expect(email.htmlBytes).toBe(received.replace(/\r\n/g, '\n').length);
    }
  });

  it('a CJK abstract with no spaces cannot be cut into lines: the part goes as quoted-printable of the same bytes', async () => {
    const cjk = { ...paper(0), abstract: '強化学習'.repeat(150), title: '大規模言語モデル'.repeat(20) };
    const email = renderer.digest({ ...view(1), papers: [cjk] });
    expect(email.encoded!.htmlTransfer).toBe('quoted-printable');
    const builder = createMessageBuilder({ from: 'Paper Digest <digest@example.org>' });
    const { raw } = builder.build({ to: 'r@example.org', subject: email.subject, html: '', text: '', encoded: email.encoded }, 'm@example.org', new Date());
    expect(htmlPartOf(raw).headers).toContain('Content-Transfer-Encoding: quoted-printable');
    const parsed = await PostalMime.parse(raw);
    expect(convert(parsed.html!, { wordwrap: false })).toContain('強化学習強化学習');
    expect(decodeHtmlBody(Buffer.from(parsed.html!.replace(/\r?\n$/, '').replace(/\r?\n/g, '\r\n'), 'latin1'))).toBe(email.html);
  });
});

describe('HtmlBodyWriter', () => {
  // Pieces like a digest's: markup with attributes, text with blanks, dots and dashes after blanks,
  // references, non-ASCII, long words, a <style> and a conditional comment with line breaks.
  const PIECES = [
    '<td class="pd-card" style="font-family:-apple-system, \'Segoe UI\', Roboto;font-size:15px;"> <div>',
    'Ünïcödé title with = signs and a long run of words that goes past the line length for sure ',
    '.leading dot after a blank and -dash and --=_pd_boundary-looking text ',
    '😀 emoji, 中文字符 and é ',
    'x'.repeat(60),
    ' <a href="https://example.org/a b?c=d&amp;e">link text</a> · ',
    '<style>\n.pd-x { color: #111; }\n  .pd-y { font-family: \'Segoe UI\'; }\n</style>',
    '<!--[if mso | IE]><table role="presentation" border="0"><tr><td><![endif]--> ',
    'word '.repeat(60),
    '</div> </td> ',
  ];
  const join = (seed: number, shared: Set<number>) => {
    let r = seed;
    const rand = () => ((r = (r * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
    const w = new HtmlBodyWriter(new ArenaPool());
    // A body starts as a document does (its first line then cannot start with '.' or '-' either).
    let text = '<!doctype html>';
    w.addText(text);
    const count = 40 + Math.floor(rand() * 200);
    for (let k = 0; k < count; k++) {
      const i = Math.floor(rand() * PIECES.length);
      const piece = PIECES[i]!;
      text += piece;
      if (shared.has(i)) w.addSegment(encodeHtmlSegment(piece));
      else w.addText(piece);
    }
    return { w, text };
  };

  it('joins shared segments and own text from any column into the same HTML, lines within the limit', () => {
    let fallbacks = 0;
    for (let seed = 1; seed <= 60; seed++) {
      const shared = new Set([0, 1, 3, 5, 9].filter((i) => (i + seed) % 2 === 0));
      const { w, text } = join(seed, shared);
      const body = Buffer.concat(w.parts);
      expect(decodeHtmlBody(body)).toBe(text);
      if (w.fallback) {
        // Some draws put several pieces without a usable blank in a row (x-runs, the comment, <style>):
        // no 7bit layout exists there, and the part goes as quoted-printable of the same bytes.
        fallbacks++;
        expect(w.encoded().transfer).toBe('quoted-printable');
        continue;
      }
      expect(w.textBytes).toBe(Buffer.byteLength(text));
      expect(w.size).toBe(body.toString('latin1').replace(/\r\n/g, '\n').length);
      for (const line of body.toString('latin1').split('\r\n')) {
        expect(line.length).toBeLessThanOrEqual(HTML_MAX_LINE);
        expect(line).not.toMatch(/^[-]/);
      }
      expect(body.every((b) => b < 0x80)).toBe(true);
      // The only line starting with a dot is the <style> rule's (a line break of the template's own).
      const dotted = body.toString('latin1').split('\r\n').filter((l) => l.startsWith('.'));
      for (const l of dotted) expect(l).toBe('.pd-x { color: #111; }');
    }
    expect(fallbacks).toBeLessThan(6);
  });

  it('counts sizes as the clipping size does: htmlWireLength of the text equals the writer\'s size', () => {
    const { w, text } = join(7, new Set([1, 3]));
    expect(htmlWireLength(text)).toBe(w.size);
  });

  it('a reader\'s long text keeps an emoji that falls on a piece boundary (not two replacement characters)', () => {
    for (const at of [1022, 1023, 1024, 2047]) {
      const text = `<p>${'word '.repeat(at).slice(0, at - 3)}😀 and after</p>`;
      const w = new HtmlBodyWriter(new ArenaPool());
      w.addText(text);
      expect(decodeHtmlBody(Buffer.concat(w.parts))).toBe(text);
      expect(w.textBytes).toBe(Buffer.byteLength(text));
    }
  });

  it('a word too long for any line is sent as quoted-printable of the same bytes', () => {
    const w = new HtmlBodyWriter();
    const text = `<p>${'a'.repeat(2_000)}</p>`;
    w.addText(text);
    expect(w.fallback).toBe(true);
    const { parts, transfer } = w.encoded();
    expect(transfer).toBe('quoted-printable');
    for (const line of Buffer.concat(parts).toString('latin1').split('\r\n')) expect(line.length).toBeLessThanOrEqual(76);
  });
});
