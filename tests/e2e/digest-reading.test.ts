// A digest read on a phone and on a laptop, in real Chromium: a 60-paper and a 5-paper digest (the real
// templates and renderer, papers from the sample listing, three topics, feedback and code links) at 390 px
// and 1280 px, light and dark. Measured from the laid-out page and its computed styles: what the first
// screen shows (per-topic counts, at least five titles), the height in screens, every per-paper action's
// size and spacing (WCAG 2.2 target size: 24 x 24 CSS px, 8 px apart here) and the contrast of every
// piece of visible text (4.5:1). The web view is measured the same way, with JavaScript off. Screenshots
// go to test-output/reading/.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { haveChromium, launchChromium, warnIfNoChromium } from '../helpers/chromium.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRenderer, type DigestPaperView, type DigestView, type RenderedEmail, type Renderer } from '../../src/render/render.ts';
import { digestView, papers } from '../helpers/render-views.ts';

const SHOTS = join(import.meta.dirname, '..', '..', 'test-output', 'reading');
const PHONE = { width: 390, height: 844 };
const LAPTOP = { width: 1280, height: 800 };
const TOPICS = ['reinforcement learning', '"language model" OR LLM', 'diffusion OR "flow matching"'];

const NAMES = ['Ann Lee', 'Bo Chen', 'Cy Diaz', 'Dana Ruiz', 'Eli Park', 'Fay Ng', 'Gus Moreau', 'Hana Sato'];

/** A digest of `n` papers over three topics (every fourth paper matched two), each with feedback links. */
function digest(n: number): DigestView {
  const list: DigestPaperView[] = papers(n).map((p, i) => {
    const topics = [TOPICS[i % 3]!, ...(i % 4 === 3 ? [TOPICS[(i + 1) % 3]!] : [])];
    // The sample listing has no authors: a few names, up to five a paper (past four: "et al.").
    const authors = Array.from({ length: 1 + (i % 5) }, (_, k) => NAMES[(i + k) % NAMES.length]!);
    return {
      ...p,
      authors,
      upvotes: (i * 7) % 40,
      codeUrl: i % 5 === 0 ? `https://github.com/example/repo-${i}` : null,
      matchedTopics: topics.map((text) => ({ text, muteUrl: `https://digest.example.org/mute/tok-${TOPICS.indexOf(text)}` })),
      feedback: {
        more: `https://digest.example.org/feedback/v${i}/more`,
        less: `https://digest.example.org/feedback/v${i}/less`,
        follow: { url: `https://digest.example.org/follow/v${i}`, name: authors[0]! },
        canonical: true,
      },
    };
  });
  const suggestions = papers(2).map((p, i) => ({
    ...p,
    url: `https://arxiv.org/abs/2511.2000${i}`,
    matchedTopics: [],
    feedback: { more: `https://digest.example.org/feedback/s${i}/more`, less: `https://digest.example.org/feedback/s${i}/less`, canonical: true },
  }));
  return { ...digestView(list), edition: '2025-11-25', suggestions };
}

/** In the page: sizes, first screen, targets and contrast (plain JS: it runs in Chromium as given). */
const MEASURE = `((targetsSelector) => {
  const parse = (c) => { const m = c.match(/[\\d.]+/g) || []; return { r: +m[0] || 0, g: +m[1] || 0, b: +m[2] || 0, a: m[3] === undefined ? 1 : +m[3] }; };
  const lum = ({ r, g, b }) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); }; return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  const over = (top, under) => ({ r: top.r * top.a + under.r * (1 - top.a), g: top.g * top.a + under.g * (1 - top.a), b: top.b * top.a + under.b * (1 - top.a), a: 1 });
  const background = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) { const c = parse(getComputedStyle(e).backgroundColor); if (c.a > 0) layers.push(c); if (c.a >= 1) break; }
    const canvas = getComputedStyle(document.documentElement).colorScheme.includes('dark') && matchMedia('(prefers-color-scheme: dark)').matches ? { r: 18, g: 18, b: 18, a: 1 } : { r: 255, g: 255, b: 255, a: 1 };
    return layers.reverse().reduce((acc, c) => over(c, acc), canvas);
  };
  const visible = (el) => { const r = el.getBoundingClientRect(); const s = getComputedStyle(el); return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && +s.opacity > 0.1; };
  const low = [];
  for (const el of document.body.querySelectorAll('*')) {
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim() !== '');
    if (!own || !visible(el)) continue;
    const bg = background(el);
    const fg = over(parse(getComputedStyle(el).color), bg);
    const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
    const ratio = (a + 0.05) / (b + 0.05);
    if (ratio < 4.5) low.push({ text: el.textContent.trim().slice(0, 40), ratio: Math.round(ratio * 100) / 100, color: getComputedStyle(el).color, bg: JSON.stringify(bg) });
  }
  const targets = [...document.querySelectorAll(targetsSelector)].filter(visible).map((el) => { const r = el.getBoundingClientRect(); return { text: el.textContent.trim(), x: r.left + scrollX, y: r.top + scrollY, w: r.width, h: r.height }; });
  let closest = Infinity;
  let pair = '';
  for (let i = 0; i < targets.length; i++) for (let j = i + 1; j < targets.length; j++) {
    const a = targets[i], b = targets[j];
    const dx = Math.max(0, b.x - (a.x + a.w), a.x - (b.x + b.w));
    const dy = Math.max(0, b.y - (a.y + a.h), a.y - (b.y + b.h));
    const gap = Math.max(dx, dy);
    if (gap < closest) { closest = gap; pair = a.text + ' / ' + b.text; }
  }
  return {
    height: document.documentElement.scrollHeight,
    overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
    low,
    targets: targets.length,
    smallest: targets.reduce((m, t) => Math.min(m, t.w, t.h), Infinity),
    closest,
    pair,
  };
})`;

interface Measured {
  height: number;
  overflow: number;
  low: Array<{ text: string; ratio: number; color: string; bg: string }>;
  targets: number;
  smallest: number;
  closest: number;
  pair: string;
}

const EMAIL_TARGETS = 'a.pd-b';
const WEB_TARGETS = '.acts .b, .gh .b, .f label';

warnIfNoChromium();

describe.skipIf(!haveChromium)('a digest read on a phone and a laptop (Chromium)', () => {
  let browser: Browser;
  let renderer: Renderer;
  let sixty: RenderedEmail;
  let five: RenderedEmail;
  let web: string;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    renderer = await createRenderer();
    sixty = renderer.digest(digest(60));
    five = renderer.digest(digest(5));
    web = renderer.webView(digest(60));
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    for (const c of contexts) await c.close();
    await browser?.close();
  });

  async function open(html: string, size: { width: number; height: number }, scheme: 'light' | 'dark'): Promise<Page> {
    // No JavaScript: what an email client runs, and what the web view must work without.
    const context = await browser.newContext({ viewport: size, colorScheme: scheme, javaScriptEnabled: false });
    contexts.push(context);
    const page = await context.newPage();
    await page.route('**/*', (route) => route.abort()); // nothing is fetched
    await page.setContent(html, { waitUntil: 'load' });
    return page;
  }

  async function measure(page: Page, targets: string): Promise<Measured> {
    // Measured through a CDP evaluation: page.evaluate works with JavaScript off in the page itself.
    return (await page.evaluate(`${MEASURE}(${JSON.stringify(targets)})`)) as Measured;
  }

  it('the 60-paper email: under the clipping size, about six phone screens, counts and five titles on the first', async () => {
    expect(sixty.htmlBytes!).toBeLessThan(100_000);
    expect(Buffer.byteLength(sixty.html)).toBeLessThan(102 * 1024);
    for (const scheme of ['light', 'dark'] as const) {
      for (const size of [PHONE, LAPTOP]) {
        const page = await open(sixty.html, size, scheme);
        const m = await measure(page, EMAIL_TARGETS);
        await page.screenshot({ path: join(SHOTS, `email-60-${size.width}-${scheme}.png`), fullPage: true });
        expect(m.overflow, `${size.width} px scrolls sideways`).toBeLessThanOrEqual(0);
        expect(m.low, `${size.width} px ${scheme}: text under 4.5:1`).toEqual([]);
        expect(m.targets).toBeGreaterThan(60);
        expect(m.smallest, `${size.width} px ${scheme}: a target under 24 px`).toBeGreaterThanOrEqual(24);
        expect(m.closest, `${size.width} px ${scheme}: ${m.pair}`).toBeGreaterThanOrEqual(8);
        if (scheme === 'light') await expectFirstScreen(page, `email-60-${size.width}`);
        if (size === PHONE) {
          console.log(`60-paper email at 390 px: ${m.height} px, ${(m.height / PHONE.height).toFixed(2)} screens; ${sixty.shownPapers} papers shown (${sixty.fullPapers} in full), ${sixty.htmlBytes} bytes`);
          expect(m.height / PHONE.height).toBeLessThanOrEqual(6.3);
        }
        await page.close();
      }
    }
  });

  it('the 5-paper email shows every paper in full, counts and all five titles on the first phone screen', async () => {
    expect(five).toMatchObject({ shownPapers: 5, fullPapers: 5 });
    for (const scheme of ['light', 'dark'] as const) {
      for (const size of [PHONE, LAPTOP]) {
        const page = await open(five.html, size, scheme);
        const m = await measure(page, EMAIL_TARGETS);
        await page.screenshot({ path: join(SHOTS, `email-5-${size.width}-${scheme}.png`), fullPage: true });
        expect(m.overflow).toBeLessThanOrEqual(0);
        expect(m.low, `${size.width} px ${scheme}: text under 4.5:1`).toEqual([]);
        expect(m.smallest).toBeGreaterThanOrEqual(24);
        expect(m.closest, m.pair).toBeGreaterThanOrEqual(8);
        // Every paper in full: a card with its abstract, no compact line.
        const cards = await page.locator('.pd-c').count();
        const abstracts = await page.locator('.pd-c .pd-x').evaluateAll((els) => els.filter((e) => (e.textContent ?? '').trim().length > 40).length);
        expect([cards, abstracts, await page.locator('.pd-l:not(.pd-s)').count()]).toEqual([5, 5, 0]);
        if (scheme === 'light') await expectFirstScreen(page, `email-5-${size.width}`);
        await page.close();
      }
    }
  });

  async function expectFirstScreen(page: Page, name: string): Promise<void> {
    await page.screenshot({ path: join(SHOTS, `${name}-first-screen.png`) });
    const first = (await page.evaluate(`(() => {
      const inView = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.top >= 0 && r.bottom <= innerHeight; };
      const glance = [...document.querySelectorAll('.pd-gl')].filter(inView).map((e) => e.textContent.replace(/\\s+/g, ' ').trim());
      const titles = new Set([...document.querySelectorAll('.pd-tp a, .pd-c h2 a, a.pd-t')].filter(inView).map((a) => a.getAttribute('href')));
      return { glance, titles: titles.size };
    })()`)) as { glance: string[]; titles: number };
    // Per topic counts, by the topic's name (not its query), and the suggestions.
    const glance = first.glance.join(' ');
    for (const topic of ['reinforcement learning', 'language model or LLM', 'diffusion or flow matching']) expect(glance).toMatch(new RegExp(`${topic} \\d+`));
    expect(glance).toContain('2 you may also like');
    expect(first.titles).toBeGreaterThanOrEqual(5);
  }

  it('the web view: an index, papers under their topics, abstracts one tap away, a topic filter, all without JavaScript', async () => {
    expect(web).not.toMatch(/<script/i);
    for (const scheme of ['light', 'dark'] as const) {
      for (const size of [PHONE, LAPTOP]) {
        const page = await open(web, size, scheme);
        const m = await measure(page, WEB_TARGETS);
        await page.screenshot({ path: join(SHOTS, `web-60-${size.width}-${scheme}.png`), fullPage: true });
        expect(m.overflow).toBeLessThanOrEqual(0);
        expect(m.low, `${size.width} px ${scheme}: text under 4.5:1`).toEqual([]);
        expect(m.smallest).toBeGreaterThanOrEqual(24);
        expect(m.closest, m.pair).toBeGreaterThanOrEqual(8);
        if (size === PHONE) {
          console.log(`60-paper web view at 390 px, abstracts collapsed: ${m.height} px, ${(m.height / PHONE.height).toFixed(2)} screens`);
          expect(m.height / PHONE.height).toBeLessThan(12);
        }
        await page.close();
      }
    }
    const page = await open(web, PHONE, 'light');
    // The index: one entry per topic, each an anchor to its group.
    await expect(page.locator('.idx a').evaluateAll((as) => as.map((a) => `${a.textContent} ${a.getAttribute('href')}`))).resolves.toEqual([
      'reinforcement learning #t-1',
      'language model or LLM #t-2',
      'diffusion or flow matching #t-3',
    ]);
    // One tap on "Abstract" shows the whole abstract; it is hidden before.
    const abstract = page.locator('#p1 .ab');
    await expect(abstract.isVisible()).resolves.toBe(false);
    await page.locator('#p1 label.b').click();
    await expect(abstract.isVisible()).resolves.toBe(true);
    expect((await abstract.textContent())!.length).toBeGreaterThan(600);
    // The email's top picks lead to their place on the web view, where the whole abstract is open.
    const picks = [...sixty.html.matchAll(/<ol class="pd-tp">([\s\S]*?)<\/ol>/g)][0]![1]!;
    expect([...picks.matchAll(/href="([^"]+)"/g)].map((m) => m[1])).toEqual([1, 2, 3, 4, 5].map((n) => `https://digest.example.org/digests/tok-view#p${n}`));
    await page.evaluate(`location.hash = '#p3'`);
    await expect(page.locator('#p3 .ab').isVisible()).resolves.toBe(true);
    // The filter: only the chosen topic's papers stay.
    await page.locator('label[for="f-2"]').click();
    await expect(page.locator('#t-1').isVisible()).resolves.toBe(false);
    await expect(page.locator('#t-2').isVisible()).resolves.toBe(true);
    await page.screenshot({ path: join(SHOTS, 'web-60-390-filtered.png'), fullPage: true });
    await page.locator('label[for="f-0"]').click();
    await expect(page.locator('#t-1').isVisible()).resolves.toBe(true);
    await page.close();
  });
});
