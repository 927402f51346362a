// The reader's parts of a card filled once per shape (src/render/reader-shape.ts) must read exactly as
// when Handlebars fills them per reader: same HTML, same text, same size for the clipping cap, and the
// HTML still 7bit in lines within the limit, whatever the topics, links and names hold.
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeHtmlBody, encodeHtmlSegment, HtmlBodyWriter, HTML_MAX_LINE } from '../../src/render/encode/html-body.ts';
import { createRenderer, type DigestPaperView, type DigestView, type RenderedEmail, type Renderer } from '../../src/render/render.ts';
import { runSpan, TopicRuns } from '../../src/render/topic-runs.ts';
import { decodeQuotedPrintable } from '../../src/render/encode/qp-body.ts';

const LINKS = {
  preferences: 'https://digest.example.org/preferences/tok-pref',
  unsubscribe: 'https://digest.example.org/unsubscribe/tok-unsub',
  webView: 'https://digest.example.org/digests/tok-view',
  home: 'https://digest.example.org/',
};

const TOPICS = [
  'reinforcement learning',
  '"mixture of experts" OR MoE',
  'Pokémon <script>alert(1)</script> & co',
  '強化学習',
  "O'Brien's = method",
];
const NAMES = ['Zoë Ångström', "Seán O'Brien", 'Ann "Annie" Lee', '李小龙', 'A <b>bold</b> name'];

function paper(i: number, reader: number): DigestPaperView {
  const topics = TOPICS.filter((_, t) => (i + reader + t) % 3 === 0 || t === reader % TOPICS.length);
  const token = `${reader}.view-${900 + reader}.0.Qk3xZr8vY2mNwq4TfL0aHs7pJ9dKc1EuG6bVyXo5iRt`;
  return {
    title: `Paper ${i} on reinforcement learning and mixture of experts`,
    url: `https://arxiv.org/abs/2511.${10000 + i}`,
    authors: [NAMES[i % NAMES.length]!, 'Bo Chen'],
    abstract: `We study reinforcement learning (${i}) with a mixture of experts. `.repeat(6),
    upvotes: i,
    categories: ['cs.LG'],
    publishedAt: '2025-11-24',
    matchedTopics: topics.map((text, t) => ({
      text,
      // One mute link with a query (not canonical: safeHref parses it, and its & and = are escaped).
      muteUrl: t === 1 ? `https://digest.example.org/mute/q?t=${t}&r=${reader}` : `https://digest.example.org/mute/${reader}.mute-${t}.0.sig${t}`,
    })),
    feedback:
      i % 7 === 6
        ? undefined
        : {
            more: `https://digest.example.org/feedback/${token}/${i}/more`,
            less: `https://digest.example.org/feedback/${token}/${i}/less`,
            follow: i % 5 === 4 ? undefined : { url: `https://digest.example.org/follow/${token}/0/${i}`, name: NAMES[i % NAMES.length]! },
            // As the loader marks its own links (no checking or escaping needed): must read the same.
            canonical: reader === 5,
          },
    runTopics: TOPICS,
  };
}

const view = (n: number, reader: number): DigestView => ({
  email: reader === 2 ? 'zoë.ångström@exämple.org' : `r${reader}@example.org`,
  edition: '2025-11-25',
  papers: Array.from({ length: n }, (_, i) => paper(i, reader)),
  // Some readers have "You may also like" (one without authors), one has a cap of their own.
  suggestions: reader % 2 === 1 ? [paper(500, reader), { ...paper(501, reader), authors: [] }, paper(502, reader)].slice(0, reader) : undefined,
  maxPapers: reader === 4 ? 30 : undefined,
  links: reader === 3 ? { ...LINKS, webView: 'https://digest.example.org/digests/a?b=1&c="2"' } : LINKS,
});

/** Reads the same as the per-reader fill: HTML, text, clipping size, papers shown. */
function expectSameEmail(a: RenderedEmail, b: RenderedEmail): void {
  expect(a.html).toBe(b.html);
  expect(a.text).toBe(b.text);
  expect(a.htmlBytes).toBe(b.htmlBytes);
  expect(a.shownPapers).toBe(b.shownPapers);
}

describe('reader parts and shell filled once per shape', () => {
  let shaped: Renderer;
  let perReader: Renderer;
  beforeAll(async () => {
    shaped = await createRenderer();
    perReader = await createRenderer({ readerShapes: false });
  });

  it('reads exactly as the per-reader fill: HTML, text, clipping size, papers shown', () => {
    for (const n of [1, 18, 80]) {
      for (let reader = 0; reader < 6; reader++) {
        const a = shaped.digest(view(n, reader));
        const b = perReader.digest(view(n, reader));
        expectSameEmail(a, b);
        expect(a.encoded!.htmlTransfer).toBe('7bit');
        const lines = Buffer.concat(a.encoded!.html).toString('latin1').split('\r\n');
        for (const line of lines) expect(line.length).toBeLessThanOrEqual(HTML_MAX_LINE);
        // The text part as quoted-printable: ASCII lines of at most 76, none starting with a dot.
        const text = Buffer.concat(a.encoded!.text);
        expect(text.every((c) => c < 0x80)).toBe(true);
        for (const line of text.toString('latin1').split('\r\n')) {
          expect(line.length).toBeLessThanOrEqual(76);
          expect(line.startsWith('.')).toBe(false);
        }
        // The reader's own values are where they belong, escaped.
        expect(a.html).toContain(`href="https://digest.example.org/feedback/${reader}.view-${900 + reader}.0.`);
        expect(a.html).toContain('href="https://digest.example.org/mute/q?t&#x3D;1&amp;r&#x3D;');
        expect(a.html).not.toContain('<script>alert(1)');
        a.release?.();
        b.release?.();
      }
    }
  });

  it('a paper matched by ten topics reads the same (more values than fit one ASCII mark character)', () => {
    const many = view(4, 1);
    for (const p of many.papers) p.matchedTopics = Array.from({ length: 10 }, (_, k) => ({ text: `topic ${k} <${k}>`, muteUrl: `https://digest.example.org/mute/t${k}` }));
    const a = shaped.digest(many);
    expect(a.html).toBe(perReader.digest(many).html);
    expect(a.text).toBe(perReader.digest(many).text);
    expect(a.html).toContain('href="https://digest.example.org/mute/t9"');
  });

  it('cards sharing one topic list, as the loader gives them, read the same: each list written once per digest', () => {
    // The loader hands the papers that matched the same topics ONE list (view.ts): its values are then
    // joined as one run of bytes per digest (topic-runs.ts). One list is longer than a text line, so its run
    // is cut by soft breaks; one needs escaping and references.
    const long = `${'very long topic '.repeat(9)}end`;
    const lists = [
      [{ text: 'reinforcement learning', muteUrl: 'https://digest.example.org/mute/1.mute-0.0.sig0' }],
      [
        { text: 'Pokémon <script>alert(1)</script> & co', muteUrl: 'https://digest.example.org/mute/q?t=1&r=2' },
        { text: '強化学習', muteUrl: 'https://digest.example.org/mute/1.mute-3.0.sig3' },
      ],
      [
        { text: long, muteUrl: 'https://digest.example.org/mute/1.mute-4.0.sig4' },
        { text: "O'Brien's = method", muteUrl: 'https://digest.example.org/mute/1.mute-5.0.sig5' },
        { text: 'reinforcement learning', muteUrl: 'https://digest.example.org/mute/1.mute-0.0.sig0' },
      ],
    ];
    for (const n of [18, 80]) {
      for (const reader of [0, 5]) {
        const shared = view(n, reader);
        shared.papers.forEach((p, i) => (p.matchedTopics = lists[i % lists.length]!));
        const a = shaped.digest(shared);
        const b = perReader.digest(shared);
        expectSameEmail(a, b);
        expect(a.text).toContain(`Matched: ${long}; O'Brien's = method; reinforcement learning\n`);
        // Named by its label (the query's parentheses dropped), escaped.
        expect(a.html).toContain('<strong>Pokémon &lt;script&gt;alert 1 &lt;/script&gt; &amp; co</strong>');
        for (const line of Buffer.concat(a.encoded!.text).toString('latin1').split('\r\n')) expect(line.length).toBeLessThanOrEqual(76);
        for (const line of Buffer.concat(a.encoded!.html).toString('latin1').split('\r\n')) expect(line.length).toBeLessThanOrEqual(HTML_MAX_LINE);
        a.release?.();
        b.release?.();
      }
    }
  });

  it('a topic text holding the mark character reads the same (topic texts are values, never parsed for marks)', () => {
    const odd = view(3, 1);
    for (const p of odd.papers) p.matchedTopics = [{ text: 'odd \u0003\u0031\u0004 topic', muteUrl: 'https://digest.example.org/mute/x' }];
    const a = shaped.digest(odd);
    const b = perReader.digest(odd);
    expect(a.html).toBe(b.html);
    expect(a.text).toBe(b.text);
  });
});

describe('HtmlBodyWriter.addValue after a segment', () => {
  it('keeps every line within the limit from any column: the segment before a long value breaks for it', () => {
    const open = encodeHtmlSegment('<p class="pd-f"><a href="');
    // Laid out from where the link's value leaves the tokenizer: inside the attribute's quotes.
    const seg = encodeHtmlSegment('" class="pd-g">More like this</a> &#183; <a href="', open.endState * 2 + (open.rawNext ? 1 : 0));
    const value = `https://digest.example.org/feedback/${'x'.repeat(90)}/12345/more`;
    let fallbacks = 0;
    for (let start = 0; start < 980; start += 7) {
      const w = new HtmlBodyWriter();
      w.addText(`<p>${'a'.repeat(start)}</p>`);
      w.addSegment(open, value.length);
      w.addValue(value);
      let html = `<p>${'a'.repeat(start)}</p><p class="pd-f"><a href="${value}`;
      for (let k = 0; k < 12; k++) {
        w.addSegment(seg, value.length);
        w.addValue(value);
        html += '" class="pd-g">More like this</a> &#183; <a href="' + value;
      }
      const body = Buffer.concat(w.parts);
      expect(decodeHtmlBody(body)).toBe(html);
      if (w.fallback) {
        fallbacks++;
        continue;
      }
      expect(w.size).toBe(body.toString('latin1').replace(/\r\n/g, '\n').length);
      for (const line of body.toString('latin1').split('\r\n')) expect(line.length).toBeLessThanOrEqual(HTML_MAX_LINE);
    }
    // Only a run of 'a's too long for any line (no blank in it) cannot be laid out.
    expect(fallbacks).toBe(0);
  });

  it('a value that is not plain ASCII (a name with accents and blanks) is encoded as text', () => {
    const w = new HtmlBodyWriter();
    w.addText('<p>');
    w.addValue('Zoë Ångström');
    w.addText('</p>');
    expect(decodeHtmlBody(Buffer.concat(w.parts))).toBe('<p>Zoë Ångström</p>');
    expect(Buffer.concat(w.parts).every((b) => b < 0x80)).toBe(true);
  });
});

describe('runSpan: where the matched topics of a part are one stretch', () => {
  it('finds the stretch of topic slots (5 on), and refuses one with another value inside it', () => {
    // Slots: 0 the number, 1-4 the feedback links and the author, 5 on per topic its mute link and its text.
    expect(runSpan([0, 6, 5, 8, 7, 1, 2])).toEqual({ from: 1, to: 4 });
    expect(runSpan([6, 8])).toEqual({ from: 0, to: 1 });
    expect(runSpan([0, 1, 2])).toBeUndefined();
    expect(runSpan([6, 1, 8])).toBeUndefined();
  });
});

describe('TopicRuns.textRun: a topic list encoded for the column it lands on', () => {
  it('reads the same from any column, keeps lines within 76, and is encoded again for another column', () => {
    const topics = new TopicRuns([
      { text: `Pokémon ${'long topic '.repeat(6)}end`, muteUrl: 'https://digest.example.org/mute/a' },
      { text: 'reinforcement learning', muteUrl: 'https://digest.example.org/mute/b' },
    ]);
    // A text part's "Matched: {{text}}; {{text}}": the topic texts are slots 6 and 8.
    const part = { texts: ['\n   Matched: ', '; ', ''], slots: [6, 8], run: runSpan([6, 8]) };
    const want = `Pokémon ${'long topic '.repeat(6)}end; reinforcement learning`;
    const at12 = topics.textRun(part, 12);
    const at60 = topics.textRun(part, 60);
    for (const [run, col] of [[at12, 12], [at60, 60]] as const) {
      expect(run.col).toBe(col);
      expect(decodeQuotedPrintable([run.bytes])).toBe(want);
      const lines = run.bytes.toString('latin1').split('\r\n');
      expect(col + lines[0]!.length).toBeLessThanOrEqual(76);
      for (const line of lines) expect(line.length).toBeLessThanOrEqual(76);
      expect(run.endCol).toBe(lines.length === 1 ? col + lines[0]!.length : lines.at(-1)!.length);
    }
    expect(at60.bytes.equals(at12.bytes)).toBe(false);
    expect(topics.textRun(part, 60)).toBe(at60);
  });
});
