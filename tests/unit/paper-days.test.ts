// The loader's day index (src/render/paper-days.ts): a paper's batch day by id, for the papers a digest
// holds past what its email shows. It must give back exactly the day it was given, for ids met in any
// order, and know nothing it was not given (the loader then reads the paper as before).
import { describe, expect, it } from 'vitest';
import { PaperDays } from '../../src/render/paper-days.ts';

describe('the day index of papers read', () => {
  it('gives back each paper’s day, for ids met upwards, downwards and far apart', () => {
    const days = new PaperDays();
    const given = new Map<number, string>();
    // A middle id first, then ids below and above it that make the array grow both ways.
    const ids = [50_000, 49_000, 60_000, 1_000, 200_000, 50_001, 0];
    ids.forEach((id, i) => {
      const day = `2025-11-${String(10 + i).padStart(2, '0')}`;
      days.set(id, days.intern(day));
      given.set(id, day);
    });
    for (const [id, day] of given) expect(days.text(days.get(id)), `id ${id}`).toBe(day);
    // Ids never given: nothing, whether inside the array or not.
    for (const id of [50_002, 48_999, 199_999, 300_000, -5]) expect(days.get(id), `id ${id}`).toBe(0);
  });

  it('keeps any day text, one id per text, and no paper id too far from the others (up to 2^18 apart)', () => {
    const days = new PaperDays();
    // A batch's day is whatever its source said: kept as given, never read as a date.
    days.set(10, days.intern('yesterday'));
    days.set(11, days.intern('2025-11-5'));
    expect([days.text(days.get(10)), days.text(days.get(11))]).toEqual(['yesterday', '2025-11-5']);
    expect(days.intern('yesterday')).toBe(days.get(10));
    expect(days.intern('2025-11-24')).not.toBe(0);
    days.set(100, days.intern('2025-11-24'));
    days.set(100 + (1 << 18), days.intern('2025-11-25')); // past the span: not kept
    days.set(100 + (1 << 17), days.intern('2025-11-26'));
    expect([days.get(100 + (1 << 18))]).toEqual([0]);
    expect([days.text(days.get(100)), days.text(days.get(100 + (1 << 17)))]).toEqual(['2025-11-24', '2025-11-26']);
  });
});
