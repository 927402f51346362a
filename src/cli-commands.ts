// What each `digest` subcommand does, given the app. Output is plain lines for people and scripts.
import { writeFileSync } from 'node:fs';
import cliProgress from 'cli-progress';
import { stopSendsOnSignal, type CliIo } from './cli-io.ts';
import { AppError } from './errors.ts';
import { backupDatabase } from './db/backup.ts';
import type { Db } from './db/open.ts';
import type { OperatorFigures } from './report/figures.ts';
import type { SourceFailures } from './report/reads.ts';
import type { EditionStatus } from './report/status.ts';
import type { Notice } from './notices/repo.ts';
import type { ConsentEvent } from './consent/history.ts';
import type { LastSlotReport } from './report/why-no-email.ts';
import { plural } from './words.ts';
import { ingestCounts } from './ingest/ingest.ts';
import { loadInput } from './ingest/load.ts';
import { parseSources, type PollReport, type SourceListing } from './ingest/sources.ts';
import type { App } from './main.ts';
import type { Clock } from './clock.ts';
import type { OperatorRoster } from './operator/roster.ts';
import type { Config } from './config.ts';
import type { Logger } from './log.ts';
import { describeFailedSources, failedSources, runFailure, type PipelineReport } from './pipeline.ts';
import { consentLines, consentStatusLines, deletedHistoryLine } from './cli-consent.ts';

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
  const r = app.operator.ingest(batch);
  io.out(
    r.duplicate
      ? `batch ${r.batchId} (${batch.source} ${batch.date}) already ingested: nothing changed`
      : `batch ${r.batchId} (${batch.source} ${batch.date}): ${ingestCounts(r)}`,
  );
  return 0;
}

export async function cmdRun(app: App, io: CliIo, o: { dryRun: boolean; due: boolean; fetch?: boolean }): Promise<number> {
  const controller = new AbortController();
  const offSignals = stopSendsOnSignal(io, controller);
  const bar = io.isTTY && !o.dryRun ? new cliProgress.SingleBar({ format: 'sending {bar} {value}/{total} {eta_formatted}', hideCursor: true }, cliProgress.Presets.shades_classic) : undefined;
  let started = false;
  try {
    const r = await app.pipeline.run({
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
    return reportRun(io, r, o.dryRun);
  } finally {
    bar?.stop();
    offSignals();
  }
}

/** `digest run`'s lines and exit code, from either engine's report (pipeline.ts, pipeline-postgres.ts). */
export function reportRun(io: CliIo, r: PipelineReport, dryRun: boolean): number {
  for (const line of sourceLines(r.sources)) io.out(line);
  const plan = r.plan;
  if (dryRun) {
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
  roster: OperatorRoster,
  io: CliIo,
  email: string,
  o: { topic: string[]; confirmed?: boolean; timezone?: string; hour?: number; frequency?: 'daily' | 'weekly' },
): Promise<number> {
  const r = await roster.subscribe({ email, topics: o.topic, timezone: o.timezone, deliveryHour: o.hour, frequency: o.frequency }, { confirmed: Boolean(o.confirmed) });
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

/** `digest unsubscribe` when the readers are in PostgreSQL; dated by the command's clock, as on SQLite. */
export async function cmdUnsubscribePg(config: Config, logger: Logger, clock: Clock, io: CliIo, email: string): Promise<number> {
  const { createPool } = await import('./db/postgres/pool.ts');
  const { unsubscribeByEmailPg } = await import('./subscribers/postgres/roster.ts');
  const pool = createPool(config.DATABASE_URL!, { schema: config.DATABASE_SCHEMA, max: 1 });
  try {
    if (!(await unsubscribeByEmailPg(pool, email, clock.now(), logger))) throw new AppError('NOT_FOUND', `no subscriber with address ${email}`);
  } finally {
    await pool.end();
  }
  io.out(`${email}: unsubscribed`);
  return 0;
}

export async function cmdSubscribers(roster: OperatorRoster, clock: Clock, io: CliIo): Promise<number> {
  let n = 0;
  const now = clock.now().getTime();
  for await (const s of roster.list()) {
    n++;
    const topics = s.topics.map((t) => (t.muted ? `${t.text} (muted)` : t.text)).join(' | ');
    const paused = s.pausedUntil !== null && Date.parse(s.pausedUntil) > now ? ` (paused until ${s.pausedUntil.slice(0, 10)})` : '';
    io.out(`${s.email}\t${s.status}${paused}\t${s.frequency} ${String(s.deliveryHour).padStart(2, '0')}:00 ${s.timezone}\t${topics}`);
  }
  if (n === 0) io.out('no subscribers yet');
  return 0;
}

export async function cmdPreview(app: { operator: Pick<App['operator'], 'preview'> }, io: CliIo, email: string, o: { out?: string }): Promise<number> {
  const r = await app.operator.preview(email);
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

export async function cmdImport(roster: OperatorRoster, io: CliIo, file: string): Promise<number> {
  const r = await roster.importCsv(file);
  io.out(`imported ${plural(r.imported, 'subscriber', 'subscribers')} (${r.created} new, ${r.updated} updated) from ${file}`);
  // Lines not followed as written (an address with an opt-out is never confirmed), each named.
  for (const n of r.notes) io.out(`${file} line ${n.line}: ${n.message}`);
  if (r.noted > r.notes.length) io.out(`and ${r.noted - r.notes.length} more such lines`);
  return 0;
}

/** What `digest status <email>` reads: the SQLite app's services (sqliteSubscriberStatus), or PostgreSQL's (cli/commands/status-postgres.ts). */
export interface SubscriberStatusSource {
  findByEmail(email: string): Promise<{ id: number; email: string; status: string } | undefined>;
  lastSlot(subscriberId: number): Promise<LastSlotReport | undefined>;
  lastNotice(subscriberId: number): Promise<Notice | undefined>;
  consentHistory(email: string, limit: number): Promise<ConsentEvent[]>;
}

export function sqliteSubscriberStatus(app: App): SubscriberStatusSource {
  return {
    findByEmail: async (email) => app.subscribers.findByEmail(email),
    lastSlot: async (id) => app.operator.lastSlot(id),
    lastNotice: async (id) => app.operator.lastNotice(id),
    consentHistory: async (email, limit) => app.operator.consentHistory(email, limit),
  };
}

/** `digest status <email>`: that subscriber's last slot, and why it sent nothing when it did not (both engines' lines). */
export async function cmdSubscriberStatus(source: SubscriberStatusSource, io: CliIo, email: string): Promise<number> {
  const s = await source.findByEmail(email);
  if (!s) {
    // A deleted subscriber's opt-outs are kept by address: say why it gets nothing.
    const kept = await deletedHistoryLine(email, (e) => source.consentHistory(e, 10));
    if (!kept) throw new AppError('NOT_FOUND', `no subscriber ${email}`);
    io.out(kept);
    return 0;
  }
  const r = (await source.lastSlot(s.id))!;
  // The email's state, not "sent" for every row planned: on PostgreSQL a row waits for a `digest worker`.
  io.out(`${s.email}\t${s.status}\tlast slot ${r.slot ?? '-'}\t${r.sent ? (r.state ?? 'sent') : 'nothing sent'}`);
  io.out(r.message);
  for (const line of consentLines(await source.lastNotice(s.id), await source.consentHistory(s.email, 10))) io.out(line);
  return 0;
}

/** What `digest status` reads: the SQLite app's operator service, or PostgreSQL's reads (cli/commands/status-postgres.ts). */
export interface StatusSource {
  figures(): OperatorFigures | Promise<OperatorFigures>;
  editions(limit: number): EditionStatus[] | Promise<EditionStatus[]>;
  lastNoticeFailure(): Notice | undefined | Promise<Notice | undefined>;
  sources(): SourceFailures[] | Promise<SourceFailures[]>;
}

export async function cmdStatus(app: { operator: StatusSource }, io: CliIo, limit: number): Promise<number> {
  const rows = await app.operator.editions(limit);
  const figures = await app.operator.figures();
  const overdue = figures.overdue!;
  io.out(
    overdue.subscribers === 0
      ? 'overdue: none (no subscriber has matched papers waiting longer than their schedule allows)'
      : `overdue: ${overdue.subscribers === 1 ? '1 subscriber has' : `${overdue.subscribers} subscribers have`} matched papers waiting longer than their schedule allows (36 h daily, 8.5 days weekly)`,
  );
  io.out(bounceLine(figures));
  for (const line of consentStatusLines(figures, await app.operator.lastNoticeFailure())) io.out(line);
  if (rows.length === 0) io.out('no editions yet');
  for (const r of rows) {
    io.out(
      `${r.edition}\tplanned ${r.planned}\tsent ${r.sent}\tpending ${r.pending}\tfailed ${r.failed}\tsuppressed ${r.suppressed}\tunknown ${r.unknown}`,
    );
    for (const f of r.topFailures) io.out(`\t${f.count}× ${f.reason}`);
  }
  for (const s of await app.operator.sources()) {
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
function bounceLine(f: OperatorFigures): string {
  const c = f.bounces!;
  const rate = f.complaintPercent !== undefined ? `${f.complaintPercent.toFixed(2)}% of ${f.sent} sent` : 'no digests sent';
  const line = `bounces (30 days): hard ${c.hard}, soft ${c.soft}, policy blocks ${c.policy}; complaints ${c.complaint} (${rate}; keep under 0.3%)`;
  if (c.policy === 0) return line;
  return `${line}\nalarm: ${plural(c.policy, 'digest was', 'digests were')} refused as spam or for the sender's reputation or SPF/DKIM/DMARC (policy blocks): check the sending domain and IP; the readers stay subscribed`;
}

/** What `digest sources` reads: the SQLite app's operator service, or PostgreSQL's reads (cli/commands/sources-postgres.ts). */
export interface SourcesSource {
  config: { SOURCES: string };
  operator: { sources(): SourceListing[] | Promise<SourceListing[]> };
}

export async function cmdSources(app: SourcesSource, io: CliIo): Promise<number> {
  if (parseSources(app.config.SOURCES).length === 0) io.out('no sources configured (set SOURCES, e.g. SOURCES=hf,arxiv:cs.LG+cs.CL)');
  for (const s of await app.operator.sources()) {
    io.out(`${s.source}\tlast day ${s.lastDay ?? '-'}\t${s.lastError ? `last error ${s.lastErrorDay}: ${s.lastError}` : 'no errors'}`);
  }
  return 0;
}
