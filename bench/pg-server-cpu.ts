// Where a PostgreSQL bench's CPU goes on the server side, when the server runs on this machine: the CPU
// time of a pool's own backends (their pid from pg_backend_pid(), their utime + stime from /proc), and of
// every postgres process together (the server's share of the machine, other sessions' backends included).
// Linux only; elsewhere, or with a remote server, the figures are null.
import { readdirSync, readFileSync } from 'node:fs';
import type pg from 'pg';

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** utime + stime of one process, in ms; undefined when it is gone or not readable. */
export function processCpuMs(pid: number): { comm: string; ms: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    const fields = stat.slice(close + 2).split(' ');
    return { comm: stat.slice(stat.indexOf('(') + 1, close), ms: (Number(fields[11]) + Number(fields[12])) * TICK_MS };
  } catch {
    return undefined;
  }
}

/** CPU ms of each postgres process now (server, its helpers, every session's backend), by pid; null: none readable. */
export function postgresCpuMs(): Map<number, number> | null {
  const byPid = new Map<number, number>();
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  } catch {
    return null;
  }
  for (const p of pids) {
    const cpu = processCpuMs(Number(p));
    if (cpu?.comm === 'postgres') byPid.set(Number(p), cpu.ms);
  }
  return byPid.size > 0 ? byPid : null;
}

/** CPU the postgres processes alive at `after` spent since `before` (one that started in between, from zero). */
export function postgresCpuSince(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}

/**
 * The CPU a pool's backends spend between start() and stop(): each connection's backend pid is asked once,
 * when it opens; a backend opened after start() counts from zero. stop() must run before the pool ends.
 */
export class BackendCpu {
  private readonly pids = new Set<number>();
  private readonly base = new Map<number, number>();

  constructor(pool: pg.Pool) {
    // The backend's pid came in its key data at connect (what a cancel request uses): no query on a client the
    // pool is about to hand out (pg 8.23 warns of a query on a busy client).
    pool.on('connect', (client) => {
      const pid = (client as pg.PoolClient & { processID?: number | null }).processID;
      if (typeof pid === 'number') this.pids.add(pid);
    });
  }

  start(): void {
    for (const pid of this.pids) this.base.set(pid, processCpuMs(pid)?.ms ?? 0);
  }

  /** ms of CPU since start(); null when no backend could be read (a remote server). */
  stop(): number | null {
    let total = 0;
    let read = false;
    for (const pid of this.pids) {
      const cpu = processCpuMs(pid);
      if (cpu?.comm !== 'postgres') continue;
      total += cpu.ms - (this.base.get(pid) ?? 0);
      read = true;
    }
    return read ? total : null;
  }
}
