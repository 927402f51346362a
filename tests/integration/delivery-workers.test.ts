// Sending with worker threads (SEND_WORKERS=2): real threads, each with its own SQLite connection and
// SMTP pool, against a real SMTP server. The guarantees are the single-thread ones: one email per
// subscriber per edition, nobody failed because the relay went away, SIGTERM finishes what is in flight.
import { afterEach, describe, expect, it } from 'vitest';
import { sendPending } from '../../src/send/sender.ts';
import { deliveryEnv, deliveryEnvVars, runSummary, startBuiltRun, type DeliveryEnv } from '../helpers/delivery-setup.ts';
import { countByStatus, seedBatch, seedSubscribers } from '../helpers/seed.ts';
import { accept, type SinkScript } from '../helpers/smtp-sink.ts';

let e: DeliveryEnv | undefined;
afterEach(async () => {
  await e?.close();
  e = undefined;
});

async function setup(subscribers: number, script?: SinkScript, env: Record<string, string> = {}) {
  e = await deliveryEnv({ env: { SEND_WORKERS: '2', SMTP_POOL_SIZE: '4', ...env }, sink: { script } });
  seedBatch(e.t.db, '2025-11-25', [
    { title: 'Speculative decoding at scale', upvotes: 12 },
    { title: 'Decoding with lookahead', upvotes: 3 },
  ]);
  const emails = Array.from({ length: subscribers }, (_, i) => `w${i}@example.com`);
  seedSubscribers(e.t.db, emails.map((email) => ({ email, topics: ['decoding'] })));
  expect((await e.plan()).planned).toBe(subscribers);
  const sink = e.sink;
  // What the composition root passes: where worker threads open their own pools.
  const deps = { ...e.deps, smtpUrl: async () => sink.url };
  return { emails, deps };
}

function onceEach(env: DeliveryEnv, emails: string[]): boolean {
  const counts = env.sink.countsByAddress();
  return emails.every((a) => counts.get(a) === 1) && counts.size === emails.length;
}

describe('sending with worker threads', () => {
  it('two threads share the edition: every subscriber gets exactly one email, both threads send', { timeout: 60_000 }, async () => {
    const { emails, deps } = await setup(300);
    const seen: number[] = [];
    const summary = await sendPending(deps, { parallelMinRows: 0, onProgress: (p) => seen.push(p.done) });

    expect(summary).toMatchObject({ sent: 300, failed: 0, retrying: 0, paused: false, threads: 2 });
    expect(summary.sentPerThread).toHaveLength(2);
    expect(Math.min(...summary.sentPerThread!)).toBeGreaterThan(0); // the worker thread really sent
    expect(onceEach(e!, emails)).toBe(true);
    expect(countByStatus(e!.t.db)).toEqual({ sent: 300 });
    expect(seen.at(-1)).toBe(300); // progress adds up across threads
    // What the worker sent is a complete digest: HTML and text, one-click unsubscribe.
    const last = await e!.sink.messages.at(-1)!.parse();
    expect(last.html).toContain('Speculative decoding');
    expect(last.text).toContain('Speculative decoding');
    expect(last.headers.find((h) => h.key === 'list-unsubscribe-post')?.value).toBe('List-Unsubscribe=One-Click');
  });

  it('worker threads over their heap budget (SEND_WORKER_HEAP_MB) stop; the main thread sends the rest, once each', { timeout: 60_000 }, async () => {
    // 8 MB is less than a worker needs to load its modules: both die of ERR_WORKER_OUT_OF_MEMORY.
    const { emails, deps } = await setup(300, undefined, { SEND_WORKER_HEAP_MB: '8' });
    const summary = await sendPending(deps, { parallelMinRows: 0 });
    expect(summary).toMatchObject({ sent: 300, failed: 0, retrying: 0, unknown: 0, paused: false });
    expect(summary.sentPerThread).toEqual([0, 0, 300]); // two workers that sent nothing, then this thread
    expect(onceEach(e!, emails)).toBe(true);
    expect(countByStatus(e!.t.db)).toEqual({ sent: 300 });
  });

  it('a run below the worker threshold stays in this thread', async () => {
    const { deps } = await setup(20);
    const summary = await sendPending(deps);
    expect(summary).toMatchObject({ sent: 20, threads: 1 });
  });

  it('relay stopped mid-run: every thread stops, nobody is failed, the next run completes', { timeout: 60_000 }, async () => {
    const { emails, deps } = await setup(400, () => accept(10), { RELAY_DOWN_AFTER: '3', SMTP_MAX_ATTEMPTS: '2' });
    const run = sendPending(deps, { parallelMinRows: 0 });
    await e!.sink.waitForMessages(40, 30_000);
    await e!.sink.stop();
    const summary = await run;

    expect(summary.paused).toBe(true);
    expect(summary.pauseReason).toMatch(/relay down: \d+ connection failures in a row/);
    expect(summary.failed).toBe(0);
    const counts = countByStatus(e!.t.db);
    expect(counts.failed).toBeUndefined(); // nobody failed because of the relay
    expect(counts.sending).toBeUndefined();
    expect(counts.sent).toBe(e!.sink.messages.length);
    expect(counts.sent).toBeLessThan(400);

    // A message whose whole body was sent when the relay went away has no answer: its outcome is
    // unknown (never resent, papers carried to the next digest). Only sends in flight can be: at most the
    // pool (4 connections over both threads).
    const unknown = counts.unknown ?? 0;
    expect(unknown).toBeLessThanOrEqual(4);

    await e!.sink.start();
    e!.sink.script = undefined; // the rerun's relay answers at once: only what it sends counts
    const again = await sendPending(deps, { parallelMinRows: 0 });
    expect(again.paused).toBe(false);
    expect(countByStatus(e!.t.db)).toEqual(unknown ? { sent: 400 - unknown, unknown } : { sent: 400 });
    // One email for each sent row, none for an unknown one (this relay kept nothing it did not answer), never two.
    const sentTo = new Set(
      (e!.t.db.prepare(`SELECT s.email FROM digests d JOIN subscribers s ON s.id = d.subscriber_id WHERE d.status = 'sent'`).all() as { email: string }[]).map((r) => r.email),
    );
    const counts2 = e!.sink.countsByAddress();
    for (const a of emails) expect(counts2.get(a) ?? 0).toBe(sentTo.has(a) ? 1 : 0);
  });

  it('abort (SIGTERM) reaches the workers: claiming stops, sends in flight are recorded, a rerun completes', { timeout: 60_000 }, async () => {
    const { emails, deps } = await setup(300, () => accept(30));
    const abort = new AbortController();
    const run = sendPending(deps, { parallelMinRows: 0, signal: abort.signal });
    await e!.sink.waitForMessages(30, 30_000);
    abort.abort();
    const summary = await run;

    expect(summary.aborted).toBe(true);
    expect(summary.unknown).toBe(0);
    const counts = countByStatus(e!.t.db);
    expect(counts.sending).toBeUndefined(); // every send in flight finished and was recorded
    expect(counts.sent).toBe(e!.sink.messages.length);
    expect(counts.planned).toBe(300 - counts.sent!);
    expect(counts.planned).toBeGreaterThan(100); // both threads stopped claiming

    e!.sink.script = undefined; // the rerun's relay answers at once: only what it sends counts
    const rest = await sendPending(deps, { parallelMinRows: 0 });
    expect(rest.sent).toBe(300 - counts.sent!);
    expect(onceEach(e!, emails)).toBe(true);
  });

  it('kill -9 of `digest run` with a worker thread, then a new run: never two emails, in flight at most the pool', { timeout: 120_000 }, async () => {
    // 1,200 rows: over the threshold, so the real CLI starts its worker thread.
    const { emails } = await setup(1_200, () => accept(15));
    const env = deliveryEnvVars(e!.t, e!.sink, { SEND_WORKERS: '2', SMTP_POOL_SIZE: '4' });
    const first = startBuiltRun(env, e!.t.dir);
    await e!.sink.waitForMessages(200, 60_000);
    first.child.kill('SIGKILL');
    expect((await first.done).signal).toBe('SIGKILL');
    const afterKill = countByStatus(e!.t.db);
    expect(afterKill.sending ?? 0).toBeLessThanOrEqual(4); // both threads together hold at most SMTP_POOL_SIZE
    expect(afterKill.planned ?? 0).toBeGreaterThan(0);

    // The new run's relay answers at once (was 15 ms for each of ~1,000 rows): only what it sends counts.
    e!.sink.script = undefined;
    const second = await startBuiltRun(env, e!.t.dir).done;
    expect(second.code).toBe(0);
    expect(runSummary(second.stdout).sent).toBe(afterKill.planned);
    const counts = e!.sink.countsByAddress();
    expect(Math.max(...counts.values())).toBe(1); // never two emails for the edition
    const final = countByStatus(e!.t.db);
    expect(final.unknown ?? 0).toBe(afterKill.sending ?? 0);
    expect(final.sent).toBe(1_200 - (final.unknown ?? 0));
    // Every row recorded as sent is one email that arrived; only the rows in flight at the kill are in doubt.
    const rows = e!.t.db
      .prepare(`SELECT s.email, d.status FROM digests d JOIN subscribers s ON s.id = d.subscriber_id`)
      .all() as { email: string; status: string }[];
    const status = new Map(rows.map((r) => [r.email, r.status]));
    for (const email of emails) {
      if (status.get(email) === 'sent') expect(counts.get(email), email).toBe(1);
      else expect(status.get(email), email).toBe('unknown');
    }
  });
});
