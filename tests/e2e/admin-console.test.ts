// The operator console in real Chromium: logged-out access refused, login, the overview's charts drawn
// with the seeded 90 days, subscriber search by address and by topic, an action (suppress), a POST
// without the CSRF token refused, logout. Screenshots go to test-output/screenshots/. On SQLite and on
// PostgreSQL (the harness's days copied there, the console served as `digest serve` serves it), one
// browser for the file, a context per engine.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { fileBrowser, haveChromium, warnIfNoChromium } from '../helpers/chromium.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, countOn, idOn, startAdminHarness } from '../helpers/admin-setup.ts';
import { forEachEngine } from '../helpers/on-engines.ts';
import type { WebHarness } from '../helpers/web-harness.ts';

const SHOTS = join(import.meta.dirname, '..', '..', 'test-output', 'screenshots');

warnIfNoChromium();

const launched = fileBrowser();

describe.skipIf(!haveChromium)('operator console in Chromium', () => forEachEngine('the console', (engine) => {
  let h: WebHarness;
  let page: Page;
  const shot = (name: string) => join(SHOTS, engine === 'sqlite' ? `${name}.png` : `${name}-${engine}.png`);
  const status = async (email: string) => (await h.sql.get<{ status: string }>('SELECT status FROM subscribers WHERE email = ?', email))!.status;
  const idOf = (email: string) => idOn(h, email);

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    h = await startAdminHarness({}, { servePublicUrl: true, engine });
    page = await (await (await launched()).newContext({ viewport: { width: 1024, height: 900 } })).newPage();
  }, 60_000);

  afterAll(async () => {
    await page?.context().close();
    await h?.close();
  });

  it('refuses a logged-out visitor: pages send to the login, actions answer 401', async () => {
    const alice = await idOf('alice@example.com');
    await page.goto(`${h.base}/admin/subscribers/${alice}`);
    expect(new URL(page.url()).pathname).toBe('/admin/login');
    const res = await page.evaluate(async (url) => (await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '_csrf=x' })).status, `${h.base}/admin/subscribers/${alice}/suppress`);
    expect(res).toBe(401);
    expect(await status('alice@example.com')).toBe('confirmed');
  });

  it('logs in (a wrong password first) and draws the 90-day charts with the data', async () => {
    await page.goto(`${h.base}/admin/login`);
    await page.fill('#password', 'not the password at all');
    await page.click('button[type=submit]');
    expect(await page.locator('.error').textContent()).toBe('Wrong password.');
    await page.fill('#password', ADMIN_PASSWORD);
    await page.click('button[type=submit]');
    await page.waitForURL(`${h.base}/admin`);
    expect(await page.locator('h1').textContent()).toContain('Overview');

    // Confirmed subscribers: 2 before the window, +1 on 2 Oct, +1 on 20 Nov; the line ends at 4, then the
    // complaint (unsubscribed albert today) takes one away: 3.
    expect(await page.locator('#total-confirmed').textContent()).toBe('3');
    const line = page.locator('#chart-confirmed svg.chart');
    expect(await line.getAttribute('data-points')).toBe('90');
    expect(await line.getAttribute('data-max')).toBe('4');
    expect(await line.locator('polyline').count()).toBe(1);
    // Digests: 3 sent today.
    const digests = page.locator('#chart-digests svg.chart');
    expect(await digests.getAttribute('data-sum')).toBe('3');
    expect(await digests.locator('rect.bar').count()).toBe(1);
    expect(await digests.locator('rect.bar title').textContent()).toBe('2025-11-25: 3 sent');
    const box = await digests.locator('rect.bar').boundingBox();
    expect(box!.height).toBeGreaterThan(10); // really drawn, not a zero-height bar
    // Bounces and complaints, papers per source.
    expect(await page.locator('#chart-bounces svg.chart').getAttribute('data-sum')).toBe('2');
    expect(await page.locator('#chart-papers figcaption').textContent()).toContain('arxiv:cs.LG');
    expect(await page.locator('#chart-papers rect.bar').count()).toBe(2);
    await page.screenshot({ path: shot('admin-01-overview'), fullPage: true });
  });

  it('finds subscribers by address and by topic, and suppresses one from their page', async () => {
    await page.click('nav >> text=Subscribers');
    await page.fill('#q', 'al');
    await page.click('form.search button');
    expect(await page.locator('table.results tbody tr td:first-child').allTextContents()).toEqual(['albert@example.com', 'alice@example.com']);
    await page.fill('#q', 'GRAPH');
    await page.selectOption('select[name=by]', 'topic');
    await page.click('form.search button');
    expect(await page.locator('table.results tbody tr td:first-child').allTextContents()).toEqual(['albert@example.com', 'bob@example.com']);

    await page.click('text=bob@example.com');
    expect(await page.locator('h1').textContent()).toBe('bob@example.com');
    expect(await page.locator('text=web view').count()).toBe(1);
    expect(await page.locator('table >> text=over quota').count()).toBe(1); // bounce history
    await page.screenshot({ path: shot('admin-02-subscriber'), fullPage: true });
    await page.click('button:has-text("Suppress")');
    expect(await page.locator('#status').textContent()).toBe('suppressed');
    expect(await page.locator('.ok').textContent()).toContain('Suppressed');
    expect(await status('bob@example.com')).toBe('suppressed');
  });

  it('refuses a POST without the CSRF token (or with a wrong one), even with the session cookie', async () => {
    const url = `${h.base}/admin/subscribers/${await idOf('alice@example.com')}/unsubscribe`;
    const codes = await page.evaluate(async (u) => {
      const post = (body: string) => fetch(u, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body, redirect: 'manual' });
      return [(await post('')).status, (await post('_csrf=forged-token')).status];
    }, url);
    expect(codes).toEqual([403, 403]);
    expect(await status('alice@example.com')).toBe('confirmed');
  });

  it('logs out: the session is gone', async () => {
    await page.click('button:has-text("Log out")');
    await page.waitForURL(`${h.base}/admin/login`);
    await page.goto(`${h.base}/admin`);
    expect(new URL(page.url()).pathname).toBe('/admin/login');
    expect(await countOn(h, 'SELECT count(*) AS n FROM admin_sessions')).toBe(0);
  });
}));
