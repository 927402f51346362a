// The operator console read on a phone (390 x 844) in real Chromium: charts drawn for the screen (labels
// at least 10 px, none cut at the edge), times in the operator's zone and relative ("3 h ago") on one
// line, table headers and one-word cells never broken ("err/or"), nothing wider than the screen, and the
// complaint rate coloured and worded against 0.1% / 0.3%. Screenshots go to test-output/reading/. On
// SQLite and on PostgreSQL (the harness's days copied there, the console served as `digest serve` serves
// it), one browser for the file, a context per engine.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { fileBrowser, haveChromium, warnIfNoChromium } from '../helpers/chromium.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, idOn, startAdminHarness } from '../helpers/admin-setup.ts';
import { forEachEngine } from '../helpers/on-engines.ts';
import type { WebHarness } from '../helpers/web-harness.ts';

const SHOTS = join(import.meta.dirname, '..', '..', 'test-output', 'reading');

warnIfNoChromium();

/** In the page: sideways overflow, and every table header or one-word cell that takes more than one line. */
const LAYOUT = `(() => {
  const lines = (el) => { const r = document.createRange(); r.selectNodeContents(el); const tops = new Set([...r.getClientRects()].map((x) => Math.round(x.top))); return tops.size; };
  const broken = [...document.querySelectorAll('th, td')].filter((el) => { const t = el.textContent.trim(); return t !== '' && !/\\s/.test(t) && t.length <= 16 && lines(el) > 1; }).map((el) => el.textContent.trim());
  const times = [...document.querySelectorAll('time')].map((el) => ({ text: el.textContent.trim(), lines: lines(el), title: el.getAttribute('title') }));
  return { overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth, broken, times };
})()`;

const launched = fileBrowser();

describe.skipIf(!haveChromium)('operator console on a 390 px phone', () => forEachEngine('the console', (engine) => {
  let h: WebHarness;
  let page: Page;
  const shot = (name: string) => join(SHOTS, engine === 'sqlite' ? `${name}.png` : `${name}-${engine}.png`);

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    // The operator's zone: DIGEST_TZ.
    h = await startAdminHarness({ DIGEST_TZ: 'Europe/Berlin' }, { servePublicUrl: true, engine });
    page = await (await (await launched()).newContext({ viewport: { width: 390, height: 844 } })).newPage();
    await page.goto(`${h.base}/admin/login`);
    await page.fill('#password', ADMIN_PASSWORD);
    await page.click('button[type=submit]');
    await page.waitForURL(`${h.base}/admin`);
  }, 60_000);

  afterAll(async () => {
    await page?.context().close();
    await h?.close();
  });

  it('overview: charts drawn for the phone, labels legible and whole, complaint rate over 0.3% in red words', async () => {
    await page.screenshot({ path: shot('console-overview-390'), fullPage: true });
    const layout = (await page.evaluate(LAYOUT)) as { overflow: number };
    expect(layout.overflow).toBeLessThanOrEqual(0);
    await expect(page.locator('#chart-digests svg.chart').isVisible()).resolves.toBe(false);
    await expect(page.locator('#chart-digests svg.chart-sm').isVisible()).resolves.toBe(true);
    const labels = (await page.evaluate(`[...document.querySelectorAll('svg.chart-sm')].flatMap((svg) => {
      const box = svg.getBoundingClientRect();
      return [...svg.querySelectorAll('text')].map((t) => { const r = t.getBoundingClientRect(); return { text: t.textContent, h: r.height, inside: r.left >= box.left - 0.5 && r.right <= box.right + 0.5 }; });
    })`)) as Array<{ text: string; h: number; inside: boolean }>;
    expect(labels.length).toBeGreaterThan(10);
    for (const l of labels) {
      expect(l.h, `label "${l.text}" is ${l.h} px tall`).toBeGreaterThanOrEqual(10);
      expect(l.inside, `label "${l.text}" is cut at the chart's edge`).toBe(true);
    }
    // 1 complaint for 3 digests sent: far over 0.3%.
    const rate = page.locator('.totals .rate-bad');
    await expect(rate.textContent()).resolves.toContain('too high: at or over 0.3%');
    const colour = (await page.evaluate(`getComputedStyle(document.querySelector('#complaint-rate')).color`)) as string;
    expect(colour).toBe('rgb(164, 22, 26)');
  });

  it('a subscriber: times in the operator’s zone and relative, on one line; tables keep words whole', async () => {
    await page.goto(`${h.base}/admin/subscribers/${await idOn(h, 'bob@example.com')}`);
    await page.screenshot({ path: shot('console-subscriber-390'), fullPage: true });
    const layout = (await page.evaluate(LAYOUT)) as { overflow: number; broken: string[]; times: Array<{ text: string; lines: number; title: string }> };
    expect(layout.overflow).toBeLessThanOrEqual(0);
    expect(layout.broken).toEqual([]);
    // Created 2025-10-02T09:00Z (11:00 in Berlin), the harness clock is 2025-11-25T09:00Z.
    expect(layout.times.map((t) => t.text)).toContain('2 Oct 11:00 CEST · 54 d ago');
    expect(layout.times.find((t) => t.text.startsWith('25 Nov'))?.text).toMatch(/^25 Nov \d\d:\d\d CET · (just now|\d+ (min|h) ago)$/);
    for (const t of layout.times) {
      expect(t.lines, t.text).toBe(1);
      expect(t.title).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
    await page.goto(`${h.base}/admin/deliveries`);
    await page.screenshot({ path: shot('console-deliveries-390'), fullPage: true });
    const deliveries = (await page.evaluate(LAYOUT)) as { overflow: number; broken: string[] };
    expect(deliveries).toMatchObject({ overflow: 0, broken: [] });
  });
}));
