// A subscriber's whole journey in real Chromium at 360 px: subscribe with the topic builder (live
// preview, inline syntax error, time zone detected) -> confirmation email caught over SMTP -> confirm
// -> preferences (topics, hour, frequency) -> the next digest follows them -> unsubscribe from the
// email's link. Screenshots of each page and of the rendered digest go to test-output/screenshots/.
// On both engines (tests/engines.ts): on PostgreSQL the batches go into the harness's schema, the web serves
// what `digest serve` serves there, and `digest run`'s tick (in this process) sends the welcome and next
// digests from it; its screenshots go to test-output/screenshots/postgres/.
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { haveChromium, launchChromium, warnIfNoChromium } from '../helpers/chromium.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ManualClock } from '../../src/clock.ts';
import { parseFeed } from '../../src/ingest/detect.ts';
import type pg from 'pg';
import { createPool } from '../../src/db/postgres/pool.ts';
import { ingestBatch } from '../../src/ingest/ingest.ts';
import { ingestBatchPg } from '../../src/ingest/postgres/ingest.ts';
import type { AppWithDb } from '../helpers/test-app.ts';
import { runTick } from '../helpers/engine-tick.ts';
import { forEachEngine } from '../helpers/on-engines.ts';
import type { SmtpCapture } from '../helpers/smtp-capture.ts';
import { runPipeline } from '../../src/pipeline.ts';
import { linkIn, startWebHarness, type WebHarness } from '../helpers/web-harness.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const SHOTS = join(ROOT, 'test-output', 'screenshots');
const ALICE = 'alice@example.org';

interface FixturePaper {
  id: string;
  title: string;
  abstract: string;
}
const batchFile = (date: string) => join(ROOT, 'tests/fixtures/batches', `${date}.json`);
const papersOf = (date: string) => (JSON.parse(readFileSync(batchFile(date), 'utf8')) as { papers: FixturePaper[] }).papers;

warnIfNoChromium();

interface Reader {
  status: string;
  deliveryHour: number;
  frequency: string;
  weeklyDay: number;
  timezone: string;
  topics: Array<{ text: string; muted: boolean }>;
}

forEachEngine('subscriber journey', (engine) => describe.skipIf(!haveChromium)('in Chromium (360 px)', () => {
  const shots = engine === 'sqlite' ? SHOTS : join(SHOTS, 'postgres');
  let h: WebHarness;
  /** PostgreSQL's pool on the harness's schema (the batches go in there, the ticks run over it). */
  let pool: pg.Pool | undefined;
  let app: AppWithDb;
  let smtp: SmtpCapture;
  let clock: ManualClock;
  let base: string;
  let browser: Browser;
  let page: Page;
  const welcome: Array<Promise<unknown>> = [];

  async function shot(name: string): Promise<void> {
    // Readable at 360 px: nothing wider than the screen.
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    expect(overflow, `${name} scrolls sideways`).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
  }

  async function ingest(date: string): Promise<void> {
    const batch = parseFeed(readFileSync(batchFile(date), 'utf8'), 'batch');
    if (pool) await ingestBatchPg(pool, batch, clock);
    else ingestBatch(app.db, batch, clock);
  }

  /** `digest run`'s tick on the harness's store. */
  const tick = (mode: 'now' | 'due') => runTick(app, { pool, pg: h.pg }, mode);

  /** The reader as the store the web serves from holds them. */
  async function reader(email: string): Promise<Reader> {
    const r = (await h.sql.get<{ id: number; status: string; delivery_hour: number; frequency: string; weekly_day: number; timezone: string }>(
      'SELECT id, status, delivery_hour, frequency, weekly_day, timezone FROM subscribers WHERE email = ?',
      email,
    ))!;
    const topics = await h.sql.all<{ text: string; muted: number }>('SELECT text, muted FROM topics WHERE subscriber_id = ? ORDER BY position', r.id);
    const { status, delivery_hour: deliveryHour, frequency, weekly_day: weeklyDay, timezone } = r;
    return { status, deliveryHour, frequency, weeklyDay, timezone, topics: topics.map((t) => ({ text: t.text, muted: Number(t.muted) === 1 })) };
  }

  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    // The browser follows the emailed links, so the server listens on PUBLIC_URL itself.
    h = await startWebHarness(
      { SECRET_KEY: 'browser-secret-key-0123456789abcdef0123456789', DIGEST_TZ: 'UTC', DIGEST_HOUR: '7' },
      '2025-11-25T09:00:00Z',
      {
        servePublicUrl: true,
        // As `digest serve` does: a welcome digest right after confirming.
        // (On PostgreSQL, `digest serve` plans it there and a worker sends it: here one tick, the only reader.)
        onConfirmed: (id) => welcome.push(pool ? tick('now') : runPipeline(app, { mode: 'now', onlySubscriber: id })),
        engine,
      },
    );
    ({ core: app, smtp, clock, base } = h);
    if (engine === 'postgres') pool = createPool(app.config.DATABASE_URL!, { schema: app.config.DATABASE_SCHEMA, max: 4 });
    await ingest('2025-11-25');
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 360, height: 780 }, timezoneId: 'Asia/Tokyo', locale: 'en-GB' });
    page = await context.newPage();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await pool?.end();
    await h?.close();
  });

  it('subscribes with the topic builder, using only the keyboard', async () => {
    await page.goto(`${base}/`);
    await expect.poll(() => page.locator('#timezone').inputValue()).toBe('Asia/Tokyo'); // detected, editable
    await expect.poll(() => page.locator('[data-timezone-help]').textContent()).toContain('Detected from your browser');

    // Tab from the top of the page to the email field: skip link, site name, email.
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect(await page.evaluate<string | undefined>('document.activeElement?.id')).toBe('email');
    await page.keyboard.type(ALICE);
    await page.keyboard.press('Tab');
    expect(await page.evaluate<string | undefined>('document.activeElement?.id')).toBe('topic-0');
    await page.keyboard.type('"self-play"');

    // The live preview lists recent matches with the matching words highlighted.
    const preview0 = page.locator('#topic-0-preview');
    await expect.poll(() => preview0.locator('li').count(), { timeout: 5000 }).toBeGreaterThan(0);
    expect(await page.locator('#topic-0-status').textContent()).toMatch(/papers? of the last 14 days match/);
    expect((await preview0.locator('mark').first().textContent())?.toLowerCase()).toContain('self');
    // Feed HTML in a title is shown as text, never run.
    expect(await preview0.locator('script').count()).toBe(0);

    // A syntax error shows inline, at its position, before submitting.
    await page.keyboard.press('Tab');
    await page.keyboard.type('"theory of mind');
    const error1 = page.locator('#topic-1-help');
    await expect.poll(() => error1.textContent(), { timeout: 5000 }).toMatch(/unbalanced quote at position 1/);
    expect(await page.locator('#topic-1').getAttribute('aria-invalid')).toBe('true');
    await shot('01-subscribe-topic-error');
    await page.keyboard.type('"');
    await expect.poll(() => error1.textContent(), { timeout: 5000 }).toBe('');
    await expect.poll(() => page.locator('#topic-1-preview li').count(), { timeout: 5000 }).toBeGreaterThan(0);
    await shot('02-subscribe-preview');

    await page.keyboard.press('Enter'); // submits the form
    await page.waitForURL(`${base}/subscribed`);
    expect(await page.locator('h1').textContent()).toBe('Check your inbox');
    await shot('03-check-inbox');
  });

  it('confirms from the caught email and receives the welcome digest', async () => {
    const mail = await smtp.waitFor(ALICE);
    // The email counts the topics; the page behind its link shows them (the requester's words never go into an email).
    expect(mail.text).toContain('2 topics chosen');
    expect(mail.text + mail.html).not.toContain('self-play');
    await page.goto(linkIn(mail.text, '/confirm/'));
    expect(await page.locator('h1').textContent()).toBe('Subscription confirmed');
    expect(await page.locator('.confirmed-topics').textContent()).toContain('"self-play"');
    await shot('04-confirmed');
    await Promise.all(welcome);
    const first = await smtp.waitFor(ALICE, 2);
    expect(first.text).toContain('SPIRAL: Self-Play on Zero-Sum Games');
  });

  it('changes topics, delivery hour and frequency on the preferences page', async () => {
    await page.getByRole('link', { name: 'Manage your topics and delivery' }).click();
    await page.waitForURL(/\/preferences\//);
    expect(await page.locator('#topic-0').inputValue()).toBe('"self-play"');
    expect(await page.locator('#timezone').inputValue()).toBe('Asia/Tokyo');

    await page.locator('#topic-0').fill('nash');
    await page.getByRole('checkbox', { name: 'Remove' }).nth(1).check(); // "theory of mind"
    await page.locator('#topic-2').fill('"multi-agent" -benchmark');
    await expect.poll(() => page.locator('#topic-2-preview li').count(), { timeout: 5000 }).toBeGreaterThan(0);
    await page.getByLabel('Delivery hour').selectOption({ label: '20:00' });
    await page.getByRole('radio', { name: 'Weekly' }).check();
    await page.getByLabel('Day for weekly digests').selectOption({ label: 'Wednesday' });
    await page.getByRole('button', { name: 'Save preferences' }).click();
    await page.waitForURL(/saved=1/);
    expect(await page.locator('#saved').textContent()).toContain('Saved');
    expect(await page.locator('#topic-0').inputValue()).toBe('nash');
    expect(await page.locator('#topic-1').inputValue()).toBe('"multi-agent" -benchmark');
    await shot('05-preferences-saved');

    const s = await reader(ALICE);
    expect(s.topics.map((t) => t.text)).toEqual(['nash', '"multi-agent" -benchmark']);
    expect([s.deliveryHour, s.frequency, s.weeklyDay, s.timezone]).toEqual([20, 'weekly', 3, 'Asia/Tokyo']);
  });

  it('sends the next digest at the new hour, with the new topics only', async () => {
    await ingest('2025-11-26');
    const before = smtp.to(ALICE).length;
    clock.set('2025-11-26T10:00:00Z'); // Wednesday 19:00 in Tokyo: not yet
    await tick('due');
    expect(smtp.to(ALICE).length).toBe(before);

    clock.set('2025-11-26T11:00:00Z'); // Wednesday 20:00 in Tokyo
    await tick('due');
    const digest = await smtp.waitFor(ALICE, before + 1);
    const wanted = papersOf('2025-11-26')
      .filter((p) => !p.id.startsWith('2511.10017')) // SPIRAL again: already sent in the welcome digest
      .filter((p) => {
        const t = `${p.title} ${p.abstract}`;
        return /\bnash\b/i.test(t) || (/\bmulti[- ]agents?\b/i.test(t) && !/benchmark/i.test(t));
      })
      .map((p) => p.title);
    expect(wanted.length).toBeGreaterThan(1);
    const sent = papersOf('2025-11-26').map((p) => p.title).filter((t) => digest.text.includes(t));
    expect(sent.sort()).toEqual([...new Set(wanted)].sort());

    await page.goto('about:blank'); // not under this site's CSP: the email's inline styles apply
    await page.setContent(digest.html);
    await shot('06-digest-email');
    await page.goto(linkIn(digest.text, '/digests/'));
    expect(await page.locator('body').textContent()).toContain(wanted[0]!);
    await shot('07-digest-web-view');
  });

  it('mutes from the email only after the button, and shows clear pages for bad links', async () => {
    const digest = smtp.to(ALICE).at(-1)!;
    await page.goto(linkIn(digest.html, '/mute/')); // the "mute" link beside the first paper's topic
    expect(await page.locator('h1').textContent()).toBe('Mute a topic');
    expect(await page.locator('main').textContent()).toContain('nash');
    await shot('08-mute');
    expect((await reader(ALICE)).topics.some((t) => t.muted)).toBe(false);
    await page.getByRole('button', { name: 'Mute this topic' }).click();
    await page.waitForLoadState();
    expect(await page.locator('h1').textContent()).toBe('Topic muted');
    await shot('09-muted');
    expect((await reader(ALICE)).topics.map((t) => [t.text, t.muted])).toEqual([
      ['nash', true],
      ['"multi-agent" -benchmark', false],
    ]);

    const response = await page.goto(`${base}/preferences/1.manage.0.${'A'.repeat(43)}`);
    expect(response?.status()).toBe(403);
    expect(await page.locator('h1').textContent()).toBe('This link is not valid');
    await shot('10-invalid-link');
  });

  it("unsubscribes from the email's link", async () => {
    const digest = smtp.to(ALICE).at(-1)!;
    const header = digest.headers.find((h) => h.key === 'list-unsubscribe')?.value ?? '';
    const link = linkIn(digest.text, '/unsubscribe/');
    expect(header).toContain(link);
    await page.goto(link);
    expect((await reader(ALICE)).status).toBe('confirmed'); // opening the link changes nothing
    await shot('11-unsubscribe');
    await page.getByRole('button', { name: 'Unsubscribe' }).click();
    await page.waitForLoadState();
    expect(await page.locator('h1').textContent()).toBe('You are unsubscribed');
    await shot('12-unsubscribed');
    expect((await reader(ALICE)).status).toBe('unsubscribed');
  });
}));
