// Delivery slots: when a subscriber's digest is due (README, "When digests go out").
//
// A slot is a subscriber-local calendar date. Daily subscribers have one every local day, weekly ones
// on their weekday. The first tick at or after the delivery hour of a slot's day is that slot's delivery
// (catching up later the same day when the hour's tick did not run); a day with no tick at all merges
// into the next slot. Whatever arrives after the delivery waits for the next slot. `digest run` and the
// first digest after confirming treat now as the delivery time: the slot is today's local date.
// Batch dates never enter into it.
//
// The policy is computed here, once per time zone in use (Intl, DST-correct), and handed to SQL as the
// temporary table plan_local, so the planner decides for a million subscribers with one join.
import type { Clock } from '../clock.ts';
import { localTime, utcDate, type LocalTime } from '../clock.ts';
import type { Logger } from '../log.ts';

/** 'due': only subscribers whose slot has come (scheduler, `digest run --due`); 'now': every subscriber. */
export type PlanMode = 'due' | 'now';

export interface ZoneNow extends LocalTime {
  timezone: string;
}

/** Local calendar facts of `now` in each zone. A zone Intl does not know plans as UTC (and says so). */
export function zonesNow(clock: Clock, timezones: Iterable<string>, logger?: Logger): ZoneNow[] {
  const now = clock.now();
  const out: ZoneNow[] = [];
  for (const timezone of timezones) {
    try {
      out.push({ timezone, ...localTime(now, timezone) });
    } catch {
      logger?.warn({ timezone }, 'unknown time zone; planning with UTC');
      out.push({ timezone, date: utcDate(now), hour: now.getUTCHours(), weekday: now.getUTCDay() });
    }
  }
  return out;
}

/**
 * The SQL condition (over subscribers `s` joined to plan_local `l`) for "this subscriber's slot has
 * come and has not run yet". `:due` = 0 treats now as everyone's delivery time. last_slot is the local
 * date of the last slot that ran; a slot runs once, sent or not.
 */
export const SQL_SLOT_HAS_COME = `
  (s.last_slot IS NULL OR s.last_slot < l.local_date)
  AND (:due = 0 OR (l.local_hour >= s.delivery_hour
                    AND (s.frequency = 'daily' OR s.weekly_day = l.local_weekday)))`;

/** How long a subscriber's matched papers may wait before they count as overdue (blackout detector). */
export const OVERDUE_AFTER_HOURS = { daily: 36, weekly: 8 * 24 + 12 } as const;
