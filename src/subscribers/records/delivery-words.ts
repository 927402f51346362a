// When a reader's digests come, in their own words and time zone: "every day at 07:00, Europe/Berlin",
// "tomorrow at 07:00". Said on the confirmation email and page, so a new reader knows when to look.
//
// Confirming sends a first digest at once when papers of the last day match (it uses today's slot,
// README "When digests go out"); otherwise the first one is the next slot after today.
import { localTime } from '../../clock.ts';

export interface DeliverySchedule {
  timezone: string;
  deliveryHour: number;
  frequency: 'daily' | 'weekly';
  /** 0 (Sunday) to 6 (Saturday); weekly only. */
  weeklyDay: number;
}

const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

const hourWords = (hour: number): string => `${String(hour).padStart(2, '0')}:00`;

/** "every day at 07:00, Europe/Berlin" or "every Monday at 07:00, Europe/Berlin". */
export function scheduleWords(s: DeliverySchedule): string {
  const when = s.frequency === 'weekly' ? `every ${DAYS[s.weeklyDay] ?? 'week'}` : 'every day';
  return `${when} at ${hourWords(s.deliveryHour)}, ${s.timezone}`;
}

/**
 * The first slot after today's in the reader's zone: "tomorrow at 07:00, Europe/Berlin" or "on Monday
 * 1 Dec at 07:00, Europe/Berlin" (a weekly reader whose day is further off).
 */
export function nextDeliveryWords(s: DeliverySchedule, now: Date): string {
  let local;
  try {
    local = localTime(now, s.timezone);
  } catch {
    local = localTime(now, 'UTC');
  }
  const days = s.frequency === 'weekly' ? (s.weeklyDay - local.weekday + 7) % 7 || 7 : 1;
  const day = new Date(Date.parse(`${local.date}T12:00:00Z`) + days * 86_400_000);
  const date = days === 1 ? 'tomorrow' : `on ${DAYS[day.getUTCDay()]} ${day.getUTCDate()} ${MONTHS[day.getUTCMonth()]}`;
  return `${date} at ${hourWords(s.deliveryHour)}, ${s.timezone}`;
}
