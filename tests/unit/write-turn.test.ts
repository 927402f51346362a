// The sending threads' turns at the ledger (src/send/write-turn.ts): one writer at a time, woken as soon
// as the other is done, and a holder that never gives the turn back stalls nobody for long.
import { describe, expect, it } from 'vitest';
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
    const started = Date.now();
    await alive.run(async () => undefined);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
