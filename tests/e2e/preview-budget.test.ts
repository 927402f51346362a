// The topic builder's page says from which day its preview counts when the server holds only its newest
// days (PREVIEW_MIRROR_MB on PostgreSQL: the API's `from`), in real Chromium on the served subscribe page.
// The same papers and the same 1 MB budget on both engines: SQLite holds every day and the page says
// "over the last 30 days"; PostgreSQL's mirror holds the newest day only and the page names it.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { haveChromium, launchChromium, warnIfNoChromium } from '../helpers/chromium.ts';
import { forEachEngine } from '../helpers/on-engines.ts';
import { seedBatch } from '../helpers/seed.ts';
import { startWebHarness, type WebHarness } from '../helpers/web-harness.ts';

warnIfNoChromium();

const DAYS = ['2025-11-22', '2025-11-23', '2025-11-24'];
const PER_DAY = 200;
/** About 1 kB of text a paper: 200 papers a day take some 0.6 MB of mirror, so 1 MB holds one day, not two. */
const FILLER = 'We study sample efficiency, credit assignment and exploration in sequential decision making. '.repeat(10);

forEachEngine('the topic builder within PREVIEW_MIRROR_MB', (engine) => describe.skipIf(!haveChromium)('in Chromium', () => {
  let h: WebHarness;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    h = await startWebHarness({ PREVIEW_MIRROR_MB: '1' }, '2025-11-25T09:00:00Z', {
      engine,
      seed: (tmp) => {
        for (const date of DAYS) {
          const papers = Array.from({ length: PER_DAY }, (_, i) => ({
            key: `${date.replaceAll('-', '').slice(2)}.${String(i).padStart(5, '0')}`,
            title: i % 2 === 0 ? `Reinforcement learning agents, part ${i}` : `Graph networks, part ${i}`,
            abstract: FILLER,
          }));
          seedBatch(tmp.db, date, papers);
        }
      },
    });
    browser = await launchChromium();
    page = await browser.newPage();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  it('says over which days the count and the papers a day are, as the API answers', async () => {
    await page.goto(`${h.base}/`);
    await page.locator('#topic-0').fill('reinforcement learning');
    const status = page.locator('#topic-0-status');
    await expect.poll(() => status.textContent(), { timeout: 60_000 }).toMatch(/match/);
    const api = (await (await fetch(`${h.base}/api/topics/preview?q=reinforcement%20learning`)).json()) as { total: number; perDay: number; from?: string };
    const text = (await status.textContent())!;
    if (engine === 'sqlite') {
      expect(api).not.toHaveProperty('from');
      expect(api).toMatchObject({ total: 3 * (PER_DAY / 2) });
      expect(text).toContain(`${api.total} papers of the last 14 days match; the first 5: About ${api.perDay} a day over the last 30 days.`);
      expect(text).not.toContain('Counted from');
    } else {
      // The mirror holds the 24th only: 100 papers, all of them in one day.
      expect(api).toMatchObject({ total: PER_DAY / 2, perDay: PER_DAY / 2, from: '2025-11-24' });
      expect(text).toContain(`${api.total} papers of the last 14 days match; the first 5: About ${api.perDay} a day since Mon 24 Nov.`);
      expect(text).toContain('Counted from Mon 24 Nov, the oldest day this preview holds.');
    }
  }, 120_000);
}));
