// The subscriber web stack with real parts: a SQLite file in a temp dir, the real renderer, the SMTP
// mailer talking to a real local SMTP server, the subscriber service and the Fastify server listening
// on a free port. Only the clock is fake.
import type { FastifyInstance } from 'fastify';
import { ManualClock } from '../../src/clock.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { createRenderer } from '../../src/digest/render.ts';
import { Links } from '../../src/links.ts';
import { silentLogger } from '../../src/log.ts';
import { createSmtpMailer } from '../../src/mail/smtp-mailer.ts';
import type { Mailer } from '../../src/mail/types.ts';
import { createSubscriberService, type SubscriberService } from '../../src/subscribers/service.ts';
import { Tokens } from '../../src/tokens.ts';
import { buildServer } from '../../src/web/server.ts';
import { seedBatch, tempDatabase, type TempDb } from './seed.ts';
import { startSmtpCapture, type SmtpCapture } from './smtp-capture.ts';

export const TEST_SECRET = 'test-secret-key-0123456789abcdef0123456789';
export const PUBLIC_URL = 'https://digest.example.org';

export interface WebHarness {
  base: string;
  app: FastifyInstance;
  tmp: TempDb;
  smtp: SmtpCapture;
  clock: ManualClock;
  config: Config;
  tokens: Tokens;
  links: Links;
  mailer: Mailer;
  subscribers: SubscriberService;
  /** A URL from an email (PUBLIC_URL based) -> the same path on the test server. */
  local(url: string): string;
  close(): Promise<void>;
}

export async function startWebHarness(env: Record<string, string> = {}, now = '2025-11-25T09:00:00Z'): Promise<WebHarness> {
  const tmp = tempDatabase('digest-web-');
  const smtp = await startSmtpCapture();
  const config = loadConfig({
    DATABASE_PATH: tmp.path,
    SMTP_URL: smtp.url,
    SECRET_KEY: TEST_SECRET,
    PUBLIC_URL,
    DIGEST_TZ: 'Europe/Paris',
    DIGEST_HOUR: '8',
    LOG_LEVEL: 'silent',
    ...env,
  });
  const clock = new ManualClock(now);
  const tokens = new Tokens(TEST_SECRET);
  const links = new Links(config.PUBLIC_URL, tokens, clock);
  const renderer = await createRenderer();
  const mailer = createSmtpMailer({
    url: smtp.url,
    from: config.MAIL_FROM,
    poolSize: 1,
    ratePerSecond: 0,
    timeoutMs: 5000,
    logger: silentLogger,
  });
  const subscribers = createSubscriberService({
    db: tmp.db,
    clock,
    tokens,
    links,
    mailer,
    renderer,
    config,
    logger: silentLogger,
  });
  const app = buildServer({ db: tmp.db, clock, config, logger: silentLogger, links, subscribers, renderer });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return {
    base,
    app,
    tmp,
    smtp,
    clock,
    config,
    tokens,
    links,
    mailer,
    subscribers,
    local: (url) => `${base}${new URL(url).pathname}`,
    async close() {
      await app.close();
      await mailer.close();
      await smtp.close();
      tmp.cleanup();
    },
  };
}

/** The first link in an email's text part whose path starts with `prefix` (e.g. '/confirm/'). */
export function linkIn(text: string, prefix: string): string {
  const m = new RegExp(`https?://[^\\s<>"')\\]]*${prefix.replace(/\//g, '\\/')}[A-Za-z0-9._-]+`).exec(text);
  if (!m) throw new Error(`no ${prefix} link in:\n${text}`);
  return m[0];
}

/** fetch() options for a JSON POST. */
export const jsonPost = (body: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

/** fetch() options for a plain HTML form POST (redirects not followed, to see them). */
export const formPost = (fields: Array<[string, string]>): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
  redirect: 'manual',
});

export interface SubscriberRow {
  id: number;
  status: string;
  watermark: number;
  timezone: string;
  delivery_hour: number;
  frequency: string;
  token_salt: string;
}

export function subscriberRow(h: WebHarness, email: string): SubscriberRow | undefined {
  return h.tmp.db.prepare('SELECT * FROM subscribers WHERE email = ?').get(email) as SubscriberRow | undefined;
}

/** Subscribes through the API and confirms through the emailed link; returns the confirmation email. */
export async function subscribeAndConfirm(h: WebHarness, email: string, topics: string[]) {
  const before = h.smtp.to(email).length;
  const res = await fetch(`${h.base}/subscribe`, jsonPost({ email, topics }));
  if (res.status !== 202) throw new Error(`subscribe answered ${res.status}`);
  const mail = await h.smtp.waitFor(email, before + 1);
  const confirmed = await fetch(h.local(linkIn(mail.text, '/confirm/')));
  if (confirmed.status !== 200) throw new Error(`confirm answered ${confirmed.status}`);
  return mail;
}

/** Two older editions and the newest (2025-11-25, the harness clock's day). */
export function seedEditions(h: WebHarness): void {
  seedBatch(h.tmp.db, '2025-11-24', [
    { title: 'Old diffusion models for images', abstract: 'Diffusion models generate images step by step.' },
    { title: 'Graph networks revisited', abstract: 'Message passing on graphs.' },
  ]);
  seedBatch(h.tmp.db, '2025-11-25', [
    { title: 'Mixture of experts at scale', abstract: 'Sparse mixture of experts layers for language models.', upvotes: 30 },
    { title: 'Self-play for reinforcement learning agents', abstract: 'Agents learn by self-play in many games.', upvotes: 12 },
  ]);
  seedBatch(h.tmp.db, '2025-10-01', [
    { title: 'Ancient reinforcement learning survey', abstract: 'A survey of reinforcement learning from long ago.' },
  ]);
}
