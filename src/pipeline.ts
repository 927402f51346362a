// The one way papers become emails: fetch sources -> match -> plan -> send, then the ledger's upkeep
// (retention, src/ledger/; unused queries) and the blackout check. Every caller goes through here: the scheduler's tick
// (mode 'due'), `digest run` ('now', or 'due' with --due), the first digest after confirming ('now' for
// one subscriber, no fetching) and the benchmark (which times the exported stages one by one).
// On PostgreSQL (DATABASE_URL=postgres://…) the same stages up to planning run as `digest plan`
// (src/plan/postgres/edition.ts: sources into PostgreSQL, match in memory, plan), and `digest worker` sends.
import type { Clock } from './clock.ts';
import type { Config } from './config.ts';
import { retryWhileBusy } from './db/busy.ts';
import type { Db } from './db/open.ts';
import { AppError } from './errors.ts';
import type { HostSpacer } from './ingest/fetch.ts';
import { createSourcePoller, parseSources, type PollReport } from './ingest/sources.ts';
import type { Links } from './links.ts';
import type { Logger } from './log.ts';
import type { Mailer } from './mail/types.ts';
import { planDigests, type PlanMode, type PlanResult } from './plan/planner.ts';
import { pruneLedger, recoverStale } from './ledger/index.ts';
import { countOverdue, type OverdueReport } from './report/overdue.ts';
import { sendPending, type SendProgress, type SendSummary } from './send/sender.ts';
import { matchPending, removeUnusedQueries } from './match/matcher.ts';
import type { NoticeRunSummary, NoticeSender } from './notices/sender.ts';
import type { Renderer } from './render/render.ts';

export interface PipelineOptions {
  /** 'due': only subscribers whose slot has come (the scheduler); 'now': everyone's slot is now. */
  mode: PlanMode;
  /** Fetch, match and plan inside a savepoint that is rolled back; send nothing. */
  dryRun?: boolean;
  /** Plan only this subscriber (the first digest right after confirming); no source fetching. */
  onlySubscriber?: number;
  /** false: leave the sources alone (`digest run --no-fetch`); match and send what is already ingested. */
  fetch?: boolean;
  signal?: AbortSignal;
  onProgress?: (p: SendProgress) => void;
}

export interface PipelineReport {
  sources: PollReport[];
  matched: { queries: number; matches: number; ms: number };
  plan: PlanResult;
  send: SendSummary | undefined;
  /** Confirmation emails due (new, or waiting for a retry after the relay failed) sent by this run. */
  notices: NoticeRunSummary | undefined;
  /** Rows left 'sending' by a dead process, now 'unknown'. */
  recovered: number;
  /** Paper lists removed after DIGEST_RETENTION_DAYS. */
  pruned: number;
  /** Distinct topic queries no topic uses any more, dropped with their matches. */
  prunedQueries: number;
  overdue: OverdueReport | undefined;
}

/** What a run needs: the app's parts (src/main.ts makes each once) and, inside the pipeline only, its database connection. */
export interface PipelineDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  config: Config;
  mailer: Mailer;
  renderer: Renderer;
  links: Links;
  /** The SMTP server mail goes to (starts the local catcher when needed). */
  smtpUrl(): Promise<string>;
  notices: NoticeSender;
  spacer?: HostSpacer;
}
type Deps = PipelineDeps;

/** Stage 1: each configured source's missing days (nothing when none is configured). */
export async function fetchSources(app: Deps): Promise<PollReport[]> {
  const specs = parseSources(app.config.SOURCES);
  if (specs.length === 0) return [];
  app.logger.info({ sources: specs.map((s) => s.name) }, 'asking the paper sources');
  return createSourcePoller({ db: app.db, config: app.config, clock: app.clock, logger: app.logger, spacer: app.spacer }).poll();
}

/** Stage 2: each distinct topic query against the papers it has not seen yet. */
export const matchNew = matchPending;

/** Stage 3: the ledger rows of every slot that has come (see src/plan/slots.ts). */
export function plan(app: Deps, mode: PlanMode, onlySubscriber?: number, inSavepoint = false): Promise<PlanResult> {
  return planDigests(app.db, {
    clock: app.clock,
    mode,
    onlySubscriber,
    logger: app.logger,
    yieldBetweenChunks: !inSavepoint,
    busyWaitMs: app.config.DB_BUSY_TIMEOUT_MS,
  });
}

/** Stage 4: everything the ledger has to send now (claims, retries, relay-down pause, threads). */
export function send(app: Deps, opts: { signal?: AbortSignal; onProgress?: (p: SendProgress) => void; retryWindowMs?: number } = {}) {
  const { db, mailer, renderer, links, clock, config, logger } = app;
  // smtpUrl lets big runs add worker threads (SEND_WORKERS), each with its own pool to the same relay.
  return sendPending({ db, mailer, renderer, links, clock, config, logger, smtpUrl: app.smtpUrl }, opts);
}

export async function runPipeline(app: Deps, opts: PipelineOptions): Promise<PipelineReport> {
  const { db, clock, logger, config } = app;
  const one = opts.onlySubscriber;
  const sources = !opts.dryRun && one === undefined && opts.fetch !== false ? await fetchSources(app) : [];

  if (opts.dryRun) {
    db.exec('SAVEPOINT dry_run');
    try {
      const matched = matchNew(db);
      const planned = await plan(app, opts.mode, one, true);
      return { sources, matched, plan: planned, send: undefined, notices: undefined, recovered: 0, pruned: 0, prunedQueries: 0, overdue: undefined };
    } finally {
      db.exec('ROLLBACK TO dry_run; RELEASE dry_run');
    }
  }

  // Writes wait for another process's lock by trying again (see db/busy.ts), up to DB_BUSY_TIMEOUT_MS.
  const wait = config.DB_BUSY_TIMEOUT_MS;
  const recovered = await retryWhileBusy(() => recoverStale(db, clock, { logger }), wait);
  const matched = await retryWhileBusy(() => matchNew(db), wait);
  const planned = await plan(app, opts.mode, one);
  logger.info({ matched, plan: planned }, 'planned');
  // Confirmation emails due (never sent because the relay was down when asked for, or waiting for a
  // retry) go first: a person is waiting for each.
  const notices = await app.notices.sendDue();
  if (notices.sent + notices.failed + notices.retrying + notices.unknown > 0) logger.info({ notices }, 'confirmation emails');
  const sent = await send(app, { signal: opts.signal, onProgress: opts.onProgress });
  logger.info({ send: sent }, 'sent');
  // The database could not be written mid-send: no upkeep now (it would fail the same way).
  if (one !== undefined || sent.storageFault) {
    return { sources, matched, plan: planned, send: sent, notices, recovered, pruned: 0, prunedQueries: 0, overdue: undefined };
  }

  const pruned = await pruneLedger(db, clock, config.DIGEST_RETENTION_DAYS);
  // Topics edited away or whose subscriber was deleted leave their query behind; it would be matched
  // against every new paper forever. One indexed NOT EXISTS per query (topics_query): ~1 ms per 10k queries.
  const prunedQueries = await retryWhileBusy(() => removeUnusedQueries(db), wait);
  const overdue = await retryWhileBusy(() => countOverdue(db, clock), wait);
  warnIfOverdue(logger, overdue);
  return { sources, matched, plan: planned, send: sent, notices, recovered, pruned, prunedQueries, overdue };
}

/** Every tick's warning while readers have matched papers waiting past their schedule (both engines' ticks). */
export function warnIfOverdue(logger: Logger, overdue: OverdueReport | undefined): void {
  if (overdue && overdue.subscribers > 0) {
    logger.warn({ overdue: overdue.subscribers }, 'subscribers have matched papers waiting longer than their schedule allows (see digest status)');
  }
}

/** A source asked this run whose every answer was an error, with its first reason. */
export interface FailedSource {
  source: string;
  reason: string;
}

/** The sources that failed in this run, and whether every source asked failed (none brought anything). */
export function failedSources(reports: readonly PollReport[]): { failed: FailedSource[]; all: boolean } {
  const bySource = new Map<string, PollReport[]>();
  for (const r of reports) bySource.set(r.source, [...(bySource.get(r.source) ?? []), r]);
  const failed: FailedSource[] = [];
  for (const [source, rs] of bySource) {
    if (rs.every((r) => r.status === 'error')) failed.push({ source, reason: rs[0]!.detail ?? 'failed' });
  }
  return { failed, all: failed.length > 0 && failed.length === bySource.size };
}

/** "hf (GET … connection refused); arxiv:cs.LG (…)": each failed source with its reason, for one line. */
export function describeFailedSources(failed: readonly FailedSource[]): string {
  return failed.map((f) => `${f.source} (${f.reason})`).join('; ');
}

/**
 * Why a run that returned did not do its work, as one error (the CLI prints it and exits non-zero, the
 * scheduler logs it): the database could not be written mid-send, the relay looked down, or every paper
 * source asked failed. Else undefined.
 */
export function runFailure(r: PipelineReport): AppError | undefined {
  const s = r.send;
  if (s?.storageFault) {
    return new AppError(s.storageFaultCode ?? 'DB_FAULT', `sending stopped: ${s.storageFault}; unsent digests wait for the next run`, {
      temporary: true,
      });
  }
  if (s?.paused) {
    return new AppError('RELAY_DOWN', `sending paused: ${s.pauseReason ?? 'the SMTP relay is not answering'}; run again when it is back`, {
      temporary: true,
      });
  }
  if (r.notices?.relayDown !== undefined) {
    return new AppError('RELAY_DOWN', `confirmation emails not sent: the SMTP relay could not be used (${r.notices.relayDown}); they are retried until it is back`, {
      temporary: true,
      });
  }
  const sources = failedSources(r.sources);
  if (sources.all) {
    return new AppError('SOURCES_FAILED', `every paper source failed, nothing fetched: ${describeFailedSources(sources.failed)}`, {
      temporary: true,
      });
  }
  return undefined;
}
