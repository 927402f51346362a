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
import type { Db } from '../db/open.ts';
import type { WriteTurn } from './write-turn.ts';

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

  /** No write of the run waits for the lock any more (a write gave up on it, or the run stopped on it). */
  spend(): void {
    Atomics.store(this.cells, SPENT, 1);
  }

  private spendOn(e: unknown): never {
    if (isBusy(e)) this.spend();
    throw e;
  }

  /** `fn`, tried again while locked (event loop free in between) until the budget is spent, by this write or another. */
  async write<T>(fn: () => T | Promise<T>): Promise<T> {
    try {
      return await retryWhileBusy(fn, this.budgetMs, undefined, () => this.spent);
    } catch (e) {
      return this.spendOn(e);
    }
  }

  /** The same for a write on a synchronous path, blocking this thread at most `maxMs` (and less once spent). */
  writeSync<T>(fn: () => T, maxMs: number): T {
    try {
      return retryWhileBusySync(fn, Math.min(this.budgetMs, maxMs), () => this.spent);
    } catch (e) {
      // A short synchronous wait running out is not the run's budget: only a lock error counts, and only
      // when this write was allowed the whole of it.
      if (maxMs >= this.budgetMs) return this.spendOn(e);
      throw e;
    }
  }
}

export interface LedgerWriters {
  /** A write on a synchronous path, blocking at most the given wait (and less once the budget is spent). */
  write<T>(fn: () => T): T;
  /** A write waited for asynchronously, in this thread's turn when the run has several threads. */
  ledgerWrite<T>(fn: () => T): Promise<T>;
  /** Gives the connection its busy_timeout back (at the end of the run). */
  restore(): void;
}

/**
 * The send loop's writes on `db` within `budget`: the connection waits at most TRY_MS per try for the run,
 * and not at all once the budget is spent (ten lanes each trying once would still add up).
 */
export function ledgerWriters(db: Db, budget: LockBudget, turn: WriteTurn | undefined, syncMaxMs: number): LedgerWriters {
  const busyTimeout = db.pragma('busy_timeout', { simple: true }) as number;
  let tryMs = Math.min(busyTimeout, TRY_MS);
  db.pragma(`busy_timeout = ${tryMs}`);
  const stopWaiting = () => {
    if (tryMs > 0 && budget.spent) db.pragma(`busy_timeout = ${(tryMs = 0)}`);
  };
  const waited = <T>(fn: () => T): Promise<T> => {
    stopWaiting();
    return budget.write(fn);
  };
  return {
    write(fn) {
      stopWaiting();
      return budget.writeSync(fn, syncMaxMs);
    },
    ledgerWrite: (fn) => (turn ? turn.run(() => waited(fn)) : waited(fn)),
    restore: () => db.pragma(`busy_timeout = ${busyTimeout}`),
  };
}
