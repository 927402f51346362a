// The one way papers become emails: fetch sources -> match -> plan -> send, then the ledger's upkeep
// (retention, unused queries) and the blackout check. Every caller goes through here: the scheduler's tick
// (mode 'due'), `digest run` ('now', or 'due' with --due), the first digest after confirming ('now' for
// one subscriber, no fetching) and the benchmark (which times the exported stages one by one).
import { retryWhileBusy } from './db/busy.ts';
import { AppError } from './errors.ts';
import type { App } from './main.ts';
import { createSourcePoller, parseSources, type PollReport } from './ingest/sources.ts';
import { planDigests, type PlanMode, type PlanResult } from './plan/planner.ts';
import { pruneLedger } from './plan/retention.ts';
import { countOverdue, type OverdueReport } from './report/overdue.ts';
import { recoverStale, sendPending, type SendProgress, type SendSummary } from './send/sender.ts';
import { matchPending, removeUnusedQueries } from './topics/matcher.ts';

export interface PipelineOptions {
  /** 'due': only subscribers whose slot has come (the scheduler); 'now': everyone's slot is now. */
  mode: PlanMode;
  /** Fetch, match and plan inside a savepoint that is rolled back; send nothing. */
  dryRun?: boolean;
  /** Plan only this subscriber (the first digest right after confirming); no source fetching. */
  onlySubscriber?: number;
  signal?: AbortSignal;
  onProgress?: (p: SendProgress) => void;
}

export interface PipelineReport {
  sources: PollReport[];
  matched: { queries: number; matches: number; ms: number };
  plan: PlanResult;
  send: SendSummary | undefined;
  /** Rows left 'sending' by a dead process, now 'unknown'. */
  recovered: number;
  /** Paper lists removed after DIGEST_RETENTION_DAYS. */
  pruned: number;
  /** Distinct topic queries no topic uses any more, dropped with their matches. */
  prunedQueries: number;
  overdue: OverdueReport | undefined;
}

type Deps = Pick<App, 'db' | 'clock' | 'logger' | 'config' | 'mailer' | 'renderer' | 'links' | 'smtpUrl'> & Partial<Pick<App, 'spacer'>>;

/** Stage 1: each configured source's missing days (nothing when none is configured). */
export async function fetchSources(app: Deps): Promise<PollReport[]> {
  if (parseSources(app.config.SOURCES).length === 0) return [];
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
  const sources = !opts.dryRun && one === undefined ? await fetchSources(app) : [];

  if (opts.dryRun) {
    db.exec('SAVEPOINT dry_run');
    try {
      const matched = matchNew(db);
      const planned = await plan(app, opts.mode, one, true);
      return { sources, matched, plan: planned, send: undefined, recovered: 0, pruned: 0, prunedQueries: 0, overdue: undefined };
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
  const sent = await send(app, { signal: opts.signal, onProgress: opts.onProgress });
  logger.info({ send: sent }, 'sent');
  // The database could not be written mid-send: no upkeep now (it would fail the same way).
  if (one !== undefined || sent.storageFault) {
    return { sources, matched, plan: planned, send: sent, recovered, pruned: 0, prunedQueries: 0, overdue: undefined };
  }

  const pruned = await pruneLedger(db, clock, config.DIGEST_RETENTION_DAYS);
  // Topics edited away or whose subscriber was deleted leave their query behind; it would be matched
  // against every new paper forever. One indexed NOT EXISTS per query (topics_query): ~1 ms per 10k queries.
  const prunedQueries = await retryWhileBusy(() => removeUnusedQueries(db), wait);
  const overdue = await retryWhileBusy(() => countOverdue(db, clock), wait);
  if (overdue.subscribers > 0) {
    logger.warn(
      { overdue: overdue.subscribers },
      'subscribers have matched papers waiting longer than their schedule allows (see digest status)',
    );
  }
  return { sources, matched, plan: planned, send: sent, recovered, pruned, prunedQueries, overdue };
}

/**
 * Why a run that returned did not do its work, as one error (the CLI prints it and exits non-zero, the
 * scheduler logs it): the database could not be written mid-send, or the relay looked down. Else undefined.
 */
export function runFailure(r: PipelineReport): AppError | undefined {
  const s = r.send;
  if (!s) return undefined;
  if (s.storageFault) {
    return new AppError(s.storageFaultCode ?? 'DB_FAULT', `sending stopped: ${s.storageFault}; unsent digests wait for the next run`, {
      temporary: true,
      status: 503,
    });
  }
  if (s.paused) {
    return new AppError('RELAY_DOWN', `sending paused: ${s.pauseReason ?? 'the SMTP relay is not answering'}; run again when it is back`, {
      temporary: true,
      status: 503,
    });
  }
  return undefined;
}
