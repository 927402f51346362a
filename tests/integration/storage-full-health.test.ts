// /health on a real full disk: a load balancer must take an instance that can save nothing out of its
// pool. A small tmpfs holds the database of a real listening server; a filler file takes every free byte.
// Whenever POST /subscribe is refused with DB_FULL, /health (past its 1 s cache) answers 503 naming
// DB_FULL with Retry-After; once space is freed, both work again.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fillDisk, smallTmpfs, type Mount } from '../helpers/storage-faults.ts';
import { jsonPost, startWebHarness, type WebHarness } from '../helpers/web-harness.ts';

let h: WebHarness | undefined;
const mounts: Mount[] = [];
afterEach(async () => {
  await h?.close();
  h = undefined;
  for (const m of mounts.splice(0)) m.unmount();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function subscribe(web: WebHarness, email: string) {
  const res = await fetch(`${web.base}/subscribe`, { ...jsonPost({ email, topics: ['diffusion', `topic ${email.split('@')[0]}`] }), headers: { 'content-type': 'application/json', accept: 'application/json' } });
  return { status: res.status, body: (await res.json()) as { ok: boolean; code?: string } };
}

async function health(web: WebHarness) {
  const res = await fetch(`${web.base}/health`);
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as { ok: boolean; code?: string; error?: string } };
}

describe('/health on a full disk', () => {
  // Default margin: /health sees the full disk by itself, before any visitor meets it. DB_MIN_FREE_MB=0: no
  // margin (as under a quota statfs does not show), so only the refused writes themselves can tell it.
  it.for([
    { margin: '4', first: 'before any write is refused' },
    { margin: '0', first: 'from the first refused write' },
  ])('DB_MIN_FREE_MB=$margin: 503 naming DB_FULL $first, whenever POST /subscribe is refused; ok again once space is freed', { timeout: 60_000 }, async ({ margin }, ctx) => {
    const fs = smallTmpfs(16 * 1024);
    if (!fs) {
      ctx.skip('a full disk needs a small tmpfs, and this process may not mount one (not root): skipped');
      return;
    }
    mounts.push(fs);
    h = await startWebHarness({ DATABASE_PATH: join(fs.dir, 'digest.sqlite'), DB_BUSY_TIMEOUT_MS: '50', SUBSCRIBE_RATE_LIMIT: '1000', DB_MIN_FREE_MB: margin });
    // Some history, so the WAL has grown and been reused (the slack a tiny probe fits in).
    for (let i = 0; i < 30; i++) expect((await subscribe(h, `early${i}@example.com`)).status).toBe(202);
    expect((await health(h)).status).toBe(200);

    const free = fillDisk(join(fs.dir, 'filler'));
    await sleep(1_200);
    if (margin !== '0') expect((await health(h)).body).toMatchObject({ ok: false, code: 'DB_FULL' });
    let refused = 0;
    for (let round = 0; round < 3; round++) {
      // Several subscribers, as real traffic brings: each one that the disk refuses must be matched by /health.
      for (let i = 0; i < 5; i++) {
        const r = await subscribe(h, `full${round}-${i}@example.com`);
        if (r.status === 503) {
          expect(r.body).toMatchObject({ ok: false, code: 'DB_FULL' });
          refused++;
        } else expect(r.status).toBe(202);
      }
      await sleep(1_200); // past /health's one-second cache
      const sick = await health(h);
      if (refused > 0) {
        expect(sick.status).toBe(503);
        expect(sick.retryAfter).toBe('60');
        expect(sick.body).toMatchObject({ ok: false, code: 'DB_FULL' });
        expect(sick.body.error).toMatch(/disk full/);
      }
    }
    expect(refused).toBeGreaterThan(0);

    free();
    const until = performance.now() + 5_000;
    for (;;) {
      const again = await health(h);
      if (again.status === 200) break;
      if (performance.now() > until) throw new Error(`/health still not ok after space was freed: ${JSON.stringify(again.body)}`);
      await sleep(200);
    }
    expect((await subscribe(h, 'after@example.com')).status).toBe(202);
  });
});
