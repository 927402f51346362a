// Waiting for the write lock without freezing the process. better-sqlite3 waits for a lock synchronously
// (busy_timeout): while it waits, nothing else in the process runs, web requests included. So `digest
// serve` gives its connection a short busy_timeout (WEB_BUSY_TIMEOUT_MS) and the long-running writers on
// its main thread (the planner's chunks, the send loop's claim + record) retry here instead: each try
// blocks at most that short timeout, and between tries the event loop runs. The whole wait is bounded by
// DB_BUSY_TIMEOUT_MS, after which the lock error goes up (a one-line "database locked" fault).
import { setTimeout as sleep } from 'node:timers/promises';
import { isBusy } from './faults.ts';

/** Pause between tries: short first (most locks are one ~40 ms planner chunk), then at most this. */
const MAX_PAUSE_MS = 100;

/**
 * Runs `fn` (sync or async); while it fails with SQLITE_BUSY / SQLITE_LOCKED, tries again until `budgetMs`
 * have passed, or until `final()` says another try must not run (a web answer already sent).
 */
export async function retryWhileBusy<T>(fn: () => T | Promise<T>, budgetMs: number, maxPauseMs = MAX_PAUSE_MS, final?: () => boolean): Promise<T> {
  const started = performance.now();
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (e) {
      if (!isBusy(e) || final?.() || performance.now() - started >= budgetMs) throw e;
    }
    await sleep(Math.min(maxPauseMs, 5 * 2 ** attempt, Math.max(1, budgetMs - (performance.now() - started))));
  }
}

const napCell = new Int32Array(new SharedArrayBuffer(4));

/**
 * The same, for the few writes that sit in synchronous code (the send loop's failure paths: a retry, a
 * permanent failure, giving a row back). Each try blocks for the connection's busy_timeout, and the
 * whole wait is bounded by `budgetMs`, kept small by the callers: these writes are rare and short, and
 * the lock they meet is most often a sibling send thread's 50 µs transaction held up by a busy CPU.
 */
export function retryWhileBusySync<T>(fn: () => T, budgetMs: number, final?: () => boolean): T {
  const started = performance.now();
  for (;;) {
    try {
      return fn();
    } catch (e) {
      if (!isBusy(e) || final?.() || performance.now() - started >= budgetMs) throw e;
    }
    Atomics.wait(napCell, 0, 0, 2);
  }
}
