// Long digests: the best papers in full, the next as compact lines, the rest on the web view, and the
// HTML under Gmail's clipping size by construction (the real templates, MJML and highlighter).
import { beforeAll, describe, expect, it } from 'vitest';
import { createRenderer, HTML_BYTE_LIMIT, type Renderer } from '../../src/render/render.ts';
import { bytes, digestView, LINKS, numberedPapers, papers, tidy, visible } from '../helpers/render-views.ts';

let renderer: Renderer;
/**
 * The clipping mechanism is tested on a long layout (25 in full, 25 in short, as DIGEST_FULL_PAPERS=25 sets):
 * the default (5 and 20) never comes near the cap with these papers.
 */
const LONG = { fullPapers: 25, compactPapers: 25 };
beforeAll(async () => {
  renderer = await createRenderer(LONG);
});

describe('Gmail clipping cap', () => {
  it('80 papers: the best 25 in full, the next 25 as compact lines, under 100,000 bytes, whole list on the web', () => {
    const list = papers(80, ['reinforcement learning'], 1_000);
    const email = renderer.digest(digestView(list));
    expect(email.fullPapers).toBe(25);
    expect(email.shownPapers).toBe(50);
    expect(bytes(email.html)).toBeLessThan(HTML_BYTE_LIMIT);
    // The clipping size counts the HTML as sent (7bit: non-ASCII as references, so at least its UTF-8
    // size), a line break as one byte.
    expect(email.htmlBytes).toBe(Buffer.concat(email.encoded!.html).toString('latin1').replace(/\r\n/g, '\n').length);
    expect(email.htmlBytes).toBeGreaterThanOrEqual(bytes(email.html));
    const seen = tidy(visible(email.html));
    // In full: title, authors and abstract; compact: title, authors and why matched, no abstract.
    const abstractOf = (i: number) => tidy(list[i]!.abstract).slice(0, 120);
    const full = tidy(visible(email.html.slice(0, email.html.indexOf(list[25]!.url))));
    for (let i = 0; i < 25; i++) expect(full).toContain(abstractOf(i).slice(0, 60));
    const compactPart = email.html.slice(email.html.indexOf('25 more papers by topic'));
    for (const p of list.slice(25, 50)) {
      expect(compactPart).toContain(`href="${p.url}"`);
      expect(seen).toContain(tidy(p.title));
    }
    // The other 30 are behind the web view's link, in neither part.
    for (const p of list.slice(50)) {
      expect(email.html).not.toContain(`${p.url}"`);
      expect(email.text).not.toContain(`${p.url}\n`);
    }
    const compactSeen = tidy(visible(compactPart));
    expect(compactSeen).not.toContain(abstractOf(30).slice(0, 60));
    expect(compactSeen).toContain(`${tidy(list[49]!.title)} ${list[49]!.authors.slice(0, 3).join(', ')}`);
    // Grouped under the topic's heading, which carries its mute link (the lines name only other topics).
    expect(compactPart).toContain('<h3 class="pd-gh">reinforcement learning <a href="https://digest.example.org/mute/tok-0" class="pd-b">mute</a></h3>');
    expect(seen).toContain('30 more papers in this digest →');
    expect(email.html).toMatch(new RegExp(`href="${LINKS.webView}"[^>]*>\\s*30 more papers in this digest`));
    // The text part: the same 50, numbered, the compact ones without abstracts.
    expect(numberedPapers(email.text)).toBe(50);
    expect(email.text).toContain('25 more papers by topic');
    expect(email.text).toMatch(/\n50\. [^\n]+\n   [^\n]+\n   https:\/\/arxiv\.org\/abs\/2511\.10049\n   Matched: reinforcement learning\n/);
    expect(email.text).toContain(`30 more papers in this digest:\n${LINKS.webView}`);
  });

  it('the next 30 as compact lines when they fit: the whole digest, and the web view for abstracts', async () => {
    const fifty = await createRenderer({ ...LONG, compactPapers: 55 });
    const list = papers(80, ['reinforcement learning'], 1_000);
    const email = fifty.digest(digestView(list));
    expect(email).toMatchObject({ fullPapers: 25, shownPapers: 80 });
    expect(bytes(email.html)).toBeLessThan(HTML_BYTE_LIMIT);
    expect(tidy(visible(email.html))).toContain('All 80 papers with their abstracts →');
    expect(email.text).toContain(`All 80 papers with their abstracts:\n${LINKS.webView}`);
  });

  it('400 papers: what does not fit even as a line stays on the web view, in order, footer kept', async () => {
    // Compact lines up to 300: the clipping size, not the count, is what stops them here.
    const many = await createRenderer({ ...LONG, compactPapers: 300 });
    const list = papers(400, ['reinforcement learning'], 1_000);
    const email = many.digest(digestView(list));
    const shown = email.shownPapers;
    expect(bytes(email.html)).toBeLessThan(HTML_BYTE_LIMIT);
    expect(email.fullPapers).toBe(25);
    expect(shown).toBeGreaterThan(60);
    expect(shown).toBeLessThan(400);
    expect(email.subject).toMatch(/^400 new papers/);

    const more = `${400 - shown} more papers in this digest →`;
    expect(tidy(visible(email.html))).toContain(more);
    expect(email.html).toMatch(new RegExp(`href="${LINKS.webView}"[^>]*>\\s*${400 - shown} more papers`));
    // The footer links survive (they would be clipped away past the limit).
    expect(email.html).toContain(`href="${LINKS.unsubscribe}"`);

    // Same papers, in order, in both parts; the next one is in neither.
    const seen = tidy(visible(email.html));
    for (const p of list.slice(0, shown)) {
      expect(email.html).toContain(`href="${p.url}"`);
      expect(email.text).toContain(p.url);
    }
    expect(seen).toContain(tidy(list[shown - 1]!.title));
    expect(email.html).not.toContain(`${list[shown]!.url}"`);
    expect(email.text).not.toContain(`${list[shown]!.url}\n`);
    expect(numberedPapers(email.text)).toBe(shown);
    expect(email.text).toContain(`${400 - shown} more papers in this digest:\n${LINKS.webView}`);
  });

  it('fills up to the limit and no further', async () => {
    const list = papers(12, ['reinforcement learning'], 1_000);
    // The last paper's card is much larger than its compact line (its short abstract is full of highlights),
    // so that the compact section it needs (heading, group heading, line, button) fits where its card does not.
    list[11]!.abstract = 'Reinforcement learning for reinforcement learning. '.repeat(20);
    const all = renderer.digest(digestView(list));
    expect(all.shownPapers).toBe(12);
    expect(all.fullPapers).toBe(12);
    const size = all.htmlBytes!;

    const roomy = await createRenderer({ ...LONG, htmlByteLimit: size + 1 });
    expect(roomy.digest(digestView(list))).toMatchObject({ shownPapers: 12, fullPapers: 12 });

    // One byte less: the last paper no longer fits in full; the compact section it then needs (heading,
    // line and button) is smaller than its card, so it comes as a line.
    const tight = await createRenderer({ ...LONG, htmlByteLimit: size });
    const asLine = tight.digest(digestView(list));
    expect(asLine).toMatchObject({ shownPapers: 12, fullPapers: 11 });
    expect(asLine.htmlBytes).toBeLessThan(size);

    // Not even that fits: the paper is left to the web view.
    const tighter = await createRenderer({ ...LONG, htmlByteLimit: asLine.htmlBytes! });
    const cut = tighter.digest(digestView(list));
    expect(cut).toMatchObject({ shownPapers: 11, fullPapers: 11 });
    expect(cut.htmlBytes).toBeLessThan(asLine.htmlBytes!);
    expect(cut.text).toContain('1 more paper in this digest');
    expect(cut.html).not.toContain(`${list[11]!.url}"`);

    // With room for the compact section, the paper that no longer fits in full comes as a line.
    const roomForLine = await createRenderer({ ...LONG, htmlByteLimit: size + 3_000, fullPapers: 11 });
    expect(roomForLine.digest(digestView(list))).toMatchObject({ shownPapers: 12, fullPapers: 11 });
  });

  it('DIGEST_FULL_PAPERS sets how many papers are shown in full', async () => {
    const five = await createRenderer({ fullPapers: 5 });
    const email = five.digest(digestView(papers(8)));
    expect(email).toMatchObject({ shownPapers: 8, fullPapers: 5 });
    expect(email.text).toContain('3 more papers by topic');
  });

  it('web view lists every paper with full abstracts, escaped, no external assets', () => {
    const list = papers(80, ['reinforcement learning'], 1_000);
    const page = renderer.webView(digestView(list));
    for (const p of list) expect(page).toContain(`href="${p.url}"`);
    expect(page).toContain(`80. <a href="${list[79]!.url}"`);
    expect(tidy(visible(page))).toContain(tidy(list[0]!.abstract).slice(-200));
    expect(page).toMatch(/<html lang="en">/);
    // A web view may be shared: nothing on it acts for the reader (their links are in the email).
    expect(page).toContain(`href="${LINKS.home}"`);
    expect(page).not.toContain(LINKS.unsubscribe);
    expect(page).not.toContain(LINKS.preferences);
    expect(page).not.toMatch(/<img|<link|<script|@import|url\(/i);
  });
});
