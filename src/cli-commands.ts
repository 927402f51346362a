// What each `digest` subcommand does, given the app. Output is plain lines for people and scripts.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import cliProgress from 'cli-progress';
import type { CliIo } from './cli-io.ts';
import type { Config } from './config.ts';
import { AppError } from './errors.ts';
import { countOverdue } from './report/overdue.ts';
import { editionStatus } from './report/status.ts';
import { lastSlotReport } from './report/why-no-email.ts';
import { previewDigest } from './render/preview.ts';
import { parseFeed } from './ingest/detect.ts';
import { ingestBatch } from './ingest/ingest.ts';
import { loadInput } from './ingest/load.ts';
import { listSources, parseSources } from './ingest/sources.ts';
import { createApp, PROJECT_ROOT, type App, type AppOptions } from './main.ts';
import { createScheduler } from './scheduler.ts';
import { importSubscribersCsv } from './subscribers/import.ts';
import { runPipeline } from './pipeline.ts';
import { buildServer } from './web/server.ts';

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
  });
  const r = ingestBatch(app.db, batch, app.clock);
  io.out(
    r.duplicate
      ? `batch ${r.batchId} (${batch.source} ${batch.date}) already ingested: nothing changed`
      : `batch ${r.batchId} (${batch.source} ${batch.date}): ${r.papers} papers, ${r.newPapers} new, ${r.updatedPapers} updated`,
  );
  return 0;
}

export async function cmdRun(app: App, io: CliIo, o: { dryRun: boolean; due: boolean }): Promise<number> {
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
    for (const s of r.sources) io.out(`source ${s.source} ${s.day}: ${s.status}${s.detail ? ` (${s.detail})` : ''}`);
    const plan = r.plan;
    if (o.dryRun) {
      io.out(`dry run: ${plan.slots} slots due, would plan ${plan.planned} digests (nothing written, nothing sent)`);
      return 0;
    }
    const s = r.send!;
    io.out(
      `slots ${plan.slots}: planned ${plan.planned}, sent ${s.sent}, skipped ${s.suppressed + s.unknown}, failed ${s.failed}` +
        (s.retrying ? `, ${s.retrying} to retry later` : ''),
    );
    if (s.paused) {
      io.err(`error: sending paused: ${s.pauseReason ?? 'the SMTP relay is not answering'}; run again when it is back`);
      return 1;
    }
    return 0;
  } finally {
    bar?.stop();
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
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
  io.out(`${r.email}: ${r.status}${r.status === 'pending' ? ' (confirmation email sent)' : ''}`);
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
  for (const s of app.subscribers.list()) {
    n++;
    const topics = s.topics.map((t) => (t.muted ? `${t.text} (muted)` : t.text)).join(' | ');
    io.out(`${s.email}\t${s.status}\t${s.frequency} ${String(s.deliveryHour).padStart(2, '0')}:00 ${s.timezone}\t${topics}`);
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
    io.out(`${r.subject}\nwrote ${o.out} (${r.html.length} bytes, ${r.shownPapers} papers shown)`);
  } else {
    io.out(`Subject: ${r.subject}\n\n${r.text}`);
  }
  return 0;
}

export async function cmdImport(app: App, io: CliIo, file: string): Promise<number> {
  const r = await importSubscribersCsv(app, file);
  io.out(`imported ${r.imported} subscribers (${r.created} new, ${r.updated} updated) from ${file}`);
  return 0;
}

/** `digest status <email>`: that subscriber's last slot, and why it sent nothing when it did not. */
export async function cmdSubscriberStatus(app: App, io: CliIo, email: string): Promise<number> {
  const s = app.subscribers.findByEmail(email);
  if (!s) throw new AppError('NOT_FOUND', `no subscriber ${email}`);
  const r = lastSlotReport(app.db, s.id, app.clock.now())!;
  io.out(`${s.email}\t${s.status}\tlast slot ${r.slot ?? '-'}\t${r.sent ? 'sent' : 'nothing sent'}`);
  io.out(r.message);
  return 0;
}

export async function cmdStatus(app: App, io: CliIo, limit: number): Promise<number> {
  const rows = editionStatus(app.db, { limit });
  const overdue = countOverdue(app.db, app.clock);
  io.out(
    overdue.subscribers === 0
      ? 'overdue: none (no subscriber has matched papers waiting longer than their schedule allows)'
      : `overdue: ${overdue.subscribers} subscribers have matched papers waiting longer than their schedule allows (36 h daily, 8.5 days weekly)`,
  );
  if (rows.length === 0) io.out('no editions yet');
  for (const r of rows) {
    io.out(
      `${r.edition}\tplanned ${r.planned}\tsent ${r.sent}\tpending ${r.pending}\tfailed ${r.failed}\tsuppressed ${r.suppressed}\tunknown ${r.unknown}`,
    );
    for (const f of r.topFailures) io.out(`\t${f.count}× ${f.reason}`);
  }
  for (const s of listSources(app.db, parseSources(app.config.SOURCES))) {
    for (const e of s.errors) io.out(`source ${s.source} ${e.day}: ${e.error} (${e.attempts} attempts, last ${e.at})`);
  }
  return 0;
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
  const app = await createApp(config, { ...appOptions, mailMode: 'serve' });
  const { logger } = app;
  seedSampleBatch(app, io);
  const running = new AbortController();
  const scheduler = createScheduler({
    cron: config.DIGEST_CRON,
    timezone: config.DIGEST_TZ,
    logger,
    tick: () => runPipeline(app, { mode: 'due', signal: running.signal }),
  });
  // The first digest goes out right after confirming (it takes that day's slot: the papers of the last
  // day of ingest that match); later ones at the subscriber's own hour.
  const server = buildServer({
    ...app,
    onConfirmed: (id) => scheduler.runSoon('welcome', () => runPipeline(app, { mode: 'now', onlySubscriber: id, signal: running.signal })),
  });
  await server.listen({ port: config.PORT, host: config.HOST });
  scheduler.start();
  io.out(`paper digest at ${config.PUBLIC_URL}${app.inbox ? ` — local inbox at ${config.PUBLIC_URL}/inbox` : ''}`);

  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  logger.info('shutting down: finishing the sends in flight');
  running.abort();
  await scheduler.stop();
  await server.close();
  await app.close();
  return 0;
}

/**
 * Local mode only (no SMTP_URL): on a fresh database with no sources configured, ingest the bundled
 * sample batch so a newcomer sees a real digest in the local inbox. A database that sends real mail
 * never gets demo papers: it has none until a source or an ingest brings them.
 */
function seedSampleBatch(app: App, io: CliIo): void {
  if (app.config.SMTP_URL) return;
  if (parseSources(app.config.SOURCES).length > 0) return;
  const has = app.db.prepare('SELECT 1 FROM batches LIMIT 1').get();
  if (has) return;
  const r = ingestBatch(app.db, loadSampleBatch(), app.clock);
  io.out(`fresh database: ingested the sample batch (${r.papers} papers) from samples/`);
}

function loadSampleBatch() {
  // The sample file is in the project's own batch format.
  return parseFeed(readFileSync(SAMPLE_BATCH, 'utf8'), 'batch', {});
}
