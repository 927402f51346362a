// One planning tick on PostgreSQL (`digest plan`): ask the configured sources for their missing days (when
// given a poll: ingested into PostgreSQL), match the papers ingested since the last tick (in the in-memory
// FTS5 index, match/postgres/match.ts), then plan the slots that have come (plan.ts). Sending is left to
// `digest worker` processes (see README, "Running on more than one machine"). Safe from any number of processes: matching queues on its lock, planning runs once per tick.
import type pg from 'pg';
import type { Clock } from '../../clock.ts';
import type { PollReport } from '../../ingest/sources.ts';
import type { Logger } from '../../log.ts';
import type { MatchResult } from '../../match/matcher.ts';
import { matchPendingPg } from '../../match/postgres/match.ts';
import type { PlanMode } from '../slots.ts';
import { planDigestsPg, type PgPlanResult } from './plan.ts';
import { upkeepPg, type PgUpkeepReport } from './upkeep.ts';

export interface PgEditionReport {
  /** One report per source x day asked (empty without `poll`). */
  sources: PollReport[];
  matched: MatchResult;
  plan: PgPlanResult;
  /** The tick's upkeep (upkeep.ts), when this process planned and was given retentionDays. */
  upkeep?: PgUpkeepReport;
}

export interface PgEditionOptions {
  clock: Clock;
  mode: PlanMode;
  logger?: Logger;
  /** Ask the configured sources first (the SQLite pipeline's fetchSources, into PostgreSQL). */
  poll?: () => Promise<PollReport[]>;
  /** Plan only this subscriber (the first digest right after confirming). */
  onlySubscriber?: number;
  /** DIGEST_RETENTION_DAYS: given, the tick's planner then runs the upkeep (not for one subscriber, as on SQLite). */
  retentionDays?: number;
  /**
   * Another process planning this tick: wait for it to commit, then plan what is still due (plan.ts lock
   * 'wait'), rather than return at once. `digest run` sends next: returning at once, it claimed before the
   * other planner's rows were committed, found nothing, and left the whole edition to that process.
   */
  waitForPlanner?: boolean;
}

export async function planEditionPg(pool: pg.Pool, opts: PgEditionOptions): Promise<PgEditionReport> {
  const sources = opts.poll ? await opts.poll() : [];
  const matched = await matchPendingPg(pool, { logger: opts.logger });
  const lock = opts.waitForPlanner ? 'wait' : true;
  const plan = await planDigestsPg(pool, { clock: opts.clock, mode: opts.mode, logger: opts.logger, onlySubscriber: opts.onlySubscriber, lock });
  if (!plan.ran || opts.retentionDays === undefined || opts.onlySubscriber !== undefined) return { sources, matched, plan };
  const upkeep = await upkeepPg(pool, { clock: opts.clock, retentionDays: opts.retentionDays, logger: opts.logger });
  return { sources, matched, plan, upkeep };
}

/**
 * `digest run --dry-run` on PostgreSQL: match and plan in one transaction that is rolled back (as SQLite's
 * savepoint): what would be planned, nothing written. The planning lock is taken as a real tick takes it.
 */
export async function dryRunEditionPg(pool: pg.Pool, opts: Omit<PgEditionOptions, 'poll'>): Promise<PgEditionReport> {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    const matched = await matchPendingPg(c, { logger: opts.logger });
    const plan = await planDigestsPg(c, { clock: opts.clock, mode: opts.mode, logger: opts.logger, onlySubscriber: opts.onlySubscriber });
    return { sources: [], matched, plan };
  } finally {
    await c.query('ROLLBACK').catch(() => {});
    c.release();
  }
}

/** The command's one line: what was matched and planned, or that another process was planning. */
export function describeEdition(r: PgEditionReport): string {
  const fetched = r.sources.length === 0 ? '' : `sources: ${r.sources.map((s) => `${s.source} ${s.day} ${s.status}`).join(', ')}; `;
  const m = `${fetched}matched ${r.matched.queries} queries: ${r.matched.matches} new matches${r.matched.failed ? `, ${r.matched.failed} queries failed` : ''}`;
  if (!r.plan.ran) return `${m}; another process is planning this tick: nothing planned here`;
  const kept = r.upkeep && r.upkeep.pruned + r.upkeep.prunedQueries > 0 ? `; retention: ${r.upkeep.pruned} paper lists pruned, ${r.upkeep.prunedQueries} unused queries dropped` : '';
  return `${m}; slots ${r.plan.slots}: planned ${r.plan.planned} (${r.plan.items} papers); \`digest worker\` sends them${kept}`;
}
