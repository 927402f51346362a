// Readiness for GET /health: ok only when the database takes a write as a subscriber's would. Three checks,
// the first that fails answers (a storage fault naming the cause):
//   1. a tiny settings upsert in an IMMEDIATE transaction (db/open.ts probeWrite): a read-only file, an I/O
//      error or a lock held past WEB_LOCK_WAIT_MS;
//   2. the free space of the disk holding DATABASE_PATH against DB_MIN_FREE_MB: on a full disk the probe's
//      one page still fits into the space the WAL already holds, while a subscribe (a dozen pages) does not;
//   3. the last DB_FULL a web write met (noteWriteFault), until the disk has more free space than it had
//      then: a quota or a reserve the free-space figure does not show still takes the instance out.
// The answer is kept HEALTH_CACHE_MS so a tight probe loop costs at most one write per second.
import { statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { retryWhileBusy } from '../db/busy.ts';
import { StorageFault, storageFault } from '../db/faults.ts';
import { probeWrite, type Db } from '../db/open.ts';

/** /health writes at most once per this many milliseconds. */
export const HEALTH_CACHE_MS = 1_000;

export interface HealthDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'WEB_LOCK_WAIT_MS' | 'DB_MIN_FREE_MB'>;
  /** Bytes an unprivileged writer may still use on the file system holding `dir` (default: statfs). */
  freeBytes?: (dir: string) => number;
}

/** undefined: the database takes writes; otherwise the storage fault that stopped the probe. */
export type HealthCheck = (() => Promise<StorageFault | undefined>) & {
  /** A web write failed on a storage fault: /health answers it too while it may still hold (see 3 above). */
  noteWriteFault?: (fault: StorageFault) => void;
};

const statfsFree = (dir: string): number => {
  const s = statfsSync(dir);
  return Number(s.bavail) * Number(s.bsize);
};

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

export function createHealthCheck(deps: HealthDeps): HealthCheck {
  const { db, clock, config } = deps;
  const dir = db.memory ? undefined : dirname(db.name);
  const minFree = config.DB_MIN_FREE_MB * 1024 * 1024;
  const freeBytes = deps.freeBytes ?? statfsFree;
  let last: { at: number; fault: StorageFault | undefined } | undefined;
  /** The last DB_FULL a web write met, with the free space at that moment. */
  let full: { fault: StorageFault; free: number | undefined } | undefined;

  const free = (): number | undefined => {
    if (!dir) return undefined;
    try {
      return freeBytes(dir);
    } catch {
      return undefined; // a file system that cannot say: the write probe still speaks
    }
  };

  const spaceFault = (): StorageFault | undefined => {
    const now = free();
    if (now !== undefined && now < minFree) {
      return new StorageFault('DB_FULL', 'SQLITE_FULL', `${mb(now)} free on the disk holding DATABASE_PATH, under DB_MIN_FREE_MB=${config.DB_MIN_FREE_MB}`);
    }
    if (full && (full.free === undefined || now === undefined || now <= full.free)) return full.fault;
    full = undefined;
    return undefined;
  };

  const check: HealthCheck = async () => {
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
      last = { at: now, fault: fault ?? spaceFault() };
    }
    return last.fault;
  };
  check.noteWriteFault = (fault) => {
    if (fault.fault !== 'DB_FULL') return; // locks pass by themselves; read-only and I/O errors fail the probe too
    full = { fault, free: free() };
    last = undefined;
  };
  return check;
}
