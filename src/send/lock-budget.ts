// How long a send run waits, in all, for another process's write lock: DB_BUSY_TIMEOUT_MS for the run as
// a whole, not per write. Every lane of every sending thread has a delivery to record, and each waiting
// its own budget in turn made a run with ten lanes stop ten budgets after the lock. So the first write
// that has waited the whole budget marks it spent, in memory the run's threads share (SharedArrayBuffer),
// and every other write then tries once and gives up.
//
// A try must itself be short for that to hold: better-sqlite3 waits for a lock inside SQLite
// (busy_timeout), blocking its thread. The send loop lowers its connection's busy_timeout to TRY_MS for
// the run, so a wait is many short tries with the event loop free in between (db/busy.ts).
import { retryWhileBusy, retryWhileBusySync } from '../db/busy.ts';
import { isBusy } from '../db/faults.ts';

/** Longest one try blocks in SQLite's busy handler (its waits add up to ~53 ms past 50). */
export const TRY_MS = 50;

const SPENT = 0;

export class LockBudget {
  private readonly cells: Int32Array;

  /** `shared`: another thread's budget.memory, or none for a new run. */
  constructor(
    readonly budgetMs: number,
    shared?: SharedArrayBuffer,
  ) {
    this.cells = new Int32Array(shared ?? new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
  }

  /** Hand this to the run's other threads (workerData). */
  get memory(): SharedArrayBuffer {
    return this.cells.buffer as SharedArrayBuffer;
  }

  /** True once a write of this run has waited the whole budget. */
  get spent(): boolean {
    return Atomics.load(this.cells, SPENT) === 1;
  }

  private spend(e: unknown): never {
    if (isBusy(e)) Atomics.store(this.cells, SPENT, 1);
    throw e;
  }

  /** `fn`, tried again while locked (event loop free in between) until the budget is spent, by this write or another. */
  async write<T>(fn: () => T | Promise<T>): Promise<T> {
    try {
      return await retryWhileBusy(fn, this.budgetMs, undefined, () => this.spent);
    } catch (e) {
      return this.spend(e);
    }
  }

  /** The same for a write on a synchronous path, blocking this thread at most `maxMs` (and less once spent). */
  writeSync<T>(fn: () => T, maxMs: number): T {
    try {
      return retryWhileBusySync(fn, Math.min(this.budgetMs, maxMs), () => this.spent);
    } catch (e) {
      // A short synchronous wait running out is not the run's budget: only a lock error counts, and only
      // when this write was allowed the whole of it.
      if (maxMs >= this.budgetMs) return this.spend(e);
      throw e;
    }
  }
}
