// "Why no email today?" on PostgreSQL: the same reads as report/why-no-email.ts on SQLite, in the same
// order and stopping where it stops, answered with its words (reportBeforeSlot, describeLastSlot).
import type { Pg } from '../../db/postgres/pool.ts';
import { watermarkExpr } from '../../subscribers/records/postgres-delivered.ts';
import { describeLastSlot, reportBeforeSlot, type LastSlotReport, type SlotFacts, type SlotSubscriber } from '../why-no-email.ts';

const SQL_SUBSCRIBER = `
  SELECT status, paused_until AS "pausedUntil", last_slot AS "lastSlot", last_slot_at AS "lastSlotAt", ${watermarkExpr('s')}::float8 AS watermark
  FROM subscribers s WHERE id = $1`;
const SQL_ROW_OF_SLOT = `SELECT status, paper_count AS papers FROM digests WHERE subscriber_id = $1 AND edition = $2`;
const SQL_ACTIVE_TOPICS = `SELECT count(*) FILTER (WHERE muted = 0)::int AS active FROM topics WHERE subscriber_id = $1`;
/** The papers that slot looked at: above the watermark, ingested by the time it ran, with their batch days. */
const SQL_PAPERS_SEEN = `
  SELECT count(*)::int AS n, min(b.date) AS first, max(b.date) AS last
  FROM papers p JOIN batches b ON b.id = p.first_batch_id
  WHERE p.id > $1 AND p.created_at <= $2`;
/** Source days around the slot (the day before, and its day) that brought nothing. */
const SQL_QUIET_SOURCES = `
  SELECT source, day, status FROM source_days
  WHERE day BETWEEN to_char($1::text::date - 1, 'YYYY-MM-DD') AND $1::text AND status IN ('empty', 'error')
  ORDER BY day, source`;

export async function lastSlotReportPg(c: Pg, subscriberId: number, now: Date): Promise<LastSlotReport | undefined> {
  const s = (await c.query<SlotSubscriber>(SQL_SUBSCRIBER, [subscriberId])).rows[0];
  if (!s) return undefined;
  const early = reportBeforeSlot(s, now);
  if (early) return early;
  const slot = s.lastSlot!;
  const row = (await c.query<{ status: string; papers: number }>(SQL_ROW_OF_SLOT, [subscriberId, slot])).rows[0];
  if (row) return describeLastSlot(slot, { row });
  const activeTopics = (await c.query<{ active: number }>(SQL_ACTIVE_TOPICS, [subscriberId])).rows[0]!.active;
  if (activeTopics === 0) return describeLastSlot(slot, { activeTopics });
  const seen = (await c.query<NonNullable<SlotFacts['seen']>>(SQL_PAPERS_SEEN, [s.watermark, s.lastSlotAt])).rows[0];
  const quiet = (await c.query<NonNullable<SlotFacts['quiet']>[number]>(SQL_QUIET_SOURCES, [slot])).rows;
  return describeLastSlot(slot, { activeTopics, seen, quiet });
}
