// The ledger, written before anything is sent: one digest row per subscriber for the current edition,
// planned in ONE transaction with set-based SQL (never subscribers x papers in JS), chunked by
// subscriber id ranges so a million subscribers never build one giant intermediate result.
//
// A row covers the papers (watermark, through]: everything matched for the subscriber since the last
// DELIVERED digest. Missed days therefore merge into one digest (catch-up), and a paper whose digest
// failed or was lost in a crash rides in the next edition.
import type { Clock } from '../clock.ts';
import { localTime, utcDate } from '../clock.ts';
import type { Db } from '../db/open.ts';
import type { Logger } from '../log.ts';

export interface PlanOptions {
  clock: Clock;
  /**
   * true (scheduler tick, `digest run --due`): only subscribers whose local time has reached their
   * delivery hour today (weekly: on their weekday). false (`digest run`): every eligible subscriber now.
   */
  due: boolean;
  /** Plan this one subscriber only (preview, the welcome digest right after confirming). */
  onlySubscriber?: number;
  /** Subscribers per INSERT … SELECT (by id range); all chunks share one transaction. */
  chunkSize?: number;
  logger?: Logger;
}

export interface PlanResult {
  /** Date of the newest batch; null when nothing was ever ingested. */
  edition: string | null;
  /** Digest rows written. */
  planned: number;
  /** Papers across those rows. */
  items: number;
}

const DEFAULT_CHUNK = 20_000;

/** The newest batch day names the edition. */
const SQL_EDITION = `SELECT max(date) AS edition FROM batches`;

/** Time zones of the subscribers who could receive something (index subscribers_status). */
const SQL_ACTIVE_TIMEZONES = `SELECT DISTINCT timezone FROM subscribers WHERE status = 'confirmed'`;

/** Per time zone, the local calendar facts of "now", computed in JS (Intl, DST-correct). */
const SQL_CREATE_PLAN_LOCAL = `
  CREATE TEMP TABLE IF NOT EXISTS plan_local (
    timezone      TEXT PRIMARY KEY,
    local_date    TEXT NOT NULL,
    local_hour    INTEGER NOT NULL,
    local_weekday INTEGER NOT NULL
  )`;
const SQL_CLEAR_PLAN_LOCAL = `DELETE FROM plan_local`;
const SQL_INSERT_PLAN_LOCAL = `
  INSERT INTO plan_local (timezone, local_date, local_hour, local_weekday)
  VALUES (:timezone, :localDate, :localHour, :localWeekday)`;

const SQL_SUBSCRIBER_ID_RANGE = `SELECT min(id) AS lo, max(id) AS hi FROM subscribers WHERE status = 'confirmed'`;
const SQL_MAX_DIGEST_ID = `SELECT coalesce(max(id), 0) AS id FROM digests`;

/**
 * Plans the rows of one subscriber id range [:lo, :hi].
 * eligible: confirmed, not paused, no open row (planned/sending/retry), no row for this edition yet,
 *   and in due mode: local hour >= delivery_hour, nothing planned yet for this local date, and for
 *   weekly subscribers their weekday (or a last digest 7+ days old). `through` is the highest paper id
 *   every one of the subscriber's unmuted queries has been matched up to (capped by :maxPaper), so a
 *   paper the matcher has not looked at yet is never skipped by the watermark.
 * hits: (subscriber, paper, topic) for unmuted topics, papers in (watermark, through].
 * items: one per (subscriber, paper): matched topic ids in the subscriber's topic order, best score.
 * The row's papers JSON is in display order: more topics matched, then upvotes, then relevance
 * (bm25: lower is better), then paper id. No row for a subscriber with no hit.
 */
const SQL_PLAN_CHUNK = `
  WITH eligible AS MATERIALIZED (
    SELECT s.id, s.watermark,
           min(:maxPaper, (SELECT min(q.matched_through) FROM topics t JOIN queries q ON q.id = t.query_id
                           WHERE t.subscriber_id = s.id AND t.muted = 0)) AS through
    FROM subscribers s
    JOIN plan_local l ON l.timezone = s.timezone
    WHERE s.id BETWEEN :lo AND :hi
      AND +s.status = 'confirmed' -- '+': walk the id range, not the status index, per chunk
      AND (s.paused_until IS NULL OR s.paused_until <= :now)
      AND NOT EXISTS (SELECT 1 FROM digests d
                      WHERE d.subscriber_id = s.id
                        AND (d.edition = :edition OR d.status IN ('planned', 'sending', 'retry')))
      AND (:due = 0 OR (
            l.local_hour >= s.delivery_hour
            AND (s.last_digest_date IS NULL OR s.last_digest_date < l.local_date)
            AND (s.frequency = 'daily'
                 OR s.weekly_day = l.local_weekday
                 OR (s.last_digest_date IS NOT NULL AND s.last_digest_date <= date(l.local_date, '-7 days')))))
  ),
  hits AS (
    SELECT e.id AS subscriber_id, e.watermark, e.through, m.paper_id, t.id AS topic_id, t.position, m.score
    FROM eligible e
    JOIN topics t ON t.subscriber_id = e.id AND t.muted = 0
    JOIN query_matches m ON m.query_id = t.query_id AND m.paper_id > e.watermark AND m.paper_id <= e.through
  ),
  items AS (
    SELECT h.subscriber_id, h.paper_id, max(h.watermark) AS watermark, max(h.through) AS through,
           json_group_array(h.topic_id ORDER BY h.position, h.topic_id) AS topic_ids,
           count(*) AS topic_count, min(h.score) AS best, max(p.upvotes) AS upvotes
    FROM hits h
    JOIN papers p ON p.id = h.paper_id
    GROUP BY h.subscriber_id, h.paper_id
  )
  INSERT INTO digests (subscriber_id, edition, status, from_paper, to_paper, papers, paper_count, planned_at)
  SELECT i.subscriber_id, :edition, 'planned', max(i.watermark), max(i.through),
         json_group_array(json_object('p', i.paper_id, 't', json(i.topic_ids), 's', i.best)
                          ORDER BY i.topic_count DESC, i.upvotes DESC, i.best ASC, i.paper_id ASC),
         count(*), :now
  FROM items i
  GROUP BY i.subscriber_id`;

/** Remembers the subscriber-local date of what was just planned (due mode: once per local day). */
const SQL_SET_LAST_DIGEST_DATE = `
  UPDATE subscribers
  SET last_digest_date = (SELECT l.local_date FROM plan_local l WHERE l.timezone = subscribers.timezone)
  WHERE id IN (SELECT subscriber_id FROM digests WHERE id > :before AND edition = :edition)`;

const SQL_NEW_ITEMS = `SELECT coalesce(sum(paper_count), 0) AS n FROM digests WHERE id > :before AND edition = :edition`;

/** Writes the ledger rows of the current edition. Safe to call from several processes at once. */
export function planEdition(db: Db, opts: PlanOptions): PlanResult {
  const now = opts.clock.now();
  const chunk = opts.chunkSize ?? DEFAULT_CHUNK;
  db.exec(SQL_CREATE_PLAN_LOCAL);

  const plan = db.transaction((): PlanResult => {
    const edition = (db.prepare(SQL_EDITION).get() as { edition: string | null }).edition;
    if (edition === null) return { edition: null, planned: 0, items: 0 };
    const maxPaper = (db.prepare(`SELECT coalesce(max(id), 0) AS id FROM papers`).get() as { id: number }).id;

    db.exec(SQL_CLEAR_PLAN_LOCAL);
    const insertLocal = db.prepare(SQL_INSERT_PLAN_LOCAL);
    for (const { timezone } of db.prepare(SQL_ACTIVE_TIMEZONES).all() as { timezone: string }[]) {
      const local = safeLocalTime(now, timezone, opts.logger);
      insertLocal.run({ timezone, localDate: local.date, localHour: local.hour, localWeekday: local.weekday });
    }

    const before = (db.prepare(SQL_MAX_DIGEST_ID).get() as { id: number }).id;
    const range =
      opts.onlySubscriber === undefined
        ? (db.prepare(SQL_SUBSCRIBER_ID_RANGE).get() as { lo: number | null; hi: number | null })
        : { lo: opts.onlySubscriber, hi: opts.onlySubscriber };
    const planChunk = db.prepare(SQL_PLAN_CHUNK);
    let planned = 0;
    if (range.lo !== null && range.hi !== null) {
      for (let lo = range.lo; lo <= range.hi; lo += chunk) {
        planned += planChunk.run({
          lo,
          hi: lo + chunk - 1,
          now: now.toISOString(),
          edition,
          maxPaper,
          due: opts.due ? 1 : 0,
        }).changes;
      }
    }
    db.prepare(SQL_SET_LAST_DIGEST_DATE).run({ before, edition });
    const items = (db.prepare(SQL_NEW_ITEMS).get({ before, edition }) as { n: number }).n;
    return { edition, planned, items };
  });
  // IMMEDIATE: take the write lock first, so two planners cannot both see "no row yet".
  const result = plan.immediate();
  opts.logger?.info({ ...result, due: opts.due }, 'digests planned');
  return result;
}

/** A subscriber's zone was validated when stored; should one be unknown to Intl, fall back to UTC. */
function safeLocalTime(now: Date, timezone: string, logger: Logger | undefined) {
  try {
    return localTime(now, timezone);
  } catch {
    logger?.warn({ timezone }, 'unknown time zone; planning with UTC');
    return { date: utcDate(now), hour: now.getUTCHours(), weekday: now.getUTCDay() };
  }
}
