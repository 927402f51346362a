// Sending the ledger through a real SMTP server: outcomes recorded on the rows, retries, hard
// failures and suppression, relay down, shutdown, and what operators see.
import { afterEach, describe, expect, it } from 'vitest';
import { hostname } from 'node:os';
import { ManualClock } from '../../src/clock.ts';
import { recoverStale } from '../../src/ledger/index.ts';
import { editionStatus, metricsText } from '../../src/report/status.ts';
import { countByStatus, digestRows, seedBatch, seedSubscribers } from '../helpers/seed.ts';
import { deliveryEnv, type DeliveryEnv } from '../helpers/delivery-setup.ts';
import { accept, drop, perAddress, reject } from '../helpers/smtp-sink.ts';

let e: DeliveryEnv;
afterEach(async () => e?.close());

const subscriberRow = (email: string) =>
  e.t.db.prepare(`SELECT id, status, watermark, hard_failures, suppressed_at FROM subscribers WHERE email = ?`).get(email) as {
    id: number;
    status: string;
    watermark: number;
    hard_failures: number;
    suppressed_at: string | null;
  };
const rowFor = (email: string, edition?: string) =>
  digestRows(e.t.db).filter(
    (r) => r.subscriber_id === subscriberRow(email).id && (edition === undefined || r.edition === edition),
  );

function seedAudience(n: number, prefix = 'reader') {
  seedBatch(e.t.db, '2025-11-25', [
    { title: 'Diffusion transformers for video', upvotes: 12 },
    { title: 'Reinforcement learning from human feedback', upvotes: 30 },
  ]);
  return seedSubscribers(
    e.t.db,
    Array.from({ length: n }, (_, i) => ({ email: `${prefix}${i}@example.com`, topics: ['diffusion', 'reinforcement learning'] })),
  );
}

describe('sendPending', () => {
  it('sends one email per planned row and records the relay outcome on the row', async () => {
    e = await deliveryEnv();
    const subs = seedAudience(3);
    expect((await e.plan()).planned).toBe(3);
    const summary = await e.send();
    expect(summary).toMatchObject({ sent: 3, failed: 0, retrying: 0, paused: false, unknown: 0 });

    expect([...e.sink.countsByAddress().values()]).toEqual([1, 1, 1]);
    for (const s of subs) {
      const [row] = rowFor(s.email);
      expect(row).toMatchObject({ status: 'sent', smtp_code: 250, attempts: 1 });
      expect(row!.message_id).toBe(`digest-${row!.id}.${row!.edition}@papers.example.org`);
      expect(row!.smtp_response).toMatch(/^250 .*queued/);
      expect(subscriberRow(s.email).watermark).toBe(row!.to_paper);
    }

    // The email itself: addressed to the subscriber, with their own one-click unsubscribe link.
    const first = subs[0]!;
    const email = await e.sink.byAddress(first.email)[0]!.parse();
    const [row] = rowFor(first.email);
    expect(email.to?.[0]?.address).toBe(first.email);
    expect(email.messageId).toBe(`<${row!.message_id}>`);
    expect(email.subject).toContain(row!.edition); // the subscriber's own delivery date
    const unsubscribe = email.headers.find((h) => h.key === 'list-unsubscribe')!.value;
    const url = /<(https:[^>]+)>/.exec(unsubscribe)![1]!;
    const token = url.split('/unsubscribe/')[1]!;
    const salt = (e.t.db.prepare(`SELECT token_salt FROM subscribers WHERE id = ?`).get(first.id) as { token_salt: string }).token_salt;
    expect(e.tokens.verify(token, { id: first.id, tokenSalt: salt }, new Date())).toMatchObject({ ok: true });
    expect(unsubscribe).toContain('<mailto:unsubscribe@papers.example.org?subject=unsubscribe>');
    expect(email.headers.find((h) => h.key === 'list-unsubscribe-post')?.value).toBe('List-Unsubscribe=One-Click');
    expect(email.html).toContain(url.replace(/&/g, '&amp;'));
    expect(email.text).toContain('Reinforcement learning from human feedback');

    // A second run finds nothing to do and sends nothing.
    expect((await e.plan()).planned).toBe(0);
    expect((await e.send()).sent).toBe(0);
    expect(e.sink.messages).toHaveLength(3);
  });

  it('retries 4xx with backoff within the run, and fails after SMTP_MAX_ATTEMPTS', async () => {
    e = await deliveryEnv({
      env: { SMTP_MAX_ATTEMPTS: '3', SMTP_RETRY_BASE_MS: '100', SMTP_RETRY_MAX_MS: '400' },
      sink: {
        script: perAddress({
          'reader0@example.com': [reject(451, { text: '4.7.1 Greylisted' }), reject(421, { stage: 'data' })],
          'reader1@example.com': [reject(452), reject(452), reject(452), reject(452)],
        }),
      },
    });
    seedAudience(3);
    await e.plan();
    const summary = await e.send();
    expect(summary).toMatchObject({ sent: 2, failed: 1, retrying: 0, paused: false });

    // Third attempt went through: one email, after two deferrals with growing waits.
    expect(e.sink.byAddress('reader0@example.com')).toHaveLength(1);
    expect(e.sink.attemptsFor('reader0@example.com')).toBe(3);
    expect(rowFor('reader0@example.com')[0]).toMatchObject({ status: 'sent', attempts: 3, smtp_code: 250 });

    // Always deferred: given up after 3 attempts, the last answer kept on the row.
    expect(e.sink.byAddress('reader1@example.com')).toHaveLength(0);
    expect(e.sink.attemptsFor('reader1@example.com')).toBe(3);
    expect(rowFor('reader1@example.com')[0]).toMatchObject({ status: 'failed', attempts: 3, smtp_code: 452 });
    // A temporary failure is not a hard failure: the address stays.
    expect(subscriberRow('reader1@example.com')).toMatchObject({ status: 'confirmed', hard_failures: 0, watermark: 0 });
    expect(e.sink.byAddress('reader2@example.com')).toHaveLength(1);
  });

  it('leaves retries to a later run when they come due after the run, which then sends them', async () => {
    // The clock is faked: 'not due yet' and 'due' are then facts of the ledger, not of how fast the machine is.
    const clock = new ManualClock(new Date());
    e = await deliveryEnv({
      env: { SMTP_RETRY_BASE_MS: '300', SMTP_RETRY_MAX_MS: '300' },
      sink: { script: perAddress({ 'reader1@example.com': [reject(451), accept()] }) },
      clock,
    });
    seedAudience(2);
    await e.plan();
    const first = await e.send({ retryWindowMs: 0 });
    expect(first).toMatchObject({ sent: 1, retrying: 1 });
    const [row] = rowFor('reader1@example.com');
    expect(row).toMatchObject({ status: 'retry', attempts: 1, smtp_code: 451 });
    const nextAt = Date.parse((e.t.db.prepare(`SELECT next_attempt_at FROM digests WHERE id = ?`).get(row!.id) as { next_attempt_at: string }).next_attempt_at);
    const backoff = nextAt - clock.now().getTime();
    expect(backoff >= 150 && backoff <= 300, `backoff ${backoff} ms`).toBe(true); // with jitter: between 150 and 300 ms

    expect((await e.send({ retryWindowMs: 0 })).sent).toBe(0); // not due yet
    clock.advance(backoff - 1);
    expect((await e.send({ retryWindowMs: 0 })).sent).toBe(0); // still not due, a millisecond before
    clock.advance(1);
    expect((await e.send({ retryWindowMs: 0 })).sent).toBe(1);
    expect(e.sink.byAddress('reader1@example.com')).toHaveLength(1);
    expect(rowFor('reader1@example.com')[0]).toMatchObject({ status: 'sent', attempts: 2 });
  });

  it('records 5xx with the response, and suppresses the address after HARD_FAILURES_TO_SUPPRESS', async () => {
    e = await deliveryEnv({
      sink: {
        script: (ctx) => (ctx.address === 'reader0@example.com' ? reject(550, { text: '5.1.1 <reader0@example.com>: Recipient address rejected' }) : undefined),
      },
    });
    seedAudience(2);
    await e.plan('2025-11-25T12:00:00Z');
    expect(await e.send()).toMatchObject({ sent: 1, failed: 1, newlySuppressed: 0 });
    expect(rowFor('reader0@example.com')[0]).toMatchObject({ status: 'failed', attempts: 1, smtp_code: 550 });
    expect(rowFor('reader0@example.com')[0]!.smtp_response).toContain('Recipient address rejected');
    expect(e.sink.attemptsFor('reader0@example.com')).toBe(1); // 5xx is never retried
    expect(subscriberRow('reader0@example.com')).toMatchObject({ status: 'confirmed', hard_failures: 1, watermark: 0 });

    // Next day's slot: the failed digest's papers ride along (watermark unchanged); second hard failure suppresses.
    seedBatch(e.t.db, '2025-11-26', [{ title: 'Diffusion for audio' }]);
    await e.plan('2025-11-26T12:00:00Z');
    expect(rowFor('reader0@example.com', '2025-11-26')[0]).toMatchObject({ from_paper: 0, paper_count: 3 });
    expect(await e.send()).toMatchObject({ sent: 1, failed: 1, newlySuppressed: 1 });
    const suppressed = subscriberRow('reader0@example.com');
    expect(suppressed).toMatchObject({ status: 'suppressed', hard_failures: 2 });
    expect(suppressed.suppressed_at).not.toBeNull();

    // Third day: nothing is planned for a suppressed address.
    seedBatch(e.t.db, '2025-11-27', [{ title: 'Diffusion for proteins' }]);
    expect((await e.plan('2025-11-27T12:00:00Z')).planned).toBe(1);
    await e.send();
    expect(e.sink.attemptsFor('reader0@example.com')).toBe(2);

    const [latest, , oldest] = editionStatus(e.t.db, { limit: 5 }); // editions are the days planned above
    expect(latest).toMatchObject({ edition: '2025-11-27', planned: 1, sent: 1, failed: 0 });
    expect(oldest).toMatchObject({ edition: '2025-11-25', planned: 2, sent: 1, failed: 1, pending: 0 });
    expect(oldest!.topFailures).toEqual([{ reason: '550 5.1.1 <address>: Recipient address rejected', count: 1 }]);
    expect(metricsText(e.t.db)).toContain('digest_subscribers{status="suppressed"} 1');
  });

  it('a success clears the hard-failure streak', async () => {
    e = await deliveryEnv({ sink: { script: perAddress({ 'reader0@example.com': [reject(554)] }) } });
    seedAudience(1);
    await e.plan('2025-11-25T12:00:00Z');
    await e.send();
    expect(subscriberRow('reader0@example.com').hard_failures).toBe(1);
    seedBatch(e.t.db, '2025-11-26', [{ title: 'Diffusion for weather' }]);
    await e.plan('2025-11-26T12:00:00Z');
    await e.send();
    expect(subscriberRow('reader0@example.com')).toMatchObject({ status: 'confirmed', hard_failures: 0 });
  });

  it('does not send to an address that unsubscribed after planning', async () => {
    e = await deliveryEnv();
    seedAudience(2);
    await e.plan();
    e.t.db.prepare(`UPDATE subscribers SET status = 'unsubscribed' WHERE email = 'reader1@example.com'`).run();
    expect(await e.send()).toMatchObject({ sent: 1, suppressed: 1 });
    expect(e.sink.byAddress('reader1@example.com')).toHaveLength(0);
    expect(rowFor('reader1@example.com')[0]).toMatchObject({ status: 'suppressed' });
  });

  it('pauses when the relay is down, burns no attempts, and a later run completes the edition', async () => {
    e = await deliveryEnv({ env: { RELAY_DOWN_AFTER: '3', SMTP_MAX_ATTEMPTS: '2' } });
    seedAudience(12);
    await e.plan();
    await e.sink.stop();
    const paused = await e.send();
    expect(paused.paused).toBe(true);
    expect(paused.pauseReason).toMatch(/relay down: \d+ connection failures in a row .*ECONNREFUSED/);
    expect(paused).toMatchObject({ sent: 0, failed: 0 });
    // Nobody was marked failed, and no attempt was burnt.
    expect(countByStatus(e.t.db)).toEqual({ planned: 12 - paused.retrying, retry: paused.retrying });
    expect(digestRows(e.t.db).every((r) => r.attempts === 0)).toBe(true);

    await e.sink.start();
    const resumed = await e.send();
    expect(resumed).toMatchObject({ sent: 12, failed: 0, paused: false });
    const counts = e.sink.countsByAddress();
    expect(counts.size).toBe(12);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
  });

  it('burns no attempts when the relay is down, even for rows whose retry came due within the streak', async () => {
    // Retries due after 1 ms: every row fails several times before the 8th failure in a row pauses the
    // run, and some are claimed again while their earlier failure is still in the streak.
    e = await deliveryEnv({
      env: { RELAY_DOWN_AFTER: '8', SMTP_MAX_ATTEMPTS: '3', SMTP_RETRY_BASE_MS: '1', SMTP_RETRY_MAX_MS: '1' },
    });
    seedAudience(3);
    await e.plan();
    await e.sink.stop();
    const paused = await e.send();
    expect(paused).toMatchObject({ paused: true, sent: 0, failed: 0 });
    expect(digestRows(e.t.db).map((r) => ({ status: r.status, attempts: r.attempts }))).toEqual(
      Array.from({ length: 3 }, () => ({ status: 'retry', attempts: 0 })),
    );

    await e.sink.start();
    expect(await e.send()).toMatchObject({ sent: 3, failed: 0, paused: false });
    expect([...e.sink.countsByAddress().values()]).toEqual([1, 1, 1]);
  });

  it('connection drops before the message is complete are retried without pausing the run', async () => {
    e = await deliveryEnv({
      env: { RELAY_DOWN_AFTER: '2' },
      sink: { script: perAddress({ 'reader1@example.com': [drop('rcpt'), drop('rcpt')] }) },
    });
    seedAudience(4);
    await e.plan();
    expect(await e.send()).toMatchObject({ sent: 4, paused: false });
    expect(e.sink.byAddress('reader1@example.com')).toHaveLength(1);
    // Three tries reached the relay (nodemailer's pool may repeat a drop at RCPT TO itself on a reused
    // connection, as no byte of the message was sent, so the row may count 2 or 3 attempts).
    expect(e.sink.attemptsFor('reader1@example.com')).toBe(3);
    expect(rowFor('reader1@example.com')[0]).toMatchObject({ status: 'sent' });
  });

  it('on abort (SIGTERM) stops claiming, finishes the sends in flight and records them', async () => {
    e = await deliveryEnv({ env: { SMTP_POOL_SIZE: '2' }, sink: { script: () => accept(150) } });
    seedAudience(10);
    await e.plan();
    const controller = new AbortController();
    const running = e.send({ signal: controller.signal });
    await e.sink.waitForMessages(1);
    controller.abort();
    const summary = await running;
    expect(summary.aborted).toBe(true);
    const counts = countByStatus(e.t.db);
    expect(counts.sending).toBeUndefined(); // every send in flight was recorded
    expect(counts.sent).toBe(e.sink.messages.length);
    expect(summary.sent).toBe(e.sink.messages.length);
    expect(counts.planned).toBeGreaterThan(0); // unclaimed rows wait for the next run

    const rest = await e.send();
    expect(rest.sent).toBe(counts.planned);
    expect([...e.sink.countsByAddress().values()]).toEqual(Array(10).fill(1));
  });

  it('on abort, a send still in flight after SHUTDOWN_GRACE_MS is left unknown and never resent', async () => {
    e = await deliveryEnv({
      env: { SMTP_POOL_SIZE: '1', SHUTDOWN_GRACE_MS: '100' },
      sink: { script: (ctx) => (ctx.total === 1 ? accept(1_000) : undefined) },
    });
    seedAudience(3);
    await e.plan();
    const controller = new AbortController();
    const running = e.send({ signal: controller.signal });
    await new Promise((r) => setTimeout(r, 200)); // the first message is waiting for its 250
    controller.abort();
    const summary = await running;
    expect(summary).toMatchObject({ aborted: true, unknown: 1, sent: 0 });
    expect(countByStatus(e.t.db)).toEqual({ unknown: 1, planned: 2 });
    await e.sink.waitForMessages(1); // the relay did take it in the end
    await e.send();
    expect([...e.sink.countsByAddress().values()]).toEqual([1, 1, 1]);
  });

  it('fails a row it cannot render without blaming the address, and sends the others', async () => {
    e = await deliveryEnv();
    seedAudience(2);
    await e.plan();
    e.t.db.prepare(`UPDATE digests SET items = x'' WHERE subscriber_id = ?`).run(subscriberRow('reader0@example.com').id);
    expect(await e.send()).toMatchObject({ sent: 1, failed: 1 });
    expect(rowFor('reader0@example.com')[0]).toMatchObject({ status: 'failed', smtp_code: null });
    expect(rowFor('reader0@example.com')[0]!.smtp_response).toMatch(/^render failed: /);
    expect(subscriberRow('reader0@example.com').hard_failures).toBe(0);
    expect(e.sink.byAddress('reader0@example.com')).toHaveLength(0);
  });

  it('recoverStale: claims of dead processes or past the lease become unknown, live ones are left alone', async () => {
    e = await deliveryEnv();
    seedAudience(4);
    await e.plan();
    const clock = new ManualClock('2025-11-25T12:00:00Z');
    const claim = e.t.db.prepare(`UPDATE digests SET status = 'sending', claimed_by = ?, claimed_at = ? WHERE id = ?`);
    claim.run(`${hostname()}:999999:1`, '2025-11-25T11:59:00.000Z', 1); // this host, no such process
    claim.run('other-host:123:1', '2025-11-25T11:30:00.000Z', 2); // other host, 30 minutes old
    claim.run('other-host:123:1', '2025-11-25T11:55:00.000Z', 3); // other host, 5 minutes old
    claim.run(`${hostname()}:${process.pid}:1`, '2025-11-25T11:59:00.000Z', 4); // our pid, but another start
    expect(recoverStale(e.t.db, clock, { leaseMs: 15 * 60_000 })).toBe(3);
    const status = digestRows(e.t.db).map((r) => r.status);
    expect(status).toEqual(['unknown', 'unknown', 'sending', 'unknown']);
    expect(digestRows(e.t.db)[0]!.smtp_response).toMatch(/outcome unknown/);
    // Nothing is resent for an unknown row.
    expect((await e.send()).sent).toBe(0);
    expect(e.sink.messages).toHaveLength(0);
  });

  it('exposes ledger counts as Prometheus text', async () => {
    e = await deliveryEnv({ sink: { script: perAddress({ 'reader2@example.com': [reject(550)] }) } });
    seedAudience(3);
    await e.plan();
    await e.send();
    const text = metricsText(e.t.db);
    expect(text).toContain('# TYPE digest_emails_sent_total counter');
    expect(text).toMatch(/^digest_editions_total 1$/m);
    expect(text).toMatch(/^digest_emails_sent_total 2$/m);
    expect(text).toMatch(/^digest_emails_failed_total 1$/m);
    expect(text).toMatch(/^digest_emails_pending 0$/m);
    expect(text).toMatch(/^digest_subscribers\{status="confirmed"\} 3$/m);
  });
});
