// Readiness for GET /health: ok only when the database takes a write (a tiny settings upsert in an
// IMMEDIATE transaction, see db/open.ts probeWrite). A read-only file, a full disk or a lock held past
// WEB_LOCK_WAIT_MS answer a storage fault naming the cause. The answer is kept HEALTH_CACHE_MS so a
// tight probe loop costs at most one write per second.
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { retryWhileBusy } from '../db/busy.ts';
import { storageFault, type StorageFault } from '../db/faults.ts';
import { probeWrite, type Db } from '../db/open.ts';

/** /health writes at most once per this many milliseconds. */
export const HEALTH_CACHE_MS = 1_000;

export interface HealthDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'WEB_LOCK_WAIT_MS'>;
}

/** undefined: the database takes writes; otherwise the storage fault that stopped the probe. */
export type HealthCheck = () => Promise<StorageFault | undefined>;

export function createHealthCheck(deps: HealthDeps): HealthCheck {
  const { db, clock, config } = deps;
  let last: { at: number; fault: StorageFault | undefined } | undefined;
  return async () => {
    const now = performance.now();
    if (!last || now - last.at >= HEALTH_CACHE_MS) {
      let fault: StorageFault | undefined;
      try {
        // A lock held by a planner chunk passes in moments: retried like any web write (web/lock-retry.ts).
        await retryWhileBusy(() => probeWrite(db, clock.now()), config.WEB_LOCK_WAIT_MS, 4);
      } catch (e) {
        fault = storageFault(e);
        if (!fault) throw e;
      }
      last = { at: now, fault };
    }
    return last.fault;
  };
}
