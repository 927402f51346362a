// Turning form and JSON bodies into service input, and service errors back into inline form errors.
import { z } from 'zod';
import { isAppError } from '../errors.ts';
import { httpStatus } from './errors.ts';
import { timeZoneNames } from '../subscribers/preferences-input.ts';
import { hourLabel, weekdayName } from './pages.ts';

/** A form field that may be sent once (string) or repeated (array); JSON sends arrays. */
export const repeated = z
  .union([z.string().max(2000), z.array(z.string().max(2000)).max(100)])
  .optional()
  .transform((v) => (v === undefined ? [] : Array.isArray(v) ? v : [v]));

/** Numbers arrive as numbers (JSON) or strings (forms). */
export const numberish = z.union([z.number(), z.string().max(20)]).optional();

/** '' and absent -> undefined; digits -> the number; anything else -> NaN (the service names the field). */
export function toOptionalInt(v: number | string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v === 'number') return v;
  const t = v.trim();
  if (t === '') return undefined;
  return /^-?\d+$/.test(t) ? Number(t) : Number.NaN;
}

export function blankToUndefined(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

export interface FieldError {
  /** The service's error code (EMAIL_INVALID, TOPIC_INVALID, …). */
  code: string;
  /** 'email', 'topics', 'timezone', 'deliveryHour', 'frequency', 'weeklyDay', 'pauseDays' or undefined. */
  field: string | undefined;
  /** 1-based topic number for topic errors. */
  topic: number | undefined;
  /** 1-based character position inside that topic, when the parser names one. */
  position: number | undefined;
  /** As the API and the CLI say it: `pauseDays: must be …` (the JSON answer). */
  message: string;
  /** As a form shows it: the field's label in front (`Pause deliveries for (days): must be …`). */
  shown: string;
}

/** The forms' labels of the fields a service error may name (the subscribe and preferences pages). */
const FIELD_LABELS: Record<string, string> = {
  email: 'Email address',
  timezone: 'Time zone',
  deliveryHour: 'Delivery hour',
  frequency: 'Frequency',
  weeklyDay: 'Day for weekly digests',
  pauseDays: 'Pause deliveries for (days)',
  maxPapers: 'Most papers per email',
};

/** Locates a 400 from the service (which field, which topic, which position) from the error's data. */
export function fieldError(e: unknown): FieldError | undefined {
  if (!isAppError(e) || httpStatus(e) !== 400) return undefined;
  const { field, index, position } = e.where;
  const label = field === undefined ? undefined : FIELD_LABELS[field];
  const shown = label !== undefined && e.problem !== undefined ? `${label}: ${e.problem}` : e.message;
  return { code: e.code, field, topic: index === undefined ? undefined : index + 1, position, message: e.message, shown };
}

/** The JSON answer (400) for a field error. */
export function fieldErrorJson(fe: FieldError) {
  return { ok: false, code: fe.code, error: fe.message, field: fe.field, topic: fe.topic, position: fe.position } as const;
}

/** The error shown next to topic row `index` (0-based): its own, or on the first row a topics error naming no topic. */
export function topicErrorAt(error: FieldError | undefined, index: number): string {
  if (error?.field !== 'topics') return '';
  return error.topic === index + 1 || (error.topic === undefined && index === 0) ? error.message : '';
}

export function hourOptions(selected: number): Array<{ value: number; label: string; selected: boolean }> {
  return Array.from({ length: 24 }, (_, h) => ({ value: h, label: hourLabel(h), selected: h === selected }));
}

export function weekdayOptions(selected: number): Array<{ value: number; label: string; selected: boolean }> {
  // Monday first, as most calendars show it.
  return [1, 2, 3, 4, 5, 6, 0].map((d) => ({ value: d, label: weekdayName(d), selected: d === selected }));
}

let zones: string[] | undefined;

export function timezoneOptions(selected: string): Array<{ value: string; selected: boolean }> {
  zones ??= timeZoneNames();
  const list = zones.includes(selected) ? zones : [selected, ...zones];
  return list.map((value) => ({ value, selected: value === selected }));
}

/** What the schedule-fields partial (delivery hour, time zone, daily or weekly) shows, on the subscribe and preferences pages. */
export function scheduleFields(s: { deliveryHour: number; timezone: string; frequency: string; detectTimezone: boolean }) {
  return {
    hours: hourOptions(s.deliveryHour),
    timezones: timezoneOptions(s.timezone),
    timezoneHelp: 'Digests arrive at the delivery hour in this time zone.',
    detectTimezone: s.detectTimezone,
    frequency: s.frequency,
  };
}
