// Planning an edition on PostgreSQL, safe from any number of processes: under a transaction advisory
// lock per slot (pg_try_advisory_xact_lock: the first planner plans, the others return at once), and
// idempotent all the same (UNIQUE (subscriber_id, edition) with ON CONFLICT DO NOTHING), so even two
// planners that both got through would plan each subscriber+slot once.
// Not the edition planner: that is src/plan/postgres/plan.ts (`digest plan`: real slots, matches and
// items, the same rows as SQLite). This one writes one item-less row per confirmed subscriber for a given
// edition and paper bound: the ledger's claim/record tests, the multi-process worker stories and
// bench/pg-ledger.ts use it to get N claimable rows without topics or papers.
import type pg from 'pg';
import { inTransaction } from '../../db/postgres/pool.ts';
import { watermarkExpr } from '../../subscribers/records/postgres-delivered.ts';

/** First half of the two-int advisory lock key of planning ("plan"). */
const PLAN_LOCK_CLASS = 0x706c616e;
export const SQL_TRY_EDITION_LOCK = `SELECT pg_try_advisory_xact_lock(${PLAN_LOCK_CLASS}, hashtext(current_schema() || '/' || $1)) AS ok`;

/** verp_nonce: 52 random bits and a sign, as the SQLite planner writes. */
const SQL_PLAN_ROWS = `
  INSERT INTO digests (subscriber_id, edition, status, from_paper, to_paper, paper_count, planned_at, verp_nonce)
  SELECT s.id, $1, 'planned', w.mark, $2, greatest($2 - w.mark, 0), $3,
         floor((random() - 0.5) * 9007199254740992)::bigint
  FROM subscribers s CROSS JOIN LATERAL (SELECT ${watermarkExpr('s')} AS mark) w
  WHERE s.status = 'confirmed' AND (s.last_slot IS NULL OR s.last_slot < $1)
  ORDER BY s.id
  ON CONFLICT (subscriber_id, edition) DO NOTHING`;

const SQL_MARK_SLOT_RUN = `
  UPDATE subscribers SET last_slot = $1, last_slot_at = $2
  WHERE status = 'confirmed' AND (last_slot IS NULL OR last_slot < $1)`;

export interface PlanEditionOptions {
  edition: string;
  /** The highest paper the edition covers. */
  toPaper: number;
  now?: Date;
  /** Take the per-slot planning lock (default true); false shows the unique key alone holds. */
  lock?: boolean;
}

export interface PlanEditionResult {
  /** False: another process was planning this slot; nothing done. */
  ran: boolean;
  planned: number;
}

export async function planEdition(pool: pg.Pool, opts: PlanEditionOptions): Promise<PlanEditionResult> {
  const now = (opts.now ?? new Date()).toISOString();
  return inTransaction(pool, async (c) => {
    if (opts.lock ?? true) {
      const got = (await c.query<{ ok: boolean }>(SQL_TRY_EDITION_LOCK, [opts.edition])).rows[0]?.ok;
      if (!got) return { ran: false, planned: 0 };
    }
    const planned = (await c.query(SQL_PLAN_ROWS, [opts.edition, opts.toPaper, now])).rowCount ?? 0;
    await c.query(SQL_MARK_SLOT_RUN, [opts.edition, now]);
    return { ran: true, planned };
  });
}
