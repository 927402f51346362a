// The sending threads' turns at the ledger (src/send/write-turn.ts): one writer at a time, woken as soon
// as the other is done, and a holder that never gives the turn back stalls nobody for long.
import { describe, expect, it, vi } from 'vitest';
import { WriteTurn } from '../../src/send/write-turn.ts';

describe('WriteTurn', () => {
  it('lets one holder at a time through, over shared memory, while the waiters stay asynchronous', async () => {
    const a = new WriteTurn();
    const b = new WriteTurn(a.memory);
    let inside = 0;
    let most = 0;
    const section = async () => {
      inside++;
      most = Math.max(most, inside);
      await new Promise((r) => setImmediate(r));
      inside--;
    };
    await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 ? a : b).run(section)));
    expect(most).toBe(1);
  });

  it('takes the turn after a bounded wait when its holder never gives it back (a thread that died)', async () => {
    const dead = new WriteTurn();
    await dead.acquire();
    const alive = new WriteTurn(dead.memory);
    // Counted, not timed: one wait with a finite limit that runs out, then the turn is taken.
    const waits = vi.spyOn(Atomics as unknown as { waitAsync: (...a: unknown[]) => unknown }, 'waitAsync');
    await alive.run(async () => undefined);
    expect(waits).toHaveBeenCalledTimes(1);
    const limitMs = waits.mock.calls[0]![3] as number;
    expect(Number.isFinite(limitMs) && limitMs > 0).toBe(true);
    const outcome = waits.mock.results[0]!.value as { async: boolean; value: unknown };
    expect(outcome.async ? await outcome.value : outcome.value).toBe('timed-out');
    waits.mockRestore();
  });
});
