// `digest run` on PostgreSQL (DATABASE_URL=postgres://…): one tick in this process, as runPipeline is on
// SQLite - fetch the sources into PostgreSQL, match, plan (the PostgreSQL planner under its advisory lock,
// plan/postgres/edition.ts), send the confirmation emails due, then send every claimable digest through the
// worker loop `digest worker --once` runs (send/postgres/worker.ts). Safe beside running workers and
// another `run`: planning is once per (reader, slot) and every claim is compare-and-set, so a slot is never
// sent twice. It answers with a PipelineReport, so the command prints SQLite's lines (cli-commands.ts reportRun).
import type pg from 'pg';
import type { Clock } from './clock.ts';
import type { Config } from './config.ts';
import type { HostSpacer } from './ingest/fetch.ts';
import { postgresSourcePoll } from './ingest/postgres/source-poll.ts';
import type { Logger } from './log.ts';
import type { Mailer } from './mail/types.ts';
import { PgLedger } from './ledger/postgres/ledger.ts';
import { ClaimantLock } from './ledger/postgres/liveness.ts';
import { postgresBounceStore } from './bounces/postgres/store.ts';
import type { NoticeSender } from './notices/sender.ts';
import type { Renderer } from './render/render.ts';
import { dryRunEditionPg, planEditionPg } from './plan/postgres/edition.ts';
import { countOverduePg } from './report/postgres/reads.ts';
import { createPgDigests } from './send/postgres/pg-digests.ts';
import { runPgWorker, type PgWorkerResult } from './send/postgres/worker.ts';
import { emptySummary, type SendSummary } from './send/send-types.ts';
import { warnIfOverdue, type PipelineOptions, type PipelineReport } from './pipeline.ts';

export interface PgPipelineDeps {
  pool: pg.Pool;
  config: Config;
  clock: Clock;
  logger: Logger;
  mailer: Mailer;
  /** PostgreSQL's confirmation emails (the door's sender over the notices table). */
  notices: NoticeSender;
  spacer?: HostSpacer;
  /** The app's renderer (making one costs ~0.5 s a run); else the run makes its own. */
  renderer?: Renderer;
}

export type PgRunOptions = Pick<PipelineOptions, 'mode' | 'dryRun' | 'fetch' | 'signal'>;

export async function runPipelinePg(d: PgPipelineDeps, o: PgRunOptions): Promise<PipelineReport & { planRan: boolean }> {
  const { pool, config, clock, logger } = d;
  if (o.dryRun) {
    const r = await dryRunEditionPg(pool, { clock, mode: o.mode, logger });
    return { ...r, planRan: r.plan.ran, send: undefined, notices: undefined, recovered: 0, pruned: 0, prunedQueries: 0, overdue: undefined };
  }
  const poll = o.fetch === false ? undefined : postgresSourcePoll(pool, config, logger, clock, d.spacer);
  // The upkeep (retention, unused queries) runs in planEditionPg, by this tick's planner only. Another process
  // planning now (a second run, `digest plan`, serve's tick) is waited for: its rows are claimable once it
  // commits, and this run sends them too (claiming at once found none of them).
  const edition = await planEditionPg(pool, { clock, mode: o.mode, logger, poll, retentionDays: config.DIGEST_RETENTION_DAYS, waitForPlanner: true });
  logger.info({ matched: edition.matched, plan: edition.plan }, 'planned');
  // Confirmation emails due go first, as on SQLite: a person is waiting for each.
  const notices = await d.notices.sendDue();
  let recovered = 0;
  const worker = await sendClaimable(d, o.signal, (n) => (recovered += n));
  logger.info({ send: worker }, 'sent');
  const overdue = await countOverduePg(pool, clock);
  warnIfOverdue(logger, overdue);
  const send = toSendSummary(worker, o.signal);
  const { pruned = 0, prunedQueries = 0 } = edition.upkeep ?? {};
  return { ...edition, planRan: edition.plan.ran, send, notices, recovered, pruned, prunedQueries, overdue };
}

/** The worker loop until nothing is claimable, holding a claimant's liveness lock (as `digest worker --once`). */
async function sendClaimable(d: PgPipelineDeps, signal: AbortSignal | undefined, onRecovered: (n: number) => void): Promise<PgWorkerResult> {
  const { pool, config, logger, clock } = d;
  const ledger = new PgLedger(pool);
  const lock = new ClaimantLock(config.DATABASE_URL!, ledger.claimant, config.DATABASE_SCHEMA);
  const digests = await createPgDigests(pool, config, logger, d.renderer);
  try {
    await lock.hold();
    return await runPgWorker({
      pool,
      ledger,
      mailer: d.mailer,
      digests,
      bounces: postgresBounceStore({ pool, clock, logger, config }),
      hardFailuresToSuppress: config.HARD_FAILURES_TO_SUPPRESS,
      lanes: config.SMTP_POOL_SIZE,
      retry: config,
      retryWindowMs: config.SMTP_RETRY_WINDOW_MS,
      untilEmpty: true,
      stopping: () => signal?.aborted === true,
      relayDownAfter: config.RELAY_DOWN_AFTER,
      onRecovered,
      clock,
    });
  } finally {
    digests.close();
    await lock.release();
  }
}

/** The worker's counts as SQLite's send summary: 'skipped' there is suppressed + unknown, as here. */
function toSendSummary(w: PgWorkerResult, signal: AbortSignal | undefined): SendSummary {
  return {
    ...emptySummary(),
    sent: w.sent,
    failed: w.failed,
    retrying: w.retried,
    suppressed: w.skipped,
    unknown: w.unknown,
    paused: w.relayDown !== undefined,
    ...(w.relayDown !== undefined ? { pauseReason: w.relayDown } : {}),
    aborted: signal?.aborted === true,
  };
}
