// The blackout detector: how many subscribers have matched papers waiting longer than their schedule
// allows (OVERDUE_AFTER_HOURS: 36 h for daily, 8.5 days for weekly). With editions following each
// subscriber's slots nothing should ever wait that long; when something does (the relay refusing
// everyone, a scheduler that stopped ticking, a bug), it must not be silent: `digest status`, /metrics
// (digest_overdue_subscribers) and a warning from every tick say so.
//
// Decision: the count walks every confirmed subscriber (an index seek per topic: about a second at 1M
// subscribers), so the scheduler computes it once per tick and stores it in settings; /metrics, which
// a Prometheus server may scrape every 15 s, reads the stored figure and its time.
import type { Clock } from '../clock.ts';
import type { Db } from '../db/open.ts';
import { readSetting, writeSetting } from '../db/settings-table.ts';
import { statement } from '../db/statements.ts';
import { OVERDUE_AFTER_HOURS } from '../plan/slots.ts';

const HOUR_MS = 3_600_000;

/** A paper counts as waiting since it was ingested; the cutoffs are paper ids, found by ingest time. */
const SQL_COUNT_OVERDUE = `
  WITH cut AS (
    SELECT (SELECT coalesce(max(id), 0) FROM papers WHERE created_at < :dailyCutoff)  AS daily,
           (SELECT coalesce(max(id), 0) FROM papers WHERE created_at < :weeklyCutoff) AS weekly
  ),
  waiting AS (
    SELECT s.id, s.watermark, CASE s.frequency WHEN 'daily' THEN cut.daily ELSE cut.weekly END AS upto
    FROM subscribers s, cut
    WHERE s.status = 'confirmed' AND (s.paused_until IS NULL OR s.paused_until <= :now)
  )
  SELECT count(*) AS n
  FROM waiting w
  WHERE w.watermark < w.upto
    AND EXISTS (SELECT 1 FROM topics t JOIN query_matches m ON m.query_id = t.query_id
                WHERE t.subscriber_id = w.id AND t.muted = 0 AND m.paper_id > w.watermark AND m.paper_id <= w.upto)`;


export interface OverdueReport {
  /** Subscribers with a matched paper older than their schedule allows. */
  subscribers: number;
  /** When it was counted (ISO). */
  at: string;
}

/** Counts overdue subscribers now and stores the figure for /metrics. */
export function countOverdue(db: Db, clock: Clock): OverdueReport {
  const now = clock.now();
  const before = (hours: number) => new Date(now.getTime() - hours * HOUR_MS).toISOString();
  const r = statement(db, SQL_COUNT_OVERDUE).get({
    now: now.toISOString(),
    dailyCutoff: before(OVERDUE_AFTER_HOURS.daily),
    weeklyCutoff: before(OVERDUE_AFTER_HOURS.weekly),
  }) as { n: number };
  const report = { subscribers: r.n, at: now.toISOString() };
  writeSetting(db, 'overdue', JSON.stringify(report));
  return report;
}

/** The figure the last tick stored; undefined before the first one. */
export function storedOverdue(db: Db): OverdueReport | undefined {
  const value = readSetting(db, 'overdue');
  if (value === undefined) return undefined;
  try {
    return JSON.parse(value) as OverdueReport;
  } catch {
    return undefined;
  }
}
