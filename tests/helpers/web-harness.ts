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
import { tempDatabase, type TempDb } from './seed.ts';
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
