// Who holds a claim, and whether that holder is still alive.
import { hostname } from 'node:os';

const HOST = hostname();
const STARTED_AT = Math.round(performance.timeOrigin);

/** Who holds a claim: host:pid:process-start-ms, so a dead claimant can be told apart. */
export function claimantId(): string {
  return `${HOST}:${process.pid}:${STARTED_AT}`;
}

/** A claim older than this is presumed dead even when its process cannot be checked (another host). */
export const DEFAULT_LEASE_MS = 15 * 60 * 1000;

/** True when the claimant's process is gone (same host, process gone or restarted under the same pid). */
export function claimantIsDead(claimant: string): boolean {
  const m = /^(.*):(\d+):(\d+)$/.exec(claimant);
  if (!m) return true; // not written by this code: nobody will finish it
  const [, host, pidText, started] = m;
  if (host !== HOST) return false; // cannot check another machine: the lease decides
  const pid = Number(pidText);
  if (pid === process.pid) return Number(started) !== STARTED_AT;
  try {
    process.kill(pid, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
