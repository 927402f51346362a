// Storage faults, made for real: another process holding SQLite's write lock, a file system that fills
// up mid-send (a small tmpfs), a database that cannot be written (a read-only bind mount; PRAGMA
// query_only for a server already running). Through the public surfaces only: `digest run` / `digest
// serve` in child processes (one line, non-zero exit) and the web over HTTP (503 + Retry-After, never a
// 500; /health not ok). After each fault is gone, the next run completes: nothing lost, nothing twice.
import { runNodeChild } from '../helpers/run-child.ts';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.ts';
import { openDatabase } from '../../src/db/open.ts';
import { recoverStale } from '../../src/ledger/index.ts';
import { countByStatus, seedBatch, seedSubscribers, tempDatabaseDir } from '../helpers/seed.ts';
import { deliveryEnv, startBuiltRun, type DeliveryEnv } from '../helpers/delivery-setup.ts';
import { accept, type SinkOptions } from '../helpers/smtp-sink.ts';
import { fillDisk, holdWriteLock, readOnlyView, smallTmpfs, type Mount } from '../helpers/storage-faults.ts';
import { jsonPost, startWebHarness, type WebHarness } from '../helpers/web-harness.ts';
import { DIGEST_BIN } from '../helpers/build.ts';

let e: DeliveryEnv | undefined;
let h: WebHarness | undefined;
const mounts: Mount[] = [];
afterEach(async () => {
  await h?.close();
  await e?.close();
  for (const m of mounts.splice(0)) m.unmount();
  h = undefined;
  e = undefined;
});

// Messages 2-6 take 800 ms each: the fault (a lock holder starting up, a disk filling) lands mid-send
// even on a loaded machine; later ones (the run after the fault) go fast.
const SLOW_RELAY: SinkOptions = { script: (ctx) => accept(ctx.total >= 2 && ctx.total <= 6 ? 800 : 0) };
const RUN_ENV = { SMTP_POOL_SIZE: '1', SEND_WORKERS: '1', DB_BUSY_TIMEOUT_MS: '300' };

function seedAudience(env: DeliveryEnv, n: number): string[] {
  seedBatch(env.t.db, '2025-11-25', [{ title: 'Diffusion transformers for video', upvotes: 12 }]);
  const emails = Array.from({ length: n }, (_, i) => `reader${i}@example.com`);
  seedSubscribers(env.t.db, emails.map((email) => ({ email, topics: ['diffusion'] })));
  return emails;
}

/** The lines `digest` wrote on stderr (logs are silent in tests: only its own error lines). */
const errorLines = (stderr: string) => stderr.split('\n').filter((l) => l.trim() !== '');

/** Every address got exactly one email, and no row is left to send. */
function expectEachOnce(env: DeliveryEnv, emails: string[]) {
  const counts = env.sink.countsByAddress();
  expect(emails.map((a) => counts.get(a) ?? 0)).toEqual(emails.map(() => 1));
  const open = countByStatus(env.t.db);
  expect(open.planned ?? 0).toBe(0);
  expect(open.retry ?? 0).toBe(0);
  expect(open.sending ?? 0).toBe(0);
}

async function subscribe(web: WebHarness, email: string) {
  const res = await fetch(`${web.base}/subscribe`, { ...jsonPost({ email, topics: ['diffusion'] }), headers: { 'content-type': 'application/json', accept: 'application/json' } });
  return { res, body: (await res.json()) as { ok: boolean; code?: string } };
}

async function health(web: WebHarness) {
  const res = await fetch(`${web.base}/health`);
  return { res, body: (await res.json()) as { ok: boolean; code?: string; error?: string } };
}

/** /health caches its answer for a second: poll until it says ok again. */
async function healthyAgain(web: WebHarness, timeoutMs = 4_000) {
  const until = performance.now() + timeoutMs;
  for (;;) {
    const { body } = await health(web);
    if (body.ok) return;
    if (performance.now() > until) throw new Error(`/health still not ok: ${JSON.stringify(body)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The run after the fault, in this process: what `digest run` does once its plan is done (a row the
 * stopped run left in flight becomes unknown, then everything open is sent). Starting the CLI in a child
 * costs 3-7 s on this shared machine; the faulty run above is the child.
 */
async function nextRun(env: DeliveryEnv) {
  recoverStale(env.t.db, systemClock);
  const summary = await env.send();
  expect(summary).toMatchObject({ failed: 0, paused: false });
  expect(summary.storageFault).toBeUndefined();
}

/** `node bin/digest.js <args>` (built) with only this environment. */
function digest(args: string[], env: Record<string, string>, cwd: string) {
  return runNodeChild([DIGEST_BIN, ...args], { LOG_LEVEL: 'silent', ...env }, cwd);
}

describe('a write lock held by another process', () => {
  it('mid-send: digest run exits 1 with one line naming the lock; the next run completes, nothing lost or twice', async () => {
    e = await deliveryEnv({ env: RUN_ENV, sink: SLOW_RELAY });
    const emails = seedAudience(e, 6);
    await e.plan();

    const run = startBuiltRun(e.env, e.t.dir);
    await e.sink.waitForMessages(1, 40_000); // the CLI starts in 3-20 s on a loaded machine
    const lock = await holdWriteLock(e.t.path, 1_500); // the 30 s, shortened: DB_BUSY_TIMEOUT_MS=300
    const first = await run.done;
    expect(first.code).toBe(1);
    const lines = errorLines(first.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^error: sending stopped: database locked: another process held the write lock too long \(SQLITE_BUSY/);
    expect(e.sink.messages.length).toBeLessThan(6);

    await lock.released;
    await nextRun(e);
    expectEachOnce(e, emails);
  }, 90_000);

  it('the web answers 503 with Retry-After within moments, /health is not ok; both recover when the lock goes', async () => {
    // DB_BUSY_TIMEOUT_MS=50 gives this app's connection what `digest serve` gives its own (WEB_BUSY_TIMEOUT_MS);
    // a write is retried for WEB_LOCK_WAIT_MS (200 here, 1 s by default) before the 503.
    h = await startWebHarness({ DB_BUSY_TIMEOUT_MS: '50', WEB_LOCK_WAIT_MS: '200' });
    // Held until this test ends it: a web that waited for the holder instead of answering 503 never
    // answers (the test times out), whatever the machine's load; no wall-clock bound.
    const lock = await holdWriteLock(h.tmp.path, 600_000);

    const refused = await subscribe(h, 'ada@example.com');
    expect(refused.res.status).toBe(503);
    expect(refused.res.headers.get('retry-after')).toBe('2');
    expect(refused.body).toMatchObject({ ok: false, code: 'DB_LOCKED' });
    const sick = await health(h);
    expect(sick.res.status).toBe(503);
    expect(sick.body).toMatchObject({ ok: false, code: 'DB_LOCKED' });
    expect(sick.body.error).toMatch(/database locked/);

    lock.kill();
    await lock.released;
    await healthyAgain(h);
    expect((await subscribe(h, 'ada@example.com')).res.status).toBe(202);
  });
});

describe('a full disk', () => {
  it('mid-send: digest run exits 1 naming the full disk (not a lock); the web says 503 and /health not ok; all heals', async (ctx) => {
    const fs = smallTmpfs(8 * 1024);
    if (!fs) {
      ctx.skip('a full disk needs a small tmpfs, and this process may not mount one (not root): skipped');
      return;
    }
    mounts.push(fs);
    e = await deliveryEnv({ env: RUN_ENV, sink: SLOW_RELAY, databaseDir: fs.dir });
    const emails = seedAudience(e, 6);
    await e.plan();
    h = await startWebHarness({ DATABASE_PATH: e.t.path, DB_BUSY_TIMEOUT_MS: '50' });

    const run = startBuiltRun(e.env, e.t.dir);
    await e.sink.waitForMessages(1, 40_000); // the CLI starts in 3-20 s on a loaded machine
    const free = fillDisk(join(fs.dir, 'filler'));
    const first = await run.done;
    expect(first.code).toBe(1);
    const lines = errorLines(first.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^error: sending stopped: disk full: no space left on the disk holding the database \(SQLITE_FULL/);
    expect(lines[0]).not.toMatch(/locked/);

    const refused = await subscribe(h, 'grace@example.com');
    expect(refused.res.status).toBe(503);
    expect(refused.body).toMatchObject({ ok: false, code: 'DB_FULL' });
    expect(refused.res.headers.get('retry-after')).toBe('60');
    const sick = await health(h);
    expect(sick.res.status).toBe(503);
    expect(sick.body).toMatchObject({ ok: false, code: 'DB_FULL' });

    free();
    await healthyAgain(h);
    expect((await subscribe(h, 'grace@example.com')).res.status).toBe(202);
    await nextRun(e);
    expectEachOnce(e, emails);
  }, 90_000);
});

describe('a database that cannot be written', () => {
  it('start-up refuses it with one line naming DATABASE_PATH (digest serve)', async (ctx) => {
    const t = tempDatabaseDir();
    openDatabase(t.path).close();
    const view = readOnlyView(t.dir);
    if (!view) {
      t.remove();
      ctx.skip('a read-only database needs a read-only bind mount, and this process may not mount (not root): skipped');
      return;
    }
    mounts.push({ dir: view.dir, unmount: () => (view.unmount(), t.remove()) });
    const path = join(view.dir, 'digest.sqlite');
    const env = { DATABASE_PATH: path, SMTP_URL: 'smtp://127.0.0.1:9', SECRET_KEY: 'test-secret-key-0123456789abcdef0123456789', PORT: '0' };
    // Every command opens the database through createApp (src/main.ts), so `serve` stands for all of them.
    const r = await digest(['serve'], env, t.dir);
    expect(r.code).toBe(1);
    const lines = errorLines(r.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toBe(
      `error: DATABASE_PATH=${path}: cannot write the database: database read-only: the database file or its folder cannot be written (SQLITE_CANTOPEN: unable to open database file)`,
    );
    expect(r.stdout).not.toContain('paper digest at'); // it never started listening
  });

  it('a running web turns read-only: 503 (never 500) and /health not ok, then ok again', async () => {
    h = await startWebHarness();
    // The server's own connection made read-only (what a remounted disk does to every write).
    h.core.db.pragma('query_only = ON');
    const refused = await subscribe(h, 'ada@example.com');
    expect(refused.res.status).toBe(503);
    expect(refused.body).toMatchObject({ ok: false, code: 'DB_READONLY' });
    expect(refused.res.headers.get('retry-after')).toBe('60');
    const page = await fetch(`${h.base}/subscribe`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'email=bob%40example.com&topics=diffusion' });
    expect(page.status).toBe(503);
    expect(await page.text()).toContain('We could not save this just now');
    const sick = await health(h);
    expect(sick.body).toMatchObject({ ok: false, code: 'DB_READONLY' });

    h.core.db.pragma('query_only = OFF');
    await healthyAgain(h);
    expect((await subscribe(h, 'ada@example.com')).res.status).toBe(202);
  });
});
