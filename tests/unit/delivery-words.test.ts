import { describe, expect, it } from 'vitest';
import { nextDeliveryWords, scheduleWords } from '../../src/subscribers/records/delivery-words.ts';

describe('when a new reader’s digests come, in their own zone', () => {
  const berlin = { timezone: 'Europe/Berlin', deliveryHour: 7, frequency: 'daily' as const, weeklyDay: 1 };

  it('daily: every day at the hour; the first after today tomorrow, by the reader’s calendar, not UTC', () => {
    expect(scheduleWords(berlin)).toBe('every day at 07:00, Europe/Berlin');
    expect(nextDeliveryWords(berlin, new Date('2025-11-25T09:00:00Z'))).toBe('tomorrow at 07:00, Europe/Berlin');
    // 23:30 UTC on the 25th is already the 26th in Tokyo: tomorrow there is the 27th.
    const tokyo = { ...berlin, timezone: 'Asia/Tokyo', deliveryHour: 18 };
    expect(nextDeliveryWords(tokyo, new Date('2025-11-25T23:30:00Z'))).toBe('tomorrow at 18:00, Asia/Tokyo');
  });

  it('weekly: on the reader’s weekday, named with its date when it is not tomorrow', () => {
    const monday = { ...berlin, frequency: 'weekly' as const, weeklyDay: 1 };
    expect(scheduleWords(monday)).toBe('every Monday at 07:00, Europe/Berlin');
    // Tuesday 25 Nov 2025: the next Monday is 1 Dec; on Sunday 30 Nov it is tomorrow; on a Monday, a week on.
    expect(nextDeliveryWords(monday, new Date('2025-11-25T09:00:00Z'))).toBe('on Monday 1 Dec at 07:00, Europe/Berlin');
    expect(nextDeliveryWords(monday, new Date('2025-11-30T09:00:00Z'))).toBe('tomorrow at 07:00, Europe/Berlin');
    expect(nextDeliveryWords(monday, new Date('2025-12-01T09:00:00Z'))).toBe('on Monday 8 Dec at 07:00, Europe/Berlin');
  });
});
