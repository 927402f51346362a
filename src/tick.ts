// One tick of the service: fetch configured sources, match new papers, plan the ledger, send.
// The scheduler runs it hourly with due=true; `digest run` runs it once (due=false sends every pending digest).
import { planEdition, type PlanResult } from './plan/planner.ts';
import { recoverStale, sendPending, type SendProgress, type SendSummary } from './send/sender.ts';
import { createSourcePoller, parseSources, type PollReport } from './ingest/sources.ts';
import type { App } from './main.ts';
import { matchPending } from './topics/matcher.ts';

export interface TickOptions {
  /** Only subscribers whose local delivery time has come (the scheduler); false = everyone pending now. */
  due: boolean;
  /** Fetch, match and plan inside a savepoint that is rolled back; send nothing. */
  dryRun?: boolean;
  /** Plan only this subscriber (the welcome digest right after confirming); no source fetching. */
  onlySubscriber?: number;
  signal?: AbortSignal;
  onProgress?: (p: SendProgress) => void;
}

export interface TickReport {
  sources: PollReport[];
  matched: { queries: number; matches: number; ms: number };
  plan: PlanResult;
  send: SendSummary | undefined;
  recovered: number;
}

export async function runTick(app: App, opts: TickOptions): Promise<TickReport> {
  const { db, clock, logger, config } = app;
  const specs = parseSources(config.SOURCES);
  const fetchSources = specs.length > 0 && !opts.dryRun && opts.onlySubscriber === undefined;
  const sources = fetchSources ? await createSourcePoller({ db, config, clock, logger }).poll() : [];

  const recovered = opts.dryRun ? 0 : recoverStale(db, clock);
  if (opts.dryRun) {
    db.exec('SAVEPOINT dry_run');
    try {
      const matched = matchPending(db);
      const plan = planEdition(db, { clock, due: opts.due, onlySubscriber: opts.onlySubscriber });
      return { sources, matched, plan, send: undefined, recovered };
    } finally {
      db.exec('ROLLBACK TO dry_run; RELEASE dry_run');
    }
  }

  const matched = matchPending(db);
  const plan = planEdition(db, { clock, due: opts.due, onlySubscriber: opts.onlySubscriber });
  logger.info({ matched, plan }, 'planned');
  const send = await sendPending(
    // smtpUrl lets big runs add worker threads (SEND_WORKERS), each with its own pool to the same relay.
    { db, mailer: app.mailer, renderer: app.renderer, links: app.links, clock, config, logger, smtpUrl: app.smtpUrl },
    { signal: opts.signal, onProgress: opts.onProgress },
  );
  logger.info({ send }, 'sent');
  return { sources, matched, plan, send, recovered };
}
