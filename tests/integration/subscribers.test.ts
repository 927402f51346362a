// The subscriber service on its own (as createApp builds it): a real SQLite file, the real renderer, real SMTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.ts';
import type { Links } from '../../src/links.ts';
import { silentLogger } from '../../src/log.ts';
import { createSmtpMailer } from '../../src/mail/smtp-mailer.ts';
import type { Mailer } from '../../src/mail/types.ts';
import { createSubscriberService, type SubscriberService } from '../../src/subscribers/service.ts';
import { freePort } from '../helpers/ports.ts';
import { seedBatch, type TempDb } from '../helpers/seed.ts';
import type { SmtpCapture } from '../helpers/smtp-capture.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { httpStatus } from '../../src/web/errors.ts';

let t: TestApp;
let tmp: TempDb;
let smtp: SmtpCapture;
let links: Links;
let svc: SubscriberService;

/** The app's subscriber service with another mailer. */
function service(m: Mailer): SubscriberService {
  return createSubscriberService({ ...t.app, mailer: m });
}

function subject(email: string) {
  return tmp.db.prepare('SELECT id, token_salt AS tokenSalt FROM subscribers WHERE email = ?').get(email) as {
    id: number;
    tokenSalt: string;
  };
}

function tokenOf(url: string): string {
  return url.split('/').pop()!;
}

/** A mute link's token (the subscriber's manage token) and topic id: /mute/<token>/<topicId>. */
function muteArgs(url: string): [string, number] {
  const m = /\/mute\/([^/]+)\/(\d+)$/.exec(url);
  if (!m) throw new Error(`not a mute link: ${url}`);
  return [m[1]!, Number(m[2])];
}

async function expectAppError(p: Promise<unknown> | (() => unknown), code: string, status?: number): Promise<AppError> {
  let caught: unknown;
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(AppError);
  const e = caught as AppError;
  expect(e.code).toBe(code);
  if (status !== undefined) expect(httpStatus(e)).toBe(status); // the status the web layer answers this error with
  return e;
}

beforeAll(async () => {
  t = await startTestApp({ DIGEST_TZ: 'Europe/Berlin', DIGEST_HOUR: '6', MAIL_FROM: 'Digest <d@example.org>' }, undefined, 'digest-subscribers-');
  ({ tmp, smtp } = t);
  ({ links, subscribers: svc } = t.app);
  seedBatch(tmp.db, '2025-11-24', [{ title: 'Older paper on agents' }], 'test', '2025-11-24T06:00:00.000Z');
  seedBatch(tmp.db, '2025-11-25', [{ title: 'Newest paper on agents' }], 'test', '2025-11-25T06:00:00.000Z');
});

afterAll(async () => {
  await t?.close();
});

describe('subscriber service', () => {
  it('normalises addresses and applies the configured defaults', async () => {
    const r = await svc.subscribe({ email: '  Mixed.Case@EXAMPLE.Org ', topics: ['agents'] });
    expect(r).toMatchObject({ email: 'Mixed.Case@example.org', outcome: 'created', status: 'pending', emailState: 'sent' });
    const found = svc.findByEmail('mixed.case@example.org')!;
    expect([found.timezone, found.deliveryHour, found.frequency]).toEqual(['Europe/Berlin', 6, 'daily']);
    const mail = await smtp.waitFor('Mixed.Case@example.org');
    expect(mail.text).toContain('https://digest.example.org/confirm/');
    await expectAppError(svc.subscribe({ email: 'nobody@', topics: ['x'] }), 'EMAIL_INVALID', 400);
  });

  it('admin subscribe confirms at once, sends nothing, and replaces topics keeping ids and mutes', async () => {
    const before = smtp.messages.length;
    const r = await svc.subscribe({ email: 'admin@example.org', topics: ['agents', 'llm'] }, { confirmed: true });
    expect(r).toMatchObject({ outcome: 'confirmed', status: 'confirmed', emailState: 'none' });
    const s = subject('admin@example.org');
    const [agents] = svc.findByEmail('admin@example.org')!.topics;
    svc.muteByToken(...muteArgs(links.mute(s, agents!.id)));

    await svc.subscribe({ email: 'admin@example.org', topics: ['diffusion', 'Agents '] }, { confirmed: true });
    const topics = svc.findByEmail('admin@example.org')!.topics;
    expect(topics.map((t) => [t.text, t.muted])).toEqual([
      ['diffusion', false],
      ['Agents', true],
    ]);
    expect(topics[1]!.id).toBe(agents!.id); // same query: same topic row, so old mute links still work
    await new Promise((r) => setTimeout(r, 100));
    expect(smtp.messages.length).toBe(before);
  });

  it('sets the watermark on confirm so the first digest holds only the last day of ingest', async () => {
    await svc.subscribe({ email: 'wm@example.org', topics: ['agents'] });
    const s = subject('wm@example.org');
    const r = svc.confirm(tokenOf(links.confirm(s)));
    expect(r.alreadyConfirmed).toBe(false);
    const { watermark } = tmp.db.prepare('SELECT watermark FROM subscribers WHERE id = ?').get(s.id) as { watermark: number };
    const older = tmp.db.prepare(`SELECT p.id FROM papers p WHERE title = 'Older paper on agents'`).get() as { id: number };
    expect(watermark).toBe(older.id);
    expect(svc.confirm(tokenOf(links.confirm(s))).alreadyConfirmed).toBe(true);
  });

  it('a bad topic saves nothing, even for an existing pending subscriber', async () => {
    await svc.subscribe({ email: 'pending@example.org', topics: ['graphs'] }, { sendEmail: false });
    const queries = tmp.db.prepare('SELECT count(*) AS n FROM queries').get();
    const e = await expectAppError(
      svc.subscribe({ email: 'pending@example.org', topics: ['new words', '"unclosed'], timezone: 'Asia/Tokyo' }),
      'TOPIC_INVALID',
      400,
    );
    expect(e.message).toMatch(/^topic 2: .*position 1/);
    const after = svc.findByEmail('pending@example.org')!;
    expect(after.topics.map((t) => t.text)).toEqual(['graphs']);
    expect(after.timezone).toBe('Europe/Berlin');
    expect(tmp.db.prepare('SELECT count(*) AS n FROM queries').get()).toEqual(queries);
    await expectAppError(
      svc.subscribe({ email: 'pending@example.org', topics: Array.from({ length: 21 }, (_, i) => `topic${i}`) }),
      'TOPIC_INVALID',
    );
    await expectAppError(svc.subscribe({ email: 'pending@example.org', topics: [] }), 'TOPIC_INVALID');
  });

  it('unsubscribes at once; an old confirmation link does not bring the address back', async () => {
    await svc.subscribe({ email: 'leaver@example.org', topics: ['agents'] }, { sendEmail: false });
    const s = subject('leaver@example.org');
    const confirmToken = tokenOf(links.confirm(s));
    svc.confirm(confirmToken);
    expect(svc.unsubscribeByEmail('LEAVER@example.org')).toBe(true);
    expect(svc.findByEmail('leaver@example.org')!.status).toBe('unsubscribed');
    await expectAppError(() => svc.confirm(confirmToken), 'LINK_INVALID', 403);
    expect(svc.unsubscribeByEmail('never@example.org')).toBe(false);
    // Preferences of an unsubscribed address cannot be changed (they must subscribe again).
    await expectAppError(() => svc.updatePreferences(tokenOf(links.preferences(s)), { deliveryHour: 3 }), 'UNSUBSCRIBED', 409);
  });

  it('pauses and resumes, and refuses bad values naming the field', () => {
    const s = subject('admin@example.org');
    const token = tokenOf(links.preferences(s));
    const paused = svc.updatePreferences(token, { pauseDays: 3 });
    expect(paused.pausedUntil).toBe('2025-11-28T09:00:00.000Z');
    expect(svc.updatePreferences(token, { pauseDays: 0 }).pausedUntil).toBeNull();
    for (const [input, field] of [
      [{ pauseDays: 400 }, 'pauseDays'],
      [{ deliveryHour: 7.5 }, 'deliveryHour'],
      [{ frequency: 'hourly' }, 'frequency'],
      [{ weeklyDay: 7 }, 'weeklyDay'],
      [{ timezone: 'Europe/Atlantis' }, 'timezone'],
    ] as const) {
      let message = '';
      try {
        svc.updatePreferences(token, input);
      } catch (e) {
        message = (e as Error).message;
      }
      expect(message.startsWith(`${field}: `), message).toBe(true);
    }
  });

  it('a mute link for a removed topic answers 410', async () => {
    const s = subject('admin@example.org');
    const topics = svc.findByEmail('admin@example.org')!.topics;
    const muteDiffusion = muteArgs(links.mute(s, topics[0]!.id));
    svc.updatePreferences(tokenOf(links.preferences(s)), { topics: ['Agents'] });
    await expectAppError(() => svc.muteByToken(...muteDiffusion), 'TOPIC_GONE', 410);
  });

  it('lists subscribers with status, topics and schedule', () => {
    const list = [...svc.list()];
    const admin = list.find((s) => s.email === 'admin@example.org')!;
    expect(admin).toMatchObject({ status: 'confirmed', timezone: 'Europe/Berlin', deliveryHour: 6, frequency: 'daily', hardFailures: 0 });
    expect(admin.topics.map((t) => t.text)).toEqual(['Agents']);
    expect(list.find((s) => s.email === 'leaver@example.org')!.status).toBe('unsubscribed');
  });

  it('when the relay refuses, the CLI path fails clearly and the throttle does not block a retry', async () => {
    const port = await freePort(); // nothing listens there: connection refused
    const down = createSmtpMailer({ url: `smtp://127.0.0.1:${port}`, from: 'd@example.org', poolSize: 1, ratePerSecond: 0, timeoutMs: 2000, logger: silentLogger });
    try {
      const e = await expectAppError(service(down).subscribe({ email: 'retry@example.org', topics: ['agents'] }), 'CONFIRM_EMAIL_FAILED');
      expect(e.temporary).toBe(true);
    } finally {
      await down.close();
    }
    // The subscriber exists (pending) and a retry sends at once.
    const r = await svc.subscribe({ email: 'retry@example.org', topics: ['agents'] });
    expect(r).toMatchObject({ outcome: 'updated', emailState: 'sent' });
    await smtp.waitFor('retry@example.org');
  });
});
