// A relay whose answer is lost after it took the whole message (connection cut after the final ".", or
// the 250 arriving after our timeout): the send's outcome is unknown, exactly as after a crash. The row
// becomes 'unknown', is never resent, and its papers ride in the subscriber's next digest. A drop BEFORE
// the message is complete (at RCPT TO, in the middle of the body) is a plain retry. Real SMTP server
// (smtp-server) with a script per address, real SQLite ledger, real mailer.
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.ts';
import { MailError } from '../../src/mail/errors.ts';
import { createSmtpMailer } from '../../src/mail/smtp-mailer.ts';
import type { OutgoingMail } from '../../src/mail/types.ts';
import { digestRows, rowItems, seedBatch, seedSubscribers } from '../helpers/seed.ts';
import { deliveryEnv, type DeliveryEnv } from '../helpers/delivery-setup.ts';
import { drop, lost, perAddress, SmtpSink } from '../helpers/smtp-sink.ts';

const open: Array<{ close(): Promise<void> }> = [];
let e: DeliveryEnv | undefined;
afterEach(async () => {
  for (const c of open.splice(0).reverse()) await c.close();
  await e?.close();
  e = undefined;
});

const mail = (to: string, html = '<p>Three <b>new</b> papers</p>'): OutgoingMail => ({
  to,
  subject: 'Your papers',
  html,
  text: 'Three new papers',
  messageId: `m-${to}@papers.example.org`,
});

async function failure(p: Promise<unknown>): Promise<MailError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(MailError);
    return err as MailError;
  }
  throw new Error('expected the send to fail');
}

describe('SMTP mailer: where the connection failed', () => {
  it('no answer after the final "." is ambiguous; a drop before it is a connection failure', async () => {
    const sink = await SmtpSink.start({
      script: perAddress({
        'cut-after@example.com': [lost('drop')],
        'late@example.com': [lost('late', 2_500)],
        'not-kept@example.com': [drop('data')],
        'cut-rcpt@example.com': [drop('rcpt')],
        'cut-body@example.com': [drop('body')],
      }),
    });
    open.push(sink);
    // 1 s: our timeout must not fire while a loaded machine is slow to answer DATA (that would be a
    // plain, retryable timeout before the message: correct, but not what this test is about).
    const mailer = createSmtpMailer({ url: sink.url, from: 'Digest <d@papers.example.org>', poolSize: 2, ratePerSecond: 0, timeoutMs: 1_000, logger: silentLogger });
    open.push(mailer);

    // Cut right after the final "." (the relay kept it): ambiguous, and it is in the relay.
    const cut = await failure(mailer.send(mail('cut-after@example.com')));
    expect(cut.kind).toBe('ambiguous');
    expect(cut.temporary).toBe(false);
    expect(sink.byAddress('cut-after@example.com')).toHaveLength(1);

    // The 250 comes after our 1 s timeout: ambiguous (the relay did queue it).
    const late = await failure(mailer.send(mail('late@example.com')));
    expect(late.kind).toBe('ambiguous');
    expect(late.response).toMatch(/ETIMEDOUT/);

    // Cut after the "." without keeping it: we cannot tell that from the above, so ambiguous too.
    expect((await failure(mailer.send(mail('not-kept@example.com')))).kind).toBe('ambiguous');

    // Controls: cut at RCPT TO, and in the middle of a 6 MB message (the client still writing): retryable.
    const rcpt = await failure(mailer.send(mail('cut-rcpt@example.com')));
    expect(rcpt.kind).toBe('connection');
    expect(rcpt.temporary).toBe(true);
    const big = `<p>${'x'.repeat(70)}</p>\n`.repeat(90_000);
    const body = await failure(mailer.send(mail('cut-body@example.com', big)));
    expect(body.kind).toBe('connection');
    expect(sink.byAddress('cut-rcpt@example.com')).toHaveLength(0);
    expect(sink.byAddress('cut-body@example.com')).toHaveLength(0);

    // The same mailer still delivers.
    await mailer.send(mail('fine@example.com'));
    expect(sink.byAddress('fine@example.com')).toHaveLength(1);
  });
});

describe('sendPending with a relay that loses answers', () => {
  const subscriberWatermark = (email: string) =>
    (e!.t.db.prepare(`SELECT watermark FROM subscribers WHERE email = ?`).get(email) as { watermark: number }).watermark;
  const rowsOf = (email: string) => {
    const id = (e!.t.db.prepare(`SELECT id FROM subscribers WHERE email = ?`).get(email) as { id: number }).id;
    return digestRows(e!.t.db).filter((r) => r.subscriber_id === id);
  };

  it('never sends two emails to one address for one slot; lost answers become unknown and their papers ride in the next digest', async () => {
    // 14 lost answers (cut after ".", or 250 after the timeout) among 18 readers, plus 2 drops before the
    // message was complete (retried), as the relay did.
    const plans: Record<string, ReturnType<typeof lost>[]> = {};
    for (let i = 0; i < 10; i++) plans[`cut${i}@example.com`] = [lost('drop')];
    for (let i = 0; i < 4; i++) plans[`late${i}@example.com`] = [lost('late', 2_000)];
    plans['early0@example.com'] = [drop('rcpt')];
    plans['early1@example.com'] = [drop('rcpt'), drop('rcpt')];
    e = await deliveryEnv({
      env: { SMTP_TIMEOUT_MS: '1000', RELAY_DOWN_AFTER: '50', SMTP_POOL_SIZE: '4' },
      sink: { script: perAddress(plans) },
    });
    const emails = [...Object.keys(plans), 'ok0@example.com', 'ok1@example.com'];
    seedBatch(e.t.db, '2025-11-25', [{ title: 'Diffusion transformers for video', upvotes: 12 }]);
    seedSubscribers(e.t.db, emails.map((email) => ({ email, topics: ['diffusion'] })));
    await e.plan('2025-11-25T12:00:00Z');

    const first = await e.send();
    expect(first).toMatchObject({ sent: 4, unknown: 14, failed: 0, paused: false });
    // A second and third run resend nothing.
    expect((await e.send()).sent).toBe(0);
    expect((await e.send()).sent).toBe(0);

    // Exactly one email per address: the lost answers were delivered once, the early drops once after a retry.
    const counts = e.sink.countsByAddress();
    expect(counts.size).toBe(emails.length);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    for (let i = 0; i < 10; i++) expect(rowsOf(`cut${i}@example.com`)[0]).toMatchObject({ status: 'unknown' });
    for (let i = 0; i < 4; i++) expect(rowsOf(`late${i}@example.com`)[0]).toMatchObject({ status: 'unknown' });
    expect(rowsOf('cut0@example.com')[0]!.smtp_response).toMatch(/^outcome unknown: no answer after the whole message was sent/);
    // (nodemailer's pool itself may retry a drop at RCPT TO on a reused connection: not a byte of the message was sent.)
    expect(rowsOf('early1@example.com')[0]).toMatchObject({ status: 'sent' });
    expect(e.sink.attemptsFor('early1@example.com')).toBe(3);
    expect(subscriberWatermark('cut0@example.com')).toBe(0); // not advanced: nothing lost
    expect(subscriberWatermark('ok0@example.com')).toBeGreaterThan(0);

    // Next day: the unknown rows' paper rides again with the new one; the delivered readers get only the new one.
    seedBatch(e.t.db, '2025-11-26', [{ title: 'Diffusion for audio', upvotes: 3 }]);
    await e.plan('2025-11-26T12:00:00Z');
    expect((await e.send()).sent).toBe(emails.length);
    const [, again] = rowsOf('cut0@example.com');
    expect(rowItems(again!, e.t.db).length).toBe(2);
    const [, next] = rowsOf('ok0@example.com');
    expect(rowItems(next!, e.t.db).length).toBe(1);
    expect(e.sink.byAddress('cut0@example.com')).toHaveLength(2); // one per slot
  });
});
