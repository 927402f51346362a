// The composition root: wires config, database, mail, renderer, services, web server and scheduler.
// Everything else receives what it needs as arguments.
import { readSetting, writeSettingOnce } from './db/settings-table.ts';
import { randomBytes } from 'node:crypto';
import { AppError, errorMessage } from './errors.ts';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { systemClock, type Clock } from './clock.ts';
import type { Config } from './config.ts';
import { openDatabase, type Db } from './db/open.ts';
import { createSqliteLimits, type SharedLimits } from './db/shared-limits.ts';
import { createRenderer, type Renderer } from './render/render.ts';
import { createLogger, type Logger } from './log.ts';
import { Links } from './links.ts';
import { Inbox, portIsOpen, startMailCatcher, type MailCatcher } from './mail/catcher.ts';
import { createSmtpMailer } from './mail/smtp-mailer.ts';
import type { Mailer } from './mail/types.ts';
import { createSubscriberService, type SubscriberService } from './subscribers/service.ts';
import { doorWithFallback, sqliteDoor, type SubscriberDoor } from './subscribers/door.ts';
import { createPostgresDoor, type PostgresDoor } from './subscribers/postgres/door.ts';
import { createPool, isPostgresUrl } from './db/postgres/pool.ts';
import { sharedSecret } from './db/postgres/settings.ts';
import type { NoticeSender } from './notices/sender.ts';
import type { HostSpacer } from './ingest/fetch.ts';
import { sourceSpacer } from './ingest/sources.ts';
import { createLikeLookups, type ExampleStore, type LikeLookups } from './match/like/lookups.ts';
import { postgresExampleStore } from './match/postgres/like-examples.ts';
import { arxivExampleFetcher } from './match/like/arxiv-fetcher.ts';
import { createFeedbackService } from './feedback/service.ts';
import { feedbackWithFallback, sqliteFeedback, type ReaderFeedback } from './feedback/port.ts';
import { createPostgresFeedback } from './feedback/postgres/feedback.ts';
import { createFeedService } from './feed/atom.ts';
import { feedsWithFallback, sqliteFeeds, type ReaderFeeds } from './feed/port.ts';
import { createPostgresFeeds } from './feed/postgres/atom.ts';
import { createTopicPreviewService, type TopicPreviewService } from './match/preview-service.ts';
import { createPostgresTopicPreview } from './match/postgres/preview.ts';
import { Tokens } from './tokens.ts';
import { createConsoleService, type ConsoleService } from './admin/console.ts';
import { postgresConsolePages, type StorePages } from './admin/postgres/pages.ts';
import { createWebhookEvents, type WebhookEvents } from './bounces/webhook-events.ts';
import { sqliteBounceStore, type BounceStore } from './bounces/store.ts';
import { postgresBounceStore } from './bounces/postgres/store.ts';
import { postBatch } from './ingest/post-batch.ts';
import { postBatchPg } from './ingest/postgres/ingest.ts';
import { createHealthCheck } from './report/health.ts';
import { formatMetrics } from './report/status.ts';
import { ALL_TIME, operatorFigures } from './report/figures.ts';
import type { OperatorReads } from './report/reads.ts';
import { postgresOperatorReads } from './report/postgres/reads.ts';
import { createPostgresHealthCheck } from './report/postgres/health.ts';
import { createOperatorService, type OperatorService } from './operator/service.ts';
import { sqliteRoster, type OperatorRoster } from './operator/roster.ts';
import { createPostgresRoster } from './operator/postgres/roster.ts';
import { runPipeline, type PipelineOptions, type PipelineReport } from './pipeline.ts';
import { digestViewsWithFallback, sqliteDigestViews, type DigestViews } from './subscribers/open-digest.ts';
import { createPostgresDigestViews } from './subscribers/postgres/open-digest.ts';
import type { MachineApi } from './web/deps.ts';

export const PROJECT_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** How the process uses mail when no SMTP_URL is set. */
export type MailMode =
  | 'serve' // start the local catcher on MAIL_CATCHER_PORT (the web inbox shows it)
  | 'client'; // deliver to a running `digest serve` catcher, or to one of our own for this process

export interface AppOptions {
  clock?: Clock;
  logger?: Logger;
  /** Replace the SMTP mailer (benchmarks); tests use a real SMTP server through SMTP_URL instead. */
  mailer?: Mailer;
  mailMode?: MailMode;
  /** SQLite busy_timeout of the app's connection (default DB_BUSY_TIMEOUT_MS; `serve` lowers it to WEB_BUSY_TIMEOUT_MS once started). */
  busyTimeoutMs?: number;
}

/** What every door (CLI commands, web routes, the console, /metrics) is given: services, no database handle. */
export interface App {
  config: Config;
  clock: Clock;
  logger: Logger;
  tokens: Tokens;
  links: Links;
  renderer: Renderer;
  mailer: Mailer;
  subscribers: SubscriberService;
  /** The web's subscriber door over the same service (serve swaps in PostgreSQL's: openPostgresDoor). */
  door: SubscriberDoor;
  /** Confirmation emails: written before they are sent, retried, counted (notices table). */
  notices: NoticeSender;
  /** The email's feedback and follow links (what reader models learn from), and personal Atom feeds (serve swaps in PostgreSQL's). */
  feedback: ReaderFeedback;
  feeds: ReaderFeeds;
  /** The topic builder's live preview. */
  topicPreview: TopicPreviewService;
  /** Spaces requests per feed host (sources, "fetch now", like: lookups) for every process on `limits`. */
  spacer: HostSpacer;
  /** The rate limits and spacings every instance shares: the SQLite file, or PostgreSQL with DATABASE_URL. */
  limits: SharedLimits;
  /** The operator console (its pages are served only with ADMIN_PASSWORD_HASH). */
  console: ConsoleService;
  /** The operator's roster and consent actions on SQLite (serve and the commands take PostgreSQL's with DATABASE_URL: openPostgresDoor). */
  roster: OperatorRoster;
  /** POST /api/batches, GET /health, GET /metrics. */
  machine: MachineApi;
  /** The relays' bounce and complaint webhooks. */
  webhooks: WebhookEvents;
  /** The web view of one digest ("view in browser"; serve swaps in PostgreSQL's). */
  digests: DigestViews;
  /** What the `digest` commands call: ingest, the operator figures, preview, import, opt-outs. */
  operator: OperatorService;
  /** One run of fetch -> match -> plan -> send -> upkeep (src/pipeline.ts). */
  pipeline: { run(opts: PipelineOptions): Promise<PipelineReport> };
  /** Set when mail goes to the built-in catcher (no SMTP_URL). */
  inbox: Inbox | undefined;
  /** The SMTP server mail goes to (starts the local catcher when needed). */
  smtpUrl(): Promise<string>;
  close(): Promise<void>;
}

/** Folder of the local mail catcher's messages: beside the database file. */
export function inboxDir(config: Config): string {
  const base = config.DATABASE_PATH === ':memory:' ? 'db' : dirname(config.DATABASE_PATH);
  return join(base, 'inbox');
}

export async function createApp(config: Config, options: AppOptions = {}): Promise<App> {
  return (await createAppWithDb(config, options)).app;
}

/**
 * The app and its own database connection, for what wires processes (src/serve.ts: recovery, the web
 * busy timeout, the bounce receiver), tests and benchmarks. A separate factory rather than a field of
 * App: doors only ever get createApp's App; a second connection would not see an in-memory database.
 */
export async function createAppWithDb(config: Config, options: AppOptions = {}): Promise<{ app: App; db: Db }> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? createLogger(config.LOG_LEVEL, { file: config.LOG_FILE });
  // Refuses a database it cannot write (one small write at open), naming DATABASE_PATH.
  const db = openDatabase(config.DATABASE_PATH, { busyTimeoutMs: options.busyTimeoutMs ?? config.DB_BUSY_TIMEOUT_MS });
  const tokens = new Tokens(config.SECRET_KEY ?? localSecret(db, logger));
  const links = new Links(config.PUBLIC_URL, tokens, clock);
  const renderer = await createRenderer({
    logger,
    fullPapers: config.DIGEST_FULL_PAPERS,
    cardCacheBytes: config.RENDER_CACHE_MB * 1024 * 1024,
  });
  const mail = await createMail(config, options, logger);
  const { mailer } = mail;
  const limits = await openSharedLimits(config, db);
  const services = createServices({ config, db, clock, logger, tokens, links, renderer, mailer, limits });
  const { subscribers } = services;
  const pipelineDeps = { config, db, clock, logger, links, renderer, mailer, notices: subscribers.notices, spacer: services.spacer, smtpUrl: mail.smtpUrl };

  const app: App = {
    config,
    clock,
    logger,
    tokens,
    links,
    renderer,
    mailer,
    ...services,
    door: sqliteDoor(subscribers),
    notices: subscribers.notices,
    pipeline: { run: (opts) => runPipeline(pipelineDeps, opts) },
    inbox: mail.inbox,
    smtpUrl: mail.smtpUrl,
    async close() {
      subscribers.notices.close();
      await mailer.close();
      await mail.closeCatcher();
      await limits.close();
      db.close();
    },
  };
  return { app, db };
}

interface AppMail {
  /** Set when mail goes to the built-in catcher (no SMTP_URL). */
  inbox: Inbox | undefined;
  mailer: Mailer;
  smtpUrl(): Promise<string>;
  /** Stops the local catcher if this process started one. */
  closeCatcher(): Promise<void>;
}

/** Where mail goes: SMTP_URL, or the local catcher (a running `digest serve`'s, or one of our own). */
async function createMail(config: Config, options: AppOptions, logger: Logger): Promise<AppMail> {
  const inbox = config.SMTP_URL ? undefined : new Inbox(inboxDir(config));
  let catcher: MailCatcher | undefined;
  let smtpUrl: Promise<string> | undefined;
  const resolveSmtpUrl = (): Promise<string> =>
    (smtpUrl ??= (async () => {
      if (config.SMTP_URL) return config.SMTP_URL;
      const mode = options.mailMode ?? 'client';
      if (mode === 'client' && (await portIsOpen(config.MAIL_CATCHER_PORT))) return `smtp://127.0.0.1:${config.MAIL_CATCHER_PORT}`;
      catcher = await startCatcher(inbox!, mode === 'serve' ? config.MAIL_CATCHER_PORT : 0, logger);
      return catcher.url;
    })());
  // The serve process owns the catcher from the start; other commands start mail only when they send.
  if (inbox && options.mailMode === 'serve') await resolveSmtpUrl();
  const mailer =
    options.mailer ??
    lazyMailer(async () =>
      createSmtpMailer({
        url: await resolveSmtpUrl(),
        from: config.MAIL_FROM,
        poolSize: config.SMTP_POOL_SIZE,
        ratePerSecond: config.SMTP_RATE_PER_SECOND,
        timeoutMs: config.SMTP_TIMEOUT_MS,
        dkim: config.dkim,
        logger,
        allowPlainAuth: config.SMTP_ALLOW_PLAIN_AUTH,
      }),
    );
  return {
    inbox,
    mailer,
    smtpUrl: resolveSmtpUrl,
    closeCatcher: async () => {
      await catcher?.close();
    },
  };
}

/**
 * Where the shared limits live: PostgreSQL when DATABASE_URL names it (the store instances on several
 * machines share; opened on first use), else the SQLite file every process on this machine opens.
 */
async function openSharedLimits(config: Config, db: Db): Promise<SharedLimits> {
  if (!config.DATABASE_URL) return createSqliteLimits(db, { lockWaitMs: config.WEB_LOCK_WAIT_MS });
  const { createPostgresLimits } = await import('./db/postgres/shared-limits.ts');
  return createPostgresLimits({ url: config.DATABASE_URL, schema: config.DATABASE_SCHEMA });
}

type AppCore = Pick<App, 'config' | 'clock' | 'logger' | 'tokens' | 'links' | 'renderer' | 'mailer' | 'limits'> & { db: Db };
type AppServices = Pick<App, 'subscribers' | 'feedback' | 'feeds' | 'topicPreview' | 'spacer' | 'limits' | 'console' | 'roster' | 'machine' | 'webhooks' | 'digests' | 'operator'>;

/** like: lookups over one store (SQLite's db, or PostgreSQL's examples), or none when LIKE_LOOKUP is off. */
function likeLookupsOver(
  store: { db: Db } | { store: ExampleStore },
  { config, clock, logger, spacer }: { config: Config; clock: Clock; logger: Logger; spacer: App['spacer'] },
): LikeLookups | undefined {
  if (!config.LIKE_LOOKUP) return undefined;
  const fetcher = arxivExampleFetcher(config.ARXIV_API_URL, { timeoutMs: config.FETCH_TIMEOUT_MS, retries: 1, logger, spacer });
  return createLikeLookups({ ...store, clock, logger, waitMs: config.LIKE_LOOKUP_WAIT_MS, fetcher });
}

/** The services the commands, web pages and console call, over the database, links and mail. */
function createServices({ config, db, clock, logger, tokens, links, renderer, mailer, limits }: AppCore): AppServices {
  // One spacer for every request to a feed host: the sources, the console's "fetch now" and like:
  // lookups, booked in the shared store, so arXiv's one request every ARXIV_MIN_INTERVAL_MS holds for
  // every process of the deployment.
  const spacer = sourceSpacer(config, limits);
  // like: examples missing from the database are looked up on arXiv (LIKE_LOOKUP, ARXIV_API_URL), bounded
  // and in the background (match/like/lookups.ts).
  const likeLookups = likeLookupsOver({ db }, { config, clock, logger, spacer });
  const subscribers = createSubscriberService({ db, clock, tokens, links, mailer, renderer, config, logger, likeLookups });
  // Property order is construction order.
  return {
    subscribers,
    feedback: sqliteFeedback(createFeedbackService({ db, clock, tokens, links, logger })),
    feeds: sqliteFeeds(createFeedService({ db, clock, tokens, links })),
    topicPreview: createTopicPreviewService({ db, clock }),
    spacer,
    limits,
    console: createConsoleService({ db, clock, config, logger, spacer }),
    roster: sqliteRoster({ db, clock, config, logger, links, subscribers }),
    machine: {
      health: createHealthCheck({ db, clock, config }),
      metrics: async () => formatMetrics(operatorFigures(db, clock, ALL_TIME)),
      postBatch: (posted) => postBatch(db, clock, posted),
    } satisfies MachineApi,
    webhooks: createWebhookEvents({ store: sqliteBounceStore({ db, clock, config, logger }), clock, config, logger }),
    digests: sqliteDigestViews({ db, links, subscribers }),
    operator: createOperatorService({ db, clock, config, logger, links, renderer }),
  };
}

/** A mailer made on first use, so commands that send nothing start no SMTP pool or catcher. */
function lazyMailer(make: () => Promise<Mailer>): Mailer {
  let made: Promise<Mailer> | undefined;
  return {
    send: async (mail) => (await (made ??= make())).send(mail),
    close: async () => {
      if (made) await (await made).close();
    },
  };
}

async function startCatcher(inbox: Inbox, port: number, logger: Logger): Promise<MailCatcher> {
  try {
    const c = await startMailCatcher(inbox, port, logger);
    logger.info({ port: c.port, inbox: inbox.dir }, 'local mail catcher listening (no SMTP_URL set)');
    return c;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EADDRINUSE' || port === 0) throw e;
    logger.warn({ port }, 'MAIL_CATCHER_PORT is taken; the local mail catcher uses another port');
    return startMailCatcher(inbox, 0, logger);
  }
}

/** With no SECRET_KEY set, a random key is generated once and kept in the database. */
function localSecret(db: Db, logger: Logger): string {
  const stored = readSetting(db, 'secret_key');
  if (stored) return stored;
  // Two processes starting together: the first write wins and both use it.
  const kept = writeSettingOnce(db, 'secret_key', randomBytes(32).toString('hex'));
  logger.warn('SECRET_KEY is not set: generated one and stored it in the database (set SECRET_KEY in production)');
  return kept;
}

/** `digest serve`'s subscriber door on PostgreSQL, with its own pool and the secret every instance shares. */
export interface PostgresDoorHandle {
  door: PostgresDoor;
  /** What the web serves: PostgreSQL's door, with SQLite's answering the links it does not know. */
  served: SubscriberDoor;
  /** Bounces and complaints about the digests PostgreSQL's workers send act here (receiver and webhooks). */
  bounces: BounceStore;
  /** The console's and the commands' roster and consent actions, on PostgreSQL's rows (where the workers read). */
  roster: OperatorRoster;
  webhooks: WebhookEvents;
  /** The operator's figures from PostgreSQL (status, console, /metrics), and /health probing it. */
  reads: OperatorReads;
  machine: MachineApi;
  /** The console's overview, deliveries and sources pages (and "fetch now"), and its sessions, on PostgreSQL. */
  console: StorePages;
  /** A digest's links (feedback, follow, web view) and the reader's feed, on PostgreSQL, SQLite's answering the links it did not sign. */
  readerLinks: Pick<App, 'feedback' | 'feeds' | 'digests'>;
  /** The topic builder's preview over PostgreSQL's papers (mirrored in memory: match/postgres/preview.ts). */
  topicPreview: TopicPreviewService;
  close(): Promise<void>;
}

/**
 * With DATABASE_URL=postgres://…: the door on PostgreSQL (subscribers/postgres/door.ts). Its links are
 * signed with SECRET_KEY, or else with the secret kept in PostgreSQL's settings, so that a link one
 * instance mailed verifies on every other. Undefined on SQLite. Refuses a schema `digest migrate` has
 * not made, naming the fix.
 */
export async function openPostgresDoor(app: App): Promise<PostgresDoorHandle | undefined> {
  const { config, clock, logger, mailer, renderer } = app;
  if (!isPostgresUrl(config.DATABASE_URL)) return undefined;
  const pool = createPool(config.DATABASE_URL, { ...(config.DATABASE_SCHEMA ? { schema: config.DATABASE_SCHEMA } : {}), max: 8 });
  try {
    await pool.query('SELECT 1 FROM subscribers, notices, consent_events LIMIT 0');
  } catch (e) {
    await pool.end();
    throw new AppError('CONFIG_INVALID', `DATABASE_URL: the PostgreSQL schema is not ready (${errorMessage(e)}); run \`digest migrate\` first`);
  }
  let secret = config.SECRET_KEY;
  if (!secret) {
    const shared = await sharedSecret(pool);
    if (shared.generated) logger.warn('SECRET_KEY is not set: generated one and stored it in PostgreSQL (set SECRET_KEY in production)');
    secret = shared.secret;
  }
  const tokens = new Tokens(secret);
  const links = new Links(config.PUBLIC_URL, tokens, clock);
  const likeLookups = likeLookupsOver({ store: postgresExampleStore(pool) }, { config, clock, logger, spacer: app.spacer });
  const door = createPostgresDoor({ pool, clock, tokens, links, logger, mailer, renderer, config, likeLookups });
  const bounces = postgresBounceStore({ pool, clock, logger, config });
  // Its own small pool: /health and /metrics answer (or fail) quickly even while the door's pool is busy.
  const opsPool = createPool(config.DATABASE_URL, { ...(config.DATABASE_SCHEMA ? { schema: config.DATABASE_SCHEMA } : {}), max: 2, connectTimeoutMs: 2000 });
  const reads = postgresOperatorReads(opsPool, clock);
  const signedHere = (token: string) => door.signedHere!(token);
  const pgDeps = { pool, clock, tokens, links };
  const topicPreview = createPostgresTopicPreview({ pool, clock, budgetMb: config.PREVIEW_MIRROR_MB });
  return {
    bounces,
    reads,
    console: postgresConsolePages({ pool, readPool: opsPool, reads, config, clock, logger, spacer: app.spacer }),
    machine: {
      ...app.machine,
      health: createPostgresHealthCheck(opsPool, clock),
      metrics: async () => formatMetrics(await reads.figures(ALL_TIME)),
      // Batches go where `digest plan` matches them; the same checks, whole or nothing.
      postBatch: (posted) => postBatchPg(pool, clock, posted),
    },
    roster: createPostgresRoster({ pool, clock, logger, config, door, links }),
    webhooks: createWebhookEvents({ store: bounces, clock, config, logger }),
    door,
    // Emails sent from the SQLite file before the move: their links keep working through SQLite's services.
    served: doorWithFallback(door, app.door),
    readerLinks: {
      feedback: feedbackWithFallback(createPostgresFeedback({ ...pgDeps, logger }), app.feedback, signedHere),
      feeds: feedsWithFallback(createPostgresFeeds(pgDeps), app.feeds, signedHere),
      digests: digestViewsWithFallback(createPostgresDigestViews(pgDeps), app.digests, signedHere),
    },
    topicPreview,
    async close() {
      topicPreview.close();
      door.notices.close();
      await pool.end();
      await opsPool.end();
    },
  };
}
