// A topic list's HTML run from a template (laid out once, the reader's mute links written in) is byte for
// byte the run laid out for that reader, whatever the topics, links and line breaks; anything the template
// cannot stand for is laid out directly; the templates stay within their byte budget.
import { describe, expect, it } from 'vitest';
import { decodeHtmlBody } from '../../src/mail/html-body.ts';
import { S_TAG, S_TEXT } from '../../src/mail/html-7bit.ts';
import { layOutRun, RunTemplates, type TemplatePart } from '../../src/render/run-templates.ts';

const FIRST = 5;

/** A card part's matched topics as our templates write them: per topic its text, then its mute link. */
function part(topics: number): TemplatePart {
  const texts = ['<p>Matched: <strong>'];
  const slots: number[] = [];
  for (let t = 0; t < topics; t++) {
    slots.push(FIRST + 2 * t + 1, FIRST + 2 * t);
    texts.push('</strong> <a href="', t === topics - 1 ? '">mute</a></p>' : '">mute</a> · <strong>');
  }
  return { texts, slots, run: { from: 0, to: slots.length - 1 } };
}

/** TopicRuns.html: per topic its escaped mute link, then its escaped text. */
function values(texts: string[], reader: number, linkLength = 60): string[] {
  return texts.flatMap((text, t) => {
    const head = `https://digest.example.org/mute/${reader.toString(36)}.m.`;
    const link = `${head}${'x'.repeat(Math.max(0, linkLength - head.length - 3))}/${String(t).padStart(2, '0')}`;
    return [link, text];
  });
}

function expectSameRun(a: ReturnType<typeof layOutRun>, b: ReturnType<typeof layOutRun>): void {
  expect(a.seg.bytes.toString('latin1')).toBe(b.seg.bytes.toString('latin1'));
  expect({ ...a.seg, bytes: null, breaks: [...a.seg.breaks] }).toEqual({ ...b.seg, bytes: null, breaks: [...b.seg.breaks] });
  expect(a.valuesSize).toBe(b.valuesSize);
}

describe('RunTemplates', () => {
  const TOPICS = ['reinforcement learning', 'Pokémon', '強化学習 🤖', 'a &amp; b', "O&#x27;Brien", 'long topic '.repeat(12).trim(), 'x'];

  it('gives every reader the run laid out for them: few and many topics, short and long links, lines broken inside the run', () => {
    const templates = new RunTemplates();
    for (let topics = 1; topics <= TOPICS.length; topics++) {
      const p = part(topics);
      for (const linkLength of [40, 75, 200, 700]) {
        for (const startKey of [S_TEXT * 2, S_TAG * 2]) {
          for (let reader = 1; reader <= 3; reader++) {
            const v = values(TOPICS.slice(0, topics), reader * 7919, linkLength);
            const direct = layOutRun(p, v, FIRST, startKey);
            const made = templates.htmlRun(p, v, FIRST, startKey);
            expectSameRun(made ?? direct, direct);
            if (linkLength < 700) expect(made, `${topics} topics, links of ${linkLength}`).toBeDefined();
          }
        }
      }
    }
    // Runs long enough to be broken into lines were among them, and came from templates too.
    const long = layOutRun(part(TOPICS.length), values(TOPICS, 1, 200), FIRST, S_TEXT * 2);
    expect(long.seg.multiline).toBe(true);
    // Each run was asked for three readers: the second and third were filled in from the first's template.
    expect(templates.hits / (templates.hits + templates.misses)).toBeGreaterThan(0.6);
    // What a client reads: the reader's own links.
    const v = values(TOPICS.slice(0, 2), 12345);
    const html = decodeHtmlBody(templates.htmlRun(part(2), v, FIRST, S_TEXT * 2)!.seg.bytes);
    // (A run ends with its last value: the part's text after it closes the attribute.)
    expect(html).toContain(`href="${v[0]}">mute</a>`);
    expect(html.endsWith(`href="${v[2]}`)).toBe(true);
  });

  it('lays out directly what a template cannot stand for: links with characters the layout looks at, texts with control characters', () => {
    const templates = new RunTemplates();
    const p = part(2);
    for (const v of [
      ['https://digest.example.org/mute/a b/1', 'rl', 'https://digest.example.org/mute/ab/2', 'x'],
      ['https://digest.example.org/mute/é/1', 'rl', 'https://digest.example.org/mute/ab/2', 'x'],
      ['https://digest.example.org/mute/"/1', 'rl', 'https://digest.example.org/mute/ab/2', 'x'],
      ['https://digest.example.org/mute/ab/1', 'r\u0001l', 'https://digest.example.org/mute/ab/2', 'x'],
    ]) {
      expect(templates.htmlRun(p, v, FIRST, S_TEXT * 2)).toBeUndefined();
    }
    expect(templates.bytes).toBe(0);
  });

  it('stays within its byte budget, oldest templates going first', () => {
    const budget = 16 * 1024;
    const templates = new RunTemplates(budget);
    const p = part(3);
    for (let i = 0; i < 500; i++) {
      const v = values([`topic ${i}`, `other ${i % 7}`, 'rl'], i);
      const direct = layOutRun(p, v, FIRST, S_TEXT * 2);
      expectSameRun(templates.htmlRun(p, v, FIRST, S_TEXT * 2) ?? direct, direct);
      expect(templates.bytes).toBeLessThanOrEqual(budget);
    }
    expect(templates.bytes).toBeGreaterThan(budget / 2);
    // The newest are kept: asked again, they are hits.
    const hits = templates.hits;
    templates.htmlRun(p, values(['topic 499', 'other 2', 'rl'], 9), FIRST, S_TEXT * 2);
    expect(templates.hits).toBe(hits + 1);
  });
});
