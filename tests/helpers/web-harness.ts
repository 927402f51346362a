// The subscriber web stack as production builds it: createApp() (real SQLite file in a temp dir, the
// real renderer, the SMTP mailer talking to a real local SMTP server, the subscriber service) and the
// Fastify server listening on a free port. Only the clock is fake.
// On PostgreSQL (`engine: 'postgres'`) it is what `digest serve` builds with DATABASE_URL=postgres://…:
// the SQLite file is seeded, moved into a fresh schema by `digest copy`'s code, and the web serves
// PostgreSQL's door, links, roster and webhooks (servedWebDeps); `h.sql` reads the engine's own store.
import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import type { ManualClock } from '../../src/clock.ts';
import type { Config } from '../../src/config.ts';
import type { Links } from '../../src/links.ts';
import type { Mailer } from '../../src/mail/types.ts';
import type { SubscriberDoor } from '../../src/subscribers/door.ts';
import type { SubscriberService } from '../../src/subscribers/service.ts';
import type { Tokens } from '../../src/tokens.ts';
import { buildServer, closeServer, type WebDeps } from '../../src/web/server.ts';
import { copySqliteToPostgres } from '../../src/db/postgres/copy.ts';
import { openPostgresDoor, type PostgresDoorHandle } from '../../src/main.ts';
import { servedWebDeps } from '../../src/serve.ts';
import { postgresSql, sqliteSql, type Engine, type EngineSql } from './on-engines.ts';
import { freePort } from './ports.ts';
import { createTestSchema, type TestSchema } from './postgres.ts';
import { seedBatch, type TempDb } from './seed.ts';
import type { CapturedMail, SmtpCapture } from './smtp-capture.ts';
import { startTestApp, TEST_NOW, type AppWithDb } from './test-app.ts';

export { PUBLIC_URL, TEST_SECRET } from './test-app.ts';

export interface WebHarness {
  base: string;
  /** The web server. */
  app: FastifyInstance;
  /** What createApp() built (config, db, tokens, links, renderer, mailer, subscribers). */
  core: AppWithDb;
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
  engine: Engine;
  /** SQL on the store the web serves from (the SQLite file, or PostgreSQL's schema), `?` placeholders. */
  sql: EngineSql;
  /** PostgreSQL's handle (door, roster, webhooks…) when the engine is PostgreSQL. */
  pg: PostgresDoorHandle | undefined;
  /** The pool on the harness's schema when the engine is PostgreSQL (for a transaction or EXPLAIN). */
  pgPool: pg.Pool | undefined;
  /** The subscriber door the web serves (SQLite's, or PostgreSQL's with SQLite's behind it). */
  door: SubscriberDoor;
  close(): Promise<void>;
}

export interface WebHarnessOptions {
  /** Listen on the port of PUBLIC_URL = http://127.0.0.1:<free port>, so a browser can follow the emailed links. */
  servePublicUrl?: boolean;
  /** As `digest serve` does after a subscriber confirms. */
  onConfirmed?: (subscriberId: number) => void;
  /** More web dependencies (e.g. the console's fetchSourcesNow). */
  web?: Partial<WebDeps>;
  /** Default sqlite. */
  engine?: Engine;
  /**
   * Written into the SQLite file before the web starts (on PostgreSQL: before the copy), through the app
   * when it needs the product's paths (match, plan, send, bounces).
   */
  seed?: (tmp: TempDb, core: AppWithDb) => void | Promise<void>;
}

/** PostgreSQL's side of a harness: the SQLite file copied into a fresh schema, and `digest serve`'s handle on it. */
async function onPostgres(core: AppWithDb, schema: TestSchema): Promise<PostgresDoorHandle> {
  const copied = await copySqliteToPostgres(core.db, schema.pool);
  if (!copied.ok) throw new Error(`copy to PostgreSQL: counts differ ${JSON.stringify(copied.counts)}`);
  return (await openPostgresDoor(core))!;
}

/** `env` overrides the test configuration (see startTestApp). */
export async function startWebHarness(
  env: Record<string, string> = {},
  now = TEST_NOW,
  options: WebHarnessOptions = {},
): Promise<WebHarness> {
  const port = options.servePublicUrl ? await freePort() : 0;
  const served: Record<string, string> = options.servePublicUrl
    ? { PUBLIC_URL: `http://127.0.0.1:${port}`, PORT: String(port), HOST: '127.0.0.1' }
    : {};
  const engine = options.engine ?? 'sqlite';
  const schema = engine === 'postgres' ? await createTestSchema() : undefined;
  const onPg: Record<string, string> = schema ? { DATABASE_URL: schema.url, DATABASE_SCHEMA: schema.name } : {};
  const t = await startTestApp({ ...env, ...served, ...onPg }, now, 'digest-web-');
  const core = t.app;
  let pg: PostgresDoorHandle | undefined;
  let app: FastifyInstance | undefined;
  let door = core.door;
  const closeAll = async () => {
    if (app) await closeServer(app);
    await pg?.close();
    await t.close();
    await schema?.drop();
  };
  try {
    await options.seed?.(t.tmp, core);
    if (schema) pg = await onPostgres(core, schema);
    const served = servedWebDeps(core, pg);
    door = served.door ?? door;
    app = buildServer({ ...core, ...served, onConfirmed: options.onConfirmed, ...options.web });
    await app.listen({ port, host: '127.0.0.1' });
  } catch (e) {
    await closeAll().catch(() => {});
    throw e;
  }
  const address = app.server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return {
    base,
    app,
    core,
    tmp: t.tmp,
    smtp: t.smtp,
    clock: t.clock,
    config: core.config,
    tokens: core.tokens,
    links: core.links,
    mailer: core.mailer,
    subscribers: core.subscribers,
    local: (url) => `${base}${new URL(url).pathname}`,
    engine,
    sql: schema ? postgresSql(schema.pool) : sqliteSql(core.db),
    pg,
    pgPool: schema?.pool,
    door,
    close: closeAll,
  };
}

/** The first link in an email's text part whose path starts with `prefix` (e.g. '/confirm/'). */
export function linkIn(text: string, prefix: string): string {
  // The whole path from the prefix on: a mute link is /mute/<token>/<topicId>.
  const m = new RegExp(`https?://[^\\s<>"')\\]]*${prefix.replace(/\//g, '\\/')}[A-Za-z0-9._-]+(?:/[A-Za-z0-9._-]+)*`).exec(text);
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

// Addresses match without case on both engines (SQLite: COLLATE NOCASE; PostgreSQL: a lower(email) index).

/** The subscriber's row in the store the web serves from (either engine). */
export function subscriberRowOn(h: WebHarness, email: string): Promise<SubscriberRow | undefined> {
  return h.sql.get<SubscriberRow>('SELECT * FROM subscribers WHERE lower(email) = lower(?)', email);
}

/** A subscriber's topics, in order, from the store the web serves from. */
export async function topicsOn(h: WebHarness, email: string): Promise<string[]> {
  const rows = await h.sql.all<{ text: string }>(
    'SELECT t.text FROM topics t JOIN subscribers s ON s.id = t.subscriber_id WHERE lower(s.email) = lower(?) ORDER BY t.position',
    email,
  );
  return rows.map((r) => r.text);
}

/** Subscribes through the API and confirms through the emailed link; returns the confirmation email. */
export async function subscribeAndConfirm(h: WebHarness, email: string, topics: string[]): Promise<CapturedMail> {
  const before = h.smtp.to(email).length;
  const res = await fetch(`${h.base}/subscribe`, jsonPost({ email, topics }));
  if (res.status !== 202) throw new Error(`subscribe answered ${res.status}`);
  const mail = await h.smtp.waitFor(email, before + 1);
  const confirmed = await fetch(h.local(linkIn(mail.text, '/confirm/')));
  if (confirmed.status !== 200) throw new Error(`confirm answered ${confirmed.status}`);
  return mail;
}

/**
 * Three batches: 2025-11-24's, ingested the day before the harness clock's day, then 2025-11-25's and a
 * backfill of 2025-10-01, both ingested on the 25th (the last day of ingest).
 */
export function seedEditions(h: { tmp: TempDb }): void {
  const dayBefore = '2025-11-24T06:00:00.000Z';
  const today = '2025-11-25T06:00:00.000Z';
  seedBatch(h.tmp.db, '2025-11-24', [
    { title: 'Old diffusion models for images', abstract: 'Diffusion models generate images step by step.' },
    { title: 'Graph networks revisited', abstract: 'Message passing on graphs.' },
  ], 'test', dayBefore);
  seedBatch(h.tmp.db, '2025-11-25', [
    { title: 'Mixture of experts at scale', abstract: 'Sparse mixture of experts layers for language models.', upvotes: 30 },
    { title: 'Self-play for reinforcement learning agents', abstract: 'Agents learn by self-play in many games.', upvotes: 12 },
  ], 'test', today);
  seedBatch(h.tmp.db, '2025-10-01', [
    { title: 'Ancient reinforcement learning survey', abstract: 'A survey of reinforcement learning from long ago.' },
  ], 'test', today);
}

/** One harness shared by a test file's tests, with row() and subscribeAndConfirm() bound to it. */
export interface SharedWebHarness {
  /** Usable inside tests and hooks (it starts in beforeAll). */
  h: WebHarness;
  /** The SQLite file's row (SQLite-only files). */
  row(email: string): SubscriberRow | undefined;
  /** The row in the store the web serves from, on either engine. */
  rowOn(email: string): Promise<SubscriberRow | undefined>;
  topicsOn(email: string): Promise<string[]>;
  subscribeAndConfirm(email: string, topics: string[]): Promise<CapturedMail>;
}

/**
 * Registers beforeAll (start the harness on `engine`, seedEditions) and afterAll (close it) in the
 * calling test file (or describe block: forEachEngine).
 */
export function sharedWebHarness(env: Record<string, string> = {}, options: { engine?: Engine } = {}): SharedWebHarness {
  let started: WebHarness | undefined;
  const current = (): WebHarness => {
    if (!started) throw new Error('the shared web harness starts in beforeAll: use it inside tests and hooks');
    return started;
  };
  beforeAll(async () => {
    started = await startWebHarness(env, TEST_NOW, { engine: options.engine, seed: (tmp) => seedEditions({ tmp }) });
  });
  afterAll(async () => {
    await started?.close();
  });
  return {
    h: new Proxy({} as WebHarness, { get: (_target, key) => Reflect.get(current(), key) }),
    row: (email) => subscriberRow(current(), email),
    rowOn: (email) => subscriberRowOn(current(), email),
    topicsOn: (email) => topicsOn(current(), email),
    subscribeAndConfirm: (email, topics) => subscribeAndConfirm(current(), email, topics),
  };
}
