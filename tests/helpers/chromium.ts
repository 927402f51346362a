// Debian's Chromium for the browser tests, started one way: headless flags that keep it off this machine's
// closed network. A file without Chromium skips its browser tests and says so once.
import { existsSync } from 'node:fs';
import { afterAll } from 'vitest';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const haveChromium = existsSync(CHROMIUM);

export function warnIfNoChromium(what = 'browser tests'): void {
  if (!haveChromium) console.warn(`SKIPPED ${what}: no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set CHROMIUM_PATH)`);
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-dev-shm-usage'],
  });
}

/** One browser for the whole file, started at first use (never when every test is skipped), closed after. */
export function fileBrowser(): () => Promise<Browser> {
  let browser: Browser | undefined;
  afterAll(async () => {
    await browser?.close();
  });
  return async () => (browser ??= await launchChromium());
}
