// Validation of the delivery preferences a subscriber may set (subscribe form, JSON, preferences page).
import { isValidTimeZone } from '../config.ts';
import { fieldInvalid, type AppError } from '../errors.ts';
import type { Frequency } from '../types.ts';

export const FREQUENCIES: readonly Frequency[] = ['daily', 'weekly'];
export const MAX_PAUSE_DAYS = 365;

function bad(field: string, message: string): AppError {
  return fieldInvalid('PREFERENCE_INVALID', field, message);
}

export function checkTimezone(tz: string): string {
  const t = tz.trim();
  if (t === '' || t.length > 64 || !isValidTimeZone(t)) {
    throw bad('timezone', `"${t.slice(0, 64)}" is not an IANA time zone name such as Europe/Paris`);
  }
  return t;
}

export function checkHour(hour: number): number {
  if (!Number.isInteger(hour) || hour < 0 || hour > 23) throw bad('deliveryHour', 'must be a whole hour from 0 to 23');
  return hour;
}

export function checkFrequency(f: string): Frequency {
  if (!(FREQUENCIES as readonly string[]).includes(f)) throw bad('frequency', 'must be "daily" or "weekly"');
  return f as Frequency;
}

export function checkWeekday(d: number): number {
  if (!Number.isInteger(d) || d < 0 || d > 6) throw bad('weeklyDay', 'must be a weekday from 0 (Sunday) to 6 (Saturday)');
  return d;
}

export function checkPauseDays(n: number): number {
  if (!Number.isInteger(n) || n < 0 || n > MAX_PAUSE_DAYS) {
    throw bad('pauseDays', `must be a whole number of days from 0 to ${MAX_PAUSE_DAYS}`);
  }
  return n;
}

/** Every IANA zone this runtime knows (for the time zone select), UTC included. */
export function timeZoneNames(): string[] {
  const zones = Intl.supportedValuesOf('timeZone');
  return zones.includes('UTC') ? zones : ['UTC', ...zones];
}

/** The schedule a subscribe request asks for: each given value checked (naming a bad one), the rest kept or defaulted. */
export function subscribePrefs(
  defaults: { DIGEST_TZ: string; DIGEST_HOUR: number },
  input: { timezone?: string | undefined; deliveryHour?: number | undefined; frequency?: string | undefined },
  current?: { timezone: string; deliveryHour: number; frequency: Frequency },
): { timezone: string; deliveryHour: number; frequency: Frequency } {
  return {
    timezone: input.timezone !== undefined ? checkTimezone(input.timezone) : (current?.timezone ?? defaults.DIGEST_TZ),
    deliveryHour: input.deliveryHour !== undefined ? checkHour(input.deliveryHour) : (current?.deliveryHour ?? defaults.DIGEST_HOUR),
    frequency: input.frequency !== undefined ? checkFrequency(input.frequency) : (current?.frequency ?? 'daily'),
  };
}
