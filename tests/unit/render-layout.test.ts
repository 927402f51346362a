// The rendered emails and web view in a real Chromium: readable on a 360 px phone (no sideways
// scrolling, footer links visible) and dark in dark mode. Skipped, saying so, when no Chromium exists.
import { mkdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { haveChromium, launchChromium, warnIfNoChromium } from '../helpers/chromium.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRenderer, type DigestPaperView, type DigestView, type Renderer } from '../../src/render/render.ts';

warnIfNoChromium('render-layout');

const LINKS = {
  preferences: 'https://digest.example.org/preferences/tok',
  unsubscribe: 'https://digest.example.org/unsubscribe/tok',
  webView: 'https://digest.example.org/digests/tok',
  home: 'https://digest.example.org/',
};

/** Screenshots of the long digest on a phone land here (git-ignored), for people to look at. */
const SHOTS = fileURLToPath(new URL('../../test-output/', import.meta.url));

function view(): DigestView {
  const paper = (i: number): DigestPaperView => ({
    title: `Supercalifragilisticexpialidocious-Transformers${'X'.repeat(40)} for reinforcement learning ${i}`,
    url: `https://arxiv.org/abs/2511.${10000 + i}`,
    authors: ['Ann Lee', 'Bo Chen', 'Cy Diaz', 'Di Ng', 'Ed Ode'],
    abstract: `We study reinforcement learning at scale. ${'Long abstract words go here. '.repeat(30)}`,
    upvotes: 12,
    categories: ['cs.LG', 'cs.AI'],
    publishedAt: '2025-11-24',
    matchedTopics: [{ text: 'reinforcement learning', muteUrl: 'https://digest.example.org/mute/tok' }],
  });
  return { email: 'ada@example.org', edition: '2025-11-25', papers: [paper(1), paper(2), paper(3)], links: LINKS };
}

describe.skipIf(!haveChromium)('rendered layout in Chromium', () => {
  let browser: Browser;
  let renderer: Renderer;
  beforeAll(async () => {
    renderer = await createRenderer();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  async function open(html: string, colorScheme: 'light' | 'dark', width = 360) {
    const page = await browser.newPage({ viewport: { width, height: 800 }, colorScheme });
    // Any request at all would be an external asset.
    const requests: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith('data:') && r.url() !== 'about:blank') requests.push(r.url());
    });
    await page.setContent(html, { waitUntil: 'load' });
    return { page, requests };
  }

  it('fits a 360 px phone without sideways scrolling, footer links visible, nothing fetched', async () => {
    const pages = {
      digest: renderer.digest(view()).html,
      confirm: renderer.confirm({ email: 'a@b.c', confirmUrl: LINKS.home, topicCount: 1, alreadySubscribed: false }).html,
      web: renderer.webView(view()),
    };
    for (const [name, html] of Object.entries(pages)) {
      const { page, requests } = await open(html, 'light');
      // Page-side code as strings: the project's type-check has no DOM library.
      const width = (await page.evaluate('document.documentElement.scrollWidth')) as number;
      expect(width, name).toBeLessThanOrEqual(360);
      expect(requests, name).toEqual([]);
      if (name === 'digest') {
        await expect(page.getByRole('link', { name: 'Unsubscribe' }).isVisible()).resolves.toBe(true);
        await expect(page.getByRole('link', { name: 'Manage preferences' }).isVisible()).resolves.toBe(true);
      }
      if (name === 'web') {
        // A web view may be shared: its footer links home, and no link acts for the reader.
        await expect(page.getByRole('link', { name: 'Paper Digest' }).isVisible()).resolves.toBe(true);
        expect(await page.getByRole('link', { name: 'Unsubscribe' }).count()).toBe(0);
      }
      await page.close();
    }
  });

  it('a 90-paper digest on a 360 px phone: full cards, then compact lines, button to the whole list, footer', async () => {
    const long = view();
    const base = long.papers[0]!;
    long.papers = Array.from({ length: 90 }, (_, i) => ({
      ...base,
      title: `${i < 5 ? 'Full' : 'Compact'} paper ${i + 1}: reinforcement learning for long-horizon tasks with sparse rewards`,
      url: `https://arxiv.org/abs/2511.${20000 + i}`,
      matchedTopics: [
        { text: 'reinforcement learning', muteUrl: 'https://digest.example.org/mute/tok1' },
        ...(i % 3 === 0 ? [{ text: 'sparse rewards', muteUrl: 'https://digest.example.org/mute/tok2' }] : []),
      ],
    }));
    const email = renderer.digest(long);
    // The default layout: the top 5 in full, the next 20 in short, grouped by topic.
    expect(email.fullPapers).toBe(5);
    const { page } = await open(email.html, 'light');
    const width = (await page.evaluate('document.documentElement.scrollWidth')) as number;
    expect(width).toBeLessThanOrEqual(360);
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: `${SHOTS}long-digest-360-top.png` });
    // The compact section: its heading, lines that fit the width, each with its matched topics.
    const heading = page.getByText(`${email.shownPapers - 5} more papers by topic`);
    await heading.scrollIntoViewIfNeeded();
    await expect(heading.isVisible()).resolves.toBe(true);
    await page.screenshot({ path: `${SHOTS}long-digest-360-compact.png` });
    const line = page.getByRole('link', { name: /Compact paper 6:/ });
    const box = (await line.boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(360);
    await expect(page.getByRole('link', { name: /All 90 papers with their abstracts|more papers in this digest/ }).isVisible()).resolves.toBe(true);
    await expect(page.getByRole('link', { name: 'Unsubscribe' }).isVisible()).resolves.toBe(true);
    await page.close();
    expect(statSync(`${SHOTS}long-digest-360-compact.png`).size).toBeGreaterThan(5_000);
  });

  it('turns dark in dark mode, highlights still distinct from the text around them', async () => {
    const html = renderer.digest(view()).html;
    const colors = async (scheme: 'light' | 'dark') => {
      const { page } = await open(html, scheme, 640);
      const result = (await page.evaluate(`(() => {
        const bg = (el) => (el ? getComputedStyle(el).backgroundColor : '');
        const card = document.querySelector('.pd-card div');
        return {
          body: bg(document.body),
          text: card ? getComputedStyle(card).color : '',
          hl: bg(document.querySelector('.pd-hl')),
          cardBg: bg(card ? card.closest('td') : null),
        };
      })()`)) as { body: string; text: string; hl: string; cardBg: string };
      await page.close();
      return result;
    };
    const light = await colors('light');
    const dark = await colors('dark');
    const luminance = (rgb: string) => {
      const [r = 0, g = 0, b = 0] = (rgb.match(/\d+/g) ?? []).map(Number);
      return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    expect(luminance(light.body)).toBeGreaterThan(200);
    expect(luminance(dark.body)).toBeLessThan(60);
    expect(luminance(dark.text)).toBeGreaterThan(180);
    expect(luminance(dark.cardBg)).toBeLessThan(80);
    expect(dark.hl).not.toBe(dark.cardBg);
  });
});
