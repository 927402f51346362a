// `digest worker` on PostgreSQL: the worker loop (worker.ts) as a command, with the service's settings.
// It claims, delivers over SMTP_URL with the project's mailer, and records, until SIGTERM/SIGINT (or,
// with --once, until nothing is claimable). A stop lets the sends in flight finish and record; claims not
// yet started go back to 'planned' for another worker. The message is the real digest (pg-digests.ts),
// built with the same settings as `digest serve` (PUBLIC_URL, MAIL_FROM, SECRET_KEY, DKIM, BOUNCE_ADDRESS…).
import { setTimeout as sleep } from 'node:timers/promises';
import type { CliIo } from '../../cli-io.ts';
import type { Config } from '../../config.ts';
import { AppError } from '../../errors.ts';
import type { Logger } from '../../log.ts';
import { createSmtpMailer } from '../../mail/smtp-mailer.ts';
import { PgLedger } from '../../ledger/postgres/ledger.ts';
import { ClaimantLock } from '../../ledger/postgres/liveness.ts';
import { createPool } from '../../db/postgres/pool.ts';
import { postgresBounceStore } from '../../bounces/postgres/store.ts';
import { systemClock } from '../../clock.ts';
import { createPgDigests } from './pg-digests.ts';
import { retryDelayMs } from '../../backoff.ts';
import { runPgWorker, type PgWorkerOptions, type PgWorkerResult } from './worker.ts';

export interface WorkerCliOptions {
  lanes: number;
  once: boolean;
}

export async function cmdWorker(config: Config, logger: Logger, io: CliIo, o: WorkerCliOptions): Promise<number> {
  const url = config.DATABASE_URL;
  if (!url) {
    throw new AppError(
      'WORKER_NEEDS_POSTGRES',
      'DATABASE_URL is not a postgres:// URL: `digest worker` sends from PostgreSQL; on SQLite (DATABASE_PATH) `digest serve` or `digest run` send',
    );
  }
  if (!config.SMTP_URL) throw new AppError('WORKER_NEEDS_SMTP', 'SMTP_URL is not set: `digest worker` delivers over the configured relay only');
  // Pool: a claim (and its batch's reads), a record and the liveness check may run at once; the claimant lock has its own connection.
  const pool = createPool(url, { schema: config.DATABASE_SCHEMA, max: 4 });
  const ledger = new PgLedger(pool);
  const lock = new ClaimantLock(url, ledger.claimant, config.DATABASE_SCHEMA);
  const mailer = createSmtpMailer({
    url: config.SMTP_URL,
    from: config.MAIL_FROM,
    poolSize: o.lanes,
    ratePerSecond: config.SMTP_RATE_PER_SECOND,
    timeoutMs: config.SMTP_TIMEOUT_MS,
    dkim: config.dkim,
    logger,
    allowPlainAuth: config.SMTP_ALLOW_PLAIN_AUTH,
  });
  let digests: Awaited<ReturnType<typeof createPgDigests>> | undefined;
  let stop = false;
  const onSignal = (sig: NodeJS.Signals) => {
    if (!stop) io.err(`${sig}: stopping: sends in flight finish and are recorded, unstarted claims go back`);
    stop = true;
  };
  process.on('SIGTERM', onSignal).on('SIGINT', onSignal);
  try {
    digests = await createPgDigests(pool, config, logger);
    await lock.hold();
    io.out(`worker ${ledger.claimant}: ${o.lanes} lanes on PostgreSQL${o.once ? ', until nothing is claimable' : ''}`);
    const onRecovered = (n: number) =>
      io.out(`${n} digests were in flight in workers that are gone: marked unknown, never resent (their papers ride in the next digest)`);
    const bounces = postgresBounceStore({ pool, clock: systemClock, logger, config });
    const hardFailuresToSuppress = config.HARD_FAILURES_TO_SUPPRESS;
    const r = await untilStopped(config, logger, () => stop, {
      pool, ledger, mailer, digests, bounces, hardFailuresToSuppress, onRecovered,
      lanes: o.lanes, untilEmpty: o.once, stopping: () => stop,
      retry: config, retryWindowMs: config.SMTP_RETRY_WINDOW_MS, relayDownAfter: config.RELAY_DOWN_AFTER,
    });
    io.out(`sent ${r.sent}, retry ${r.retried}, failed ${r.failed}, unknown ${r.unknown}, not confirmed ${r.skipped}, given back ${r.released}`);
    logger.info({ claimant: ledger.claimant, ...r }, 'worker stopped');
    // --once is a run: a relay that looked down is exit 1 with `digest run`'s line (pipeline.ts runFailure).
    if (r.relayDown !== undefined) throw new AppError('RELAY_DOWN', `sending paused: ${r.relayDown}; run again when it is back`, { temporary: true });
    return 0;
  } finally {
    process.off('SIGTERM', onSignal).off('SIGINT', onSignal);
    await mailer.close();
    digests?.close();
    await lock.release();
    await pool.end();
  }
}

/**
 * The worker loop; a long-running worker that pauses on a relay that looks down logs it at error level and
 * waits (the retry backoff, longer each pause in a row, as a run waits for the scheduler's next tick), then
 * goes on: it never spins on a dead relay. --once returns at the pause, the caller exits 1.
 */
async function untilStopped(config: Config, logger: Logger, stopped: () => boolean, w: PgWorkerOptions): Promise<PgWorkerResult> {
  const total: PgWorkerResult = { sent: 0, retried: 0, failed: 0, unknown: 0, skipped: 0, released: 0 };
  for (let pauses = 1; ; pauses++) {
    const r = await runPgWorker(w);
    for (const k of ['sent', 'failed', 'unknown', 'skipped', 'released'] as const) total[k] += r[k];
    total.retried = r.retried;
    if (r.relayDown === undefined || w.untilEmpty || stopped()) return { ...total, ...(r.relayDown !== undefined ? { relayDown: r.relayDown } : {}) };
    const waitMs = retryDelayMs(pauses, { baseMs: config.SMTP_RETRY_BASE_MS, maxMs: config.SMTP_RETRY_MAX_MS });
    logger.error({ reason: r.relayDown, waitMs }, `sending paused: ${r.relayDown}; trying again in ${Math.round(waitMs / 1000)} s`);
    for (const until = Date.now() + waitMs; Date.now() < until && !stopped(); ) await sleep(Math.min(1000, until - Date.now()));
    if (r.sent > 0) pauses = 0;
  }
}
