// The loader's day index (src/render/paper-days.ts): a paper's batch day by id, for the papers a digest
// holds past what its email shows. It must give back exactly the day it was given, for ids met in any
// order, and know nothing it was not given (the loader then reads the paper as before).
import { describe, expect, it } from 'vitest';
import { dayNumber, PaperDays } from '../../src/render/paper-days.ts';

describe('the day index of papers read', () => {
  it('gives back each paper’s day, for ids met upwards, downwards and far apart', () => {
    const days = new PaperDays();
    const given = new Map<number, string>();
    // A middle id first, then ids below and above it that make the array grow both ways.
    const ids = [50_000, 49_000, 60_000, 1_000, 200_000, 50_001, 0];
    ids.forEach((id, i) => {
      const day = `2025-11-${String(10 + i).padStart(2, '0')}`;
      days.set(id, day);
      given.set(id, day);
    });
    for (const [id, day] of given) {
      expect(days.get(id), `id ${id}`).toBe(dayNumber(day));
      expect(days.text(days.get(id))).toBe(day);
    }
    // Ids never given: nothing, whether inside the array or not.
    for (const id of [50_002, 48_999, 199_999, 300_000, -5]) expect(days.get(id), `id ${id}`).toBe(0);
  });

  it('keeps no day that is not YYYY-MM-DD, and no id too far from the others (up to 2^18 apart)', () => {
    const days = new PaperDays();
    days.set(10, 'yesterday');
    days.set(11, '2025-11-5');
    expect([days.get(10), days.get(11)]).toEqual([0, 0]);
    days.set(100, '2025-11-24');
    days.set(100 + (1 << 18), '2025-11-25'); // past the span: not kept
    days.set(100 + (1 << 17), '2025-11-26');
    expect([days.get(100), days.get(100 + (1 << 18)), days.get(100 + (1 << 17))]).toEqual([20251124, 0, 20251126]);
  });

  it('numbers days in the order of their texts', () => {
    const texts = ['2024-12-31', '2025-01-01', '2025-01-10', '2025-02-01', '2025-10-09', '2025-10-10'];
    const numbers = texts.map(dayNumber);
    expect([...numbers].sort((a, b) => a - b)).toEqual(numbers);
    expect(numbers.every((n) => n > 0)).toBe(true);
  });
});
