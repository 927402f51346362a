// `digest serve`, wired here as part of the composition root (main.ts builds the app, this module starts
// what a serving process runs beside it): start-up recovery, the scheduler, the web server, the bounce
// receiver, and the signals that stop them. The CLI only calls `serve`.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CliIo } from './cli-io.ts';
import type { Config } from './config.ts';
import { startBounceReceiver, type BounceReceiver } from './bounces/receiver.ts';
import { sqliteBounceStore, type BounceStore } from './bounces/store.ts';
import { verpFrom } from './bounces/verp.ts';
import { parseFeed } from './ingest/detect.ts';
import { parseSources } from './ingest/sources.ts';
import type { IngestResult } from './ingest/ingest.ts';
import { hasAnyBatchPg, ingestBatchPg } from './ingest/postgres/ingest.ts';
import { createPool, isPostgresUrl } from './db/postgres/pool.ts';
import { createAppWithDb, openPostgresDoor, PROJECT_ROOT, type App, type AppOptions, type PostgresDoorHandle } from './main.ts';
import { runFailure, warnIfOverdue } from './pipeline.ts';
import { createScheduler } from './scheduler.ts';
import { servePlanningOnPostgres } from './plan/postgres/serve-planning.ts';
import { recoverStale } from './ledger/index.ts';
import { buildServer, closeServer } from './web/server.ts';
import type { WebDeps } from './web/deps.ts';
import { localInboxLine, newInboxToken } from './web/routes/inbox-guard.ts';
import { plural } from './words.ts';

export const SAMPLE_BATCH = join(PROJECT_ROOT, 'samples', 'daily-papers-sample.json');

/** `digest serve`: web pages, the scheduler, and (with no SMTP_URL) the local mail catcher. */
export async function serve(config: Config, io: CliIo, appOptions: AppOptions): Promise<number> {
  // Start-up (migrations, the write probe, the sample batch, recovery) waits for another process's lock
  // as long as any command does (DB_BUSY_TIMEOUT_MS): nothing is listening yet, and a `digest run`
  // planning next door must not make serve refuse to start.
  const { app, db } = await createAppWithDb(config, { ...appOptions, mailMode: 'serve' });
  const { logger } = app;
  // Sends left in flight by a crash: say so now, not at the first tick an hour later.
  recoverStale(db, app.clock, { logger });
  // With DATABASE_URL=postgres://… the subscriber door (subscribe, confirm, unsubscribe, manage) and a
  // digest's links (feedback, follow, web view, the feed), the console's pages and sessions, /health and
  // /metrics are on PostgreSQL (README "Running on more than one machine": servedWebDeps).
  const pg = await openPostgresDoor(app);
  await seedSampleBatch(app, io);
  // Confirmation emails a stopped process or a relay failure left unsent go now (then on their retry times).
  app.notices.kick();
  pg?.door.notices.kick();
  // From here web routes and the scheduler share this connection on one thread: a statement waits at
  // most WEB_BUSY_TIMEOUT_MS for another process's lock (better-sqlite3 waits synchronously, freezing
  // every request meanwhile); routes retry and then answer 503 + Retry-After, the tick's writers retry
  // between requests (src/web/lock-retry.ts, src/db/busy.ts).
  db.pragma(`busy_timeout = ${config.WEB_BUSY_TIMEOUT_MS}`);
  const running = new AbortController();
  // On PostgreSQL the ticks and the welcome digest plan there (plan/postgres/serve-planning.ts); workers send.
  const planning = pg
    ? servePlanningOnPostgres(config, { clock: app.clock, logger, spacer: app.spacer, afterTick: async () => warnIfOverdue(logger, (await pg.reads.figures({ overdue: 'count' })).overdue) })
    : undefined;
  const scheduler = createScheduler({
    cron: config.DIGEST_CRON,
    timezone: config.DIGEST_TZ,
    logger,
    tick: async () => {
      if (planning) return planning.tick();
      const failure = runFailure(await app.pipeline.run({ mode: 'due', signal: running.signal }));
      if (failure) throw failure; // logged by the scheduler as "tick failed: <cause>"
    },
  });
  // The first digest goes out right after confirming (it takes that day's slot: the papers of the last
  // day of ingest that match); later ones at the subscriber's own hour.
  const inboxToken = newInboxToken();
  const server = buildServer({
    ...app,
    inboxToken,
    ...servedWebDeps(app, pg),
    // A PostgreSQL subscriber id names no SQLite subscriber: on PostgreSQL the welcome digest is planned there.
    onConfirmed: (id: number) =>
      scheduler.runSoon('welcome', () => (planning ? planning.welcome(id) : app.pipeline.run({ mode: 'now', onlySubscriber: id, signal: running.signal }))),
  });
  await server.listen({ port: config.PORT, host: config.HOST });
  const bounces = await startBounceReceiverIfSet(app, pg?.bounces ?? sqliteBounceStore({ db, clock: app.clock, logger, config: app.config }));
  scheduler.start();
  io.out(`paper digest at ${config.PUBLIC_URL}${app.inbox ? ` — ${localInboxLine(config, inboxToken)}` : ''}`);

  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  logger.info('shutting down: finishing the sends in flight');
  running.abort();
  await scheduler.stop();
  await closeServer(server);
  await bounces?.close();
  await planning?.close();
  await pg?.close();
  await app.close();
  return 0;
}

/**
 * What the web serves beside the app: with DATABASE_URL=postgres://… (`pg`) the parts that live there.
 * Exported so the tests that run a scenario on both engines serve what `digest serve` serves.
 */
export function servedWebDeps(app: App, pg: PostgresDoorHandle | undefined): Partial<WebDeps> {
  return {
    door: pg?.served ?? app.door,
    // /health probes PostgreSQL and /metrics counts there: it is where the readers and the ledger live.
    machine: pg?.machine ?? app.machine,
    // The console's overview, deliveries and sources pages read there too ("fetch now" ingests there), and
    // its sessions live there: a login behind one instance holds at every other, a logout ends it everywhere.
    console: pg ? { ...app.console, ...pg.console } : app.console,
    // Digests are sent from PostgreSQL there: their links and the reader's feed read and write it.
    ...pg?.readerLinks,
    // The console's subscriber pages and consent actions act where the workers read who to mail.
    roster: pg?.roster ?? app.roster,
    // Digests are sent from PostgreSQL there: their bounces and complaints must act on its subscribers.
    webhooks: pg?.webhooks ?? app.webhooks,
    // The topic builder's preview shows the papers PostgreSQL's planners match.
    topicPreview: pg?.topicPreview ?? app.topicPreview,
  };
}

/** The built-in bounce receiver, when BOUNCE_SMTP_PORT is set (config.ts requires BOUNCE_ADDRESS with it). */
async function startBounceReceiverIfSet(app: App, store: BounceStore): Promise<BounceReceiver | undefined> {
  const verp = verpFrom(app.config);
  if (app.config.BOUNCE_SMTP_PORT === undefined || !verp) return undefined;
  return startBounceReceiver(
    { store, logger: app.logger, verp },
    { port: app.config.BOUNCE_SMTP_PORT, host: app.config.BOUNCE_SMTP_HOST },
  );
}

/**
 * Local mode only (no SMTP_URL): on a fresh database with no sources configured, ingest the bundled
 * sample batch so a newcomer sees a real digest in the local inbox. A database that sends real mail
 * never gets demo papers: it has none until a source or an ingest brings them.
 */
async function seedSampleBatch(app: App, io: CliIo): Promise<void> {
  const { config } = app;
  if (config.SMTP_URL) return;
  if (parseSources(config.SOURCES).length > 0) return;
  // With DATABASE_URL the papers go where the planners match them (PostgreSQL), not into the SQLite file.
  const r = isPostgresUrl(config.DATABASE_URL) ? await seedSampleBatchPg(config.DATABASE_URL, app) : seedSampleBatchSqlite(app);
  if (r) io.out(`fresh database: ingested the sample batch (${plural(r.papers, 'paper', 'papers')}) from samples/`);
}

function seedSampleBatchSqlite(app: App): IngestResult | undefined {
  return app.operator.hasAnyBatch() ? undefined : app.operator.ingest(loadSampleBatch());
}

async function seedSampleBatchPg(url: string, app: App): Promise<IngestResult | undefined> {
  const pool = createPool(url, { schema: app.config.DATABASE_SCHEMA, max: 1 });
  try {
    return (await hasAnyBatchPg(pool)) ? undefined : await ingestBatchPg(pool, loadSampleBatch(), app.clock);
  } finally {
    await pool.end();
  }
}

function loadSampleBatch() {
  // The sample file is in the project's own batch format.
  return parseFeed(readFileSync(SAMPLE_BATCH, 'utf8'), 'batch', {});
}
