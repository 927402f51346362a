import { describe, expect, it } from 'vitest';
import { axisLabel, renderChart } from '../../src/admin/charts.ts';
import { complaintLevel } from '../../src/web/console/routes.ts';
import { localTimeLabel, relativeTime } from '../../src/web/console/times.ts';

describe('the console, readable', () => {
  it('writes axis numbers in a few characters, so a six-digit maximum keeps its first digit', () => {
    expect([950, 1000, 1500, 100_000, 2_500_000].map(axisLabel)).toEqual(['950', '1k', '1.5k', '100k', '2.5M']);
    const chart = renderChart({ title: 'Digests per day', days: ['2025-11-24', '2025-11-25'], kind: 'bars', series: [{ name: 'sent', values: [80_000, 100_000], color: '#000' }] });
    // Both drawings (wide and phone) label the axis "100k", never "100000".
    expect(chart.match(/>100k<\/text>/g)).toHaveLength(2);
    expect(chart).not.toContain('>100000<');
  });

  it('colours the complaint rate against 0.1% and 0.3%', () => {
    expect([0, 0.09, 0.1, 0.29, 0.3, 2].map((p) => complaintLevel(p).level)).toEqual(['ok', 'ok', 'warn', 'warn', 'bad', 'bad']);
  });

  it('says times in the operator’s zone and relative to now', () => {
    const now = new Date('2025-11-25T12:00:00Z');
    expect(localTimeLabel(new Date('2025-11-25T09:05:00Z'), 'Europe/Berlin')).toBe('25 Nov 10:05 CET');
    expect(localTimeLabel(new Date('2025-07-01T09:05:00Z'), 'America/New_York')).toBe('1 Jul 05:05 GMT-4');
    expect(relativeTime(new Date('2025-11-25T11:59:30Z'), now)).toBe('just now');
    expect(relativeTime(new Date('2025-11-25T11:48:00Z'), now)).toBe('12 min ago');
    expect(relativeTime(new Date('2025-11-25T09:00:00Z'), now)).toBe('3 h ago');
    expect(relativeTime(new Date('2025-11-23T09:00:00Z'), now)).toBe('2 d ago');
    expect(relativeTime(new Date('2025-11-25T17:00:00Z'), now)).toBe('in 5 h');
  });
});
