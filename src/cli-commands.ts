// What each `digest` subcommand does, given the app. Output is plain lines for people and scripts.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import cliProgress from 'cli-progress';
import type { CliIo } from './cli-io.ts';
import type { Config } from './config.ts';
import { AppError } from './errors.ts';
import { startBounceReceiver, type BounceReceiver } from './bounces/receiver.ts';
import { bounceCounts } from './bounces/service.ts';
import { verpFrom } from './bounces/verp.ts';
import { backupDatabase } from './db/backup.ts';
import type { Db } from './db/open.ts';
import { countOverdue } from './report/overdue.ts';
import { editionStatus, sentSince } from './report/status.ts';
import { lastSlotReport } from './report/why-no-email.ts';
import { previewDigest } from './render/preview.ts';
import { plural } from './words.ts';
import { parseFeed } from './ingest/detect.ts';
import { hasAnyBatch, ingestBatch, ingestCounts } from './ingest/ingest.ts';
import { loadInput } from './ingest/load.ts';
import { listSources, parseSources, type PollReport } from './ingest/sources.ts';
import { createApp, PROJECT_ROOT, type App, type AppOptions } from './main.ts';
import { createScheduler } from './scheduler.ts';
import { importSubscribersCsv } from './subscribers/import.ts';
import { describeFailedSources, failedSources, runFailure, runPipeline } from './pipeline.ts';
import { recoverStale } from './ledger/index.ts';
import { buildServer, closeServer } from './web/server.ts';
import { consentLines, consentStatusLines, deletedHistoryLine } from './cli-consent.ts';
import { localInboxLine, newInboxToken } from './web/routes/inbox-guard.ts';

/** Whether any batch was ever ingested (the sample data is offered on a fresh database). */

export const SAMPLE_BATCH = join(PROJECT_ROOT, 'samples', 'daily-papers-sample.json');

export async function cmdIngest(
  app: App,
  io: CliIo,
  input: string,
  o: { format: 'auto' | 'batch' | 'hf' | 'arxiv'; source?: string; date?: string },
): Promise<number> {
  const batch = await loadInput(input, o.format, {
    config: app.config,
    logger: app.logger,
    clock: app.clock,
    source: o.source,
    date: o.date,
    spacer: app.spacer,
  });
  const r = ingestBatch(app.db, batch, app.clock);
  io.out(
    r.duplicate
      ? `batch ${r.batchId} (${batch.source} ${batch.date}) already ingested: nothing changed`
      : `batch ${r.batchId} (${batch.source} ${batch.date}): ${ingestCounts(r)}`,
  );
  return 0;
}

export async function cmdRun(app: App, io: CliIo, o: { dryRun: boolean; due: boolean; fetch?: boolean }): Promise<number> {
  const controller = new AbortController();
  const onSignal = () => {
    io.err('stopping: finishing the sends in flight (SIGTERM again to wait no longer)');
    controller.abort();
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  const bar = io.isTTY && !o.dryRun ? new cliProgress.SingleBar({ format: 'sending {bar} {value}/{total} {eta_formatted}', hideCursor: true }, cliProgress.Presets.shades_classic) : undefined;
  let started = false;
  try {
    const r = await runPipeline(app, {
      mode: o.due ? 'due' : 'now',
      dryRun: o.dryRun,
      fetch: o.fetch,
      signal: controller.signal,
      onProgress: (p) => {
        if (!bar) return;
        if (!started) {
          bar.start(p.total, p.done);
          started = true;
        }
        bar.setTotal(p.total);
        bar.update(p.done);
      },
    });
    bar?.stop();
    for (const line of sourceLines(r.sources)) io.out(line);
    const plan = r.plan;
    if (o.dryRun) {
      io.out(`dry run: ${plural(plan.slots, 'slot', 'slots')} due, would plan ${plural(plan.planned, 'digest', 'digests')} (nothing written, nothing sent)`);
      return 0;
    }
    if (r.recovered > 0) {
      io.out(`unknown ${r.recovered}: digests left in flight by a stopped run (outcome unknown: not resent, papers ride in the next digest)`);
    }
    const n = r.notices;
    if (n && n.sent + n.failed + n.retrying + n.unknown > 0) {
      io.out(`confirmation emails: sent ${n.sent}, failed ${n.failed}${n.retrying ? `, ${n.retrying} to retry later` : ''}${n.unknown ? `, unknown ${n.unknown}` : ''}`);
    }
    const s = r.send!;
    io.out(
      `slots ${plan.slots}: planned ${plan.planned}, sent ${s.sent}, skipped ${s.suppressed + s.unknown}, failed ${s.failed}` +
        (s.retrying ? `, ${s.retrying} to retry later` : ''),
    );
    // A relay that looked down, a database that could not be written mid-send, every source down: one line, non-zero.
    const failure = runFailure(r);
    if (failure) {
      io.err(`error: ${failure.message}`);
      return 1;
    }
    const sources = failedSources(r.sources);
    if (sources.failed.length > 0) io.err(`warning: ${plural(sources.failed.length, 'paper source', 'paper sources')} failed: ${describeFailedSources(sources.failed)}`);
    return 0;
  } finally {
    bar?.stop();
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}

/** One line per source and day; a source whose every day failed is one line (a terminal stays readable). */
function sourceLines(reports: PollReport[]): string[] {
  const { failed } = failedSources(reports);
  const lines: string[] = [];
  for (const f of failed) {
    const days = reports.filter((r) => r.source === f.source).map((r) => r.day);
    const span = days.length === 1 ? days[0] : `${plural(days.length, 'day', 'days')}, ${days[0]} to ${days[days.length - 1]}`;
    lines.push(`source ${f.source} ${span}: error (${f.reason})`);
  }
  for (const s of reports) {
    if (!failed.some((f) => f.source === s.source)) lines.push(`source ${s.source} ${s.day}: ${s.status}${s.detail ? ` (${s.detail})` : ''}`);
  }
  return lines;
}

export async function cmdSubscribe(
  app: App,
  io: CliIo,
  email: string,
  o: { topic: string[]; confirmed?: boolean; timezone?: string; hour?: number; frequency?: 'daily' | 'weekly' },
): Promise<number> {
  const r = await app.subscribers.subscribe(
    { email, topics: o.topic, timezone: o.timezone, deliveryHour: o.hour, frequency: o.frequency },
    { confirmed: Boolean(o.confirmed), sendEmail: !o.confirmed },
  );
  if (r.outcome === 'opted-out') {
    throw new AppError('OPTED_OUT', `${r.email} opted out (complaint, bounce or suppression): not mailed; see digest status ${r.email}, lift it with digest unsuppress`);
  }
  const sentWhat = r.outcome === 'already-confirmed' ? '"already subscribed" email' : 'confirmation email';
  const mail = r.emailState === 'sent' ? ` (${sentWhat} sent)` : r.emailState === 'throttled' ? ' (no email now: this address got one within the hour, or 3 today)' : '';
  const waiting = r.outcome === 'resubscribe-requested' ? ': its re-subscribe waits for the emailed link' : '';
  io.out(`${r.email}: ${r.status}${waiting}${mail}`);
  return 0;
}

export async function cmdUnsubscribe(app: App, io: CliIo, email: string): Promise<number> {
  const done = app.subscribers.unsubscribeByEmail(email);
  if (!done) throw new AppError('NOT_FOUND', `no subscriber with address ${email}`);
  io.out(`${email}: unsubscribed`);
  return 0;
}

export async function cmdSubscribers(app: App, io: CliIo): Promise<number> {
  let n = 0;
  const now = app.clock.now().getTime();
  for (const s of app.subscribers.list()) {
    n++;
    const topics = s.topics.map((t) => (t.muted ? `${t.text} (muted)` : t.text)).join(' | ');
    const paused = s.pausedUntil !== null && Date.parse(s.pausedUntil) > now ? ` (paused until ${s.pausedUntil.slice(0, 10)})` : '';
    io.out(`${s.email}\t${s.status}${paused}\t${s.frequency} ${String(s.deliveryHour).padStart(2, '0')}:00 ${s.timezone}\t${topics}`);
  }
  if (n === 0) io.out('no subscribers yet');
  return 0;
}

export async function cmdPreview(app: App, io: CliIo, email: string, o: { out?: string }): Promise<number> {
  const r = await previewDigest(app, email);
  if (!r) {
    io.out(`nothing to send to ${email} now: no new paper matches their topics`);
    return 0;
  }
  if (o.out) {
    writeFileSync(o.out, r.html);
    io.out(`${r.subject}\nwrote ${o.out} (${r.html.length} bytes, ${plural(r.shownPapers, 'paper', 'papers')} shown)`);
  } else {
    io.out(`Subject: ${r.subject}\n\n${r.text}`);
  }
  return 0;
}

export async function cmdImport(app: App, io: CliIo, file: string): Promise<number> {
  const r = await importSubscribersCsv(app, file);
  io.out(`imported ${plural(r.imported, 'subscriber', 'subscribers')} (${r.created} new, ${r.updated} updated) from ${file}`);
  // Lines not followed as written (an address with an opt-out is never confirmed), each named.
  for (const n of r.notes) io.out(`${file} line ${n.line}: ${n.message}`);
  if (r.noted > r.notes.length) io.out(`and ${r.noted - r.notes.length} more such lines`);
  return 0;
}

/** `digest status <email>`: that subscriber's last slot, and why it sent nothing when it did not. */
export async function cmdSubscriberStatus(app: App, io: CliIo, email: string): Promise<number> {
  const s = app.subscribers.findByEmail(email);
  if (!s) {
    // A deleted subscriber's opt-outs are kept by address: say why it gets nothing.
    const kept = deletedHistoryLine(app, email);
    if (!kept) throw new AppError('NOT_FOUND', `no subscriber ${email}`);
    io.out(kept);
    return 0;
  }
  const r = lastSlotReport(app.db, s.id, app.clock.now())!;
  io.out(`${s.email}\t${s.status}\tlast slot ${r.slot ?? '-'}\t${r.sent ? 'sent' : 'nothing sent'}`);
  io.out(r.message);
  for (const line of consentLines(app, s.id, s.email)) io.out(line);
  return 0;
}

export async function cmdStatus(app: App, io: CliIo, limit: number): Promise<number> {
  const rows = editionStatus(app.db, { limit });
  const overdue = countOverdue(app.db, app.clock);
  io.out(
    overdue.subscribers === 0
      ? 'overdue: none (no subscriber has matched papers waiting longer than their schedule allows)'
      : `overdue: ${overdue.subscribers === 1 ? '1 subscriber has' : `${overdue.subscribers} subscribers have`} matched papers waiting longer than their schedule allows (36 h daily, 8.5 days weekly)`,
  );
  io.out(bounceLine(app));
  for (const line of consentStatusLines(app)) io.out(line);
  if (rows.length === 0) io.out('no editions yet');
  for (const r of rows) {
    io.out(
      `${r.edition}\tplanned ${r.planned}\tsent ${r.sent}\tpending ${r.pending}\tfailed ${r.failed}\tsuppressed ${r.suppressed}\tunknown ${r.unknown}`,
    );
    for (const f of r.topFailures) io.out(`\t${f.count}× ${f.reason}`);
  }
  for (const s of listSources(app.db, parseSources(app.config.SOURCES))) {
    for (const e of s.errors) io.out(`source ${s.source} ${e.day}: ${e.error} (${plural(e.attempts, 'attempt', 'attempts')}, last ${e.at})`);
  }
  return 0;
}

export async function cmdBackup(db: Db, io: CliIo, file: string, o: { force?: boolean }): Promise<number> {
  const r = await backupDatabase(db, file, { overwrite: Boolean(o.force) });
  const mb = (r.bytes / 1024 / 1024).toFixed(1);
  io.out(
    `backup ${r.file}: ${mb} MB copied in ${r.copyMs} ms, checked in ${r.checkMs} ms: integrity ok, schema ${r.userVersion}; ` +
      [
        plural(r.counts.subscribers, 'subscriber', 'subscribers'),
        plural(r.counts.digests, 'digest', 'digests'),
        plural(r.counts.papers, 'paper', 'papers'),
        plural(r.counts.bounceEvents, 'bounce report', 'bounce reports'),
      ].join(', '),
  );
  return 0;
}

/** Bounces and complaints of the last 30 days, with the complaint rate against digests sent then. */
function bounceLine(app: App): string {
  const since = new Date(app.clock.now().getTime() - 30 * 86_400_000).toISOString();
  const c = bounceCounts(app.db, since);
  const sent = sentSince(app.db, since);
  const rate = sent > 0 ? `${((100 * c.complaint) / sent).toFixed(2)}% of ${sent} sent` : 'no digests sent';
  const line = `bounces (30 days): hard ${c.hard}, soft ${c.soft}, policy blocks ${c.policy}; complaints ${c.complaint} (${rate}; keep under 0.3%)`;
  if (c.policy === 0) return line;
  return `${line}\nalarm: ${plural(c.policy, 'digest was', 'digests were')} refused as spam or for the sender's reputation or SPF/DKIM/DMARC (policy blocks): check the sending domain and IP; the readers stay subscribed`;
}

export async function cmdSources(app: App, io: CliIo): Promise<number> {
  const specs = parseSources(app.config.SOURCES);
  if (specs.length === 0) io.out('no sources configured (set SOURCES, e.g. SOURCES=hf,arxiv:cs.LG+cs.CL)');
  for (const s of listSources(app.db, specs)) {
    io.out(`${s.source}\tlast day ${s.lastDay ?? '-'}\t${s.lastError ? `last error ${s.lastErrorDay}: ${s.lastError}` : 'no errors'}`);
  }
  return 0;
}

/** `digest serve`: web pages, the scheduler, and (with no SMTP_URL) the local mail catcher. */
export async function cmdServe(config: Config, io: CliIo, appOptions: AppOptions): Promise<number> {
  // Start-up (migrations, the write probe, the sample batch, recovery) waits for another process's lock
  // as long as any command does (DB_BUSY_TIMEOUT_MS): nothing is listening yet, and a `digest run`
  // planning next door must not make serve refuse to start.
  const app = await createApp(config, { ...appOptions, mailMode: 'serve' });
  const { logger } = app;
  seedSampleBatch(app, io);
  // Sends left in flight by a crash: say so now, not at the first tick an hour later.
  recoverStale(app.db, app.clock, { logger });
  // Confirmation emails a stopped process or a relay failure left unsent go now (then on their retry times).
  app.notices.kick();
  // From here web routes and the scheduler share this connection on one thread: a statement waits at
  // most WEB_BUSY_TIMEOUT_MS for another process's lock (better-sqlite3 waits synchronously, freezing
  // every request meanwhile); routes retry and then answer 503 + Retry-After, the tick's writers retry
  // between requests (src/web/lock-retry.ts, src/db/busy.ts).
  app.db.pragma(`busy_timeout = ${config.WEB_BUSY_TIMEOUT_MS}`);
  const running = new AbortController();
  const scheduler = createScheduler({
    cron: config.DIGEST_CRON,
    timezone: config.DIGEST_TZ,
    logger,
    tick: async () => {
      const failure = runFailure(await runPipeline(app, { mode: 'due', signal: running.signal }));
      if (failure) throw failure; // logged by the scheduler as "tick failed: <cause>"
    },
  });
  // The first digest goes out right after confirming (it takes that day's slot: the papers of the last
  // day of ingest that match); later ones at the subscriber's own hour.
  const inboxToken = newInboxToken();
  const server = buildServer({
    ...app,
    inboxToken,
    onConfirmed: (id) => scheduler.runSoon('welcome', () => runPipeline(app, { mode: 'now', onlySubscriber: id, signal: running.signal })),
  });
  await server.listen({ port: config.PORT, host: config.HOST });
  const bounces = await startBounceReceiverIfSet(app);
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
  await app.close();
  return 0;
}

/** The built-in bounce receiver, when BOUNCE_SMTP_PORT is set (config.ts requires BOUNCE_ADDRESS with it). */
async function startBounceReceiverIfSet(app: App): Promise<BounceReceiver | undefined> {
  const verp = verpFrom(app.config);
  if (app.config.BOUNCE_SMTP_PORT === undefined || !verp) return undefined;
  return startBounceReceiver(
    { db: app.db, clock: app.clock, logger: app.logger, config: app.config, verp },
    { port: app.config.BOUNCE_SMTP_PORT, host: app.config.BOUNCE_SMTP_HOST },
  );
}

/**
 * Local mode only (no SMTP_URL): on a fresh database with no sources configured, ingest the bundled
 * sample batch so a newcomer sees a real digest in the local inbox. A database that sends real mail
 * never gets demo papers: it has none until a source or an ingest brings them.
 */
function seedSampleBatch(app: App, io: CliIo): void {
  if (app.config.SMTP_URL) return;
  if (parseSources(app.config.SOURCES).length > 0) return;
  if (hasAnyBatch(app.db)) return;
  const r = ingestBatch(app.db, loadSampleBatch(), app.clock);
  io.out(`fresh database: ingested the sample batch (${plural(r.papers, 'paper', 'papers')}) from samples/`);
}

function loadSampleBatch() {
  // The sample file is in the project's own batch format.
  return parseFeed(readFileSync(SAMPLE_BATCH, 'utf8'), 'batch', {});
}
