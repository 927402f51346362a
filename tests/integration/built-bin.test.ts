// The production build: `npm run build` output (dist/) run through bin/digest.js, the way `npm start`
// and the `digest` bin run it. A module-resolution hook in the child records every module it loads, in
// every thread: no TypeScript source and no tsx may be among them, and the send worker threads of a big
// run start from the compiled dist/send/send-worker.js. dist/ is rebuilt first when a source file is
// newer than the last build (a clean build, ~10 s; CI builds it in `npm ci` through `prepare`).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveryEnv, REPO_ROOT, runSummary, type DeliveryEnv } from '../helpers/delivery-setup.ts';
import { countByStatus, seedBatch, seedSubscribers } from '../helpers/seed.ts';
import { runNodeChild } from '../helpers/run-child.ts';
import { ensureBuilt } from '../helpers/build.ts';

const BIN = join(REPO_ROOT, 'bin', 'digest.js');

/**
 * Runs the built bin with a hook that logs the URL of every module resolved, in every thread (worker
 * threads inherit the --import; the hooks themselves run on Node's loader thread, so the log cannot
 * say which thread asked: dist/send/send-worker.js is only ever loaded by a worker thread).
 */
async function runBuilt(args: string[], env: Record<string, string>, cwd: string) {
  const log = join(cwd, 'modules.log');
  const hooks = join(cwd, 'hooks.mjs');
  writeFileSync(
    hooks,
    `import { appendFileSync } from 'node:fs';
     export async function resolve(specifier, context, next) {
       const r = await next(specifier, context);
       appendFileSync(${JSON.stringify(log)}, r.url + '\\n');
       return r;
     }`,
  );
  writeFileSync(join(cwd, 'register.mjs'), `import { register } from 'node:module'; register(${JSON.stringify(`file://${hooks}`)});`);
  const r = await runNodeChild(['--import', `file://${join(cwd, 'register.mjs')}`, BIN, ...args], env, cwd);
  return { ...r, modules: existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : [] };
}

describe('the compiled build (dist/) run by bin/digest.js', () => {
  let e: DeliveryEnv;
  beforeAll(async () => {
    ensureBuilt();
    e = await deliveryEnv({ env: { SEND_WORKERS: '2', SMTP_POOL_SIZE: '4' } });
  }, 150_000);
  afterAll(async () => {
    await e?.close();
  });

  it('digest --help answers from dist/ without loading the commands', async () => {
    const r = await runBuilt(['--help'], {}, e.t.dir);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Usage: digest/);
    expect(r.stdout).toMatch(/serve/);
    expect(r.modules.some((m) => m.includes('/dist/cli.js'))).toBe(true);
    expect(r.modules.filter((m) => m.includes('/dist/cli-commands.js'))).toEqual([]);
  });

  it('a 1,000-digest run sends from compiled worker threads, no TypeScript or tsx loaded in any thread', { timeout: 90_000 }, async () => {
    seedBatch(e.t.db, '2025-11-25', [{ title: 'Speculative decoding at scale', upvotes: 12 }]);
    const emails = Array.from({ length: 1_000 }, (_, i) => `b${i}@example.com`);
    seedSubscribers(e.t.db, emails.map((email) => ({ email, topics: ['decoding'] })));

    const r = await runBuilt(['run'], e.env, e.t.dir);
    expect(r.code, r.stderr).toBe(0);
    expect(runSummary(r.stdout)).toMatchObject({ planned: 1_000, sent: 1_000, failed: 0 });
    expect(countByStatus(e.t.db)).toEqual({ sent: 1_000 });
    expect(e.sink.countsByAddress().size).toBe(1_000);

    expect(r.modules.filter((url) => url.endsWith('/dist/send/send-worker.js')).length).toBeGreaterThan(0); // a worker thread ran, from dist/
    expect(r.modules.filter((url) => url.endsWith('.ts') || url.includes('/node_modules/tsx/') || url.includes('/mjml'))).toEqual([]);
  });
});
