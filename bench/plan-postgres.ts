// bench/plan.ts --engine postgres: the same population (built and matched on SQLite by bench/plan.ts), copied
// into a fresh PostgreSQL schema (`digest copy`), then matched again there from scratch in the in-memory
// FTS5 index (match/postgres/match.ts) and planned (plan/postgres/plan.ts). Figures: wall time, and this
// process's CPU (the server's own CPU is not in it: on this 2-core machine wall minus client CPU is
// mostly the server's). DATABASE_URL names the server (default: the local one); the schema is dropped after.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import type { Clock } from '../src/clock.ts';
import type { Db } from '../src/db/open.ts';
import { copySqliteToPostgres } from '../src/db/postgres/copy.ts';
import { createPool } from '../src/db/postgres/pool.ts';
import { matchPendingPg } from '../src/match/postgres/match.ts';
import { planDigestsPg } from '../src/plan/postgres/plan.ts';

const URL = process.env.DATABASE_URL?.startsWith('postgres') ? process.env.DATABASE_URL : 'postgres://root@127.0.0.1:5432/test';

/** CPU seconds of a server process on this machine (/proc: utime + stime, in clock ticks of 1/100 s). */
function serverCpuS(pid: number): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return Number.NaN; // the server is elsewhere
  }
}

function cpuMs(since: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(since);
  return (d.user + d.system) / 1000;
}

export async function benchPlanPostgres(db: Db, clock: Clock, log: (l: string) => void): Promise<void> {
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  // One connection: the server's CPU is that one backend's (read from /proc when the server runs here).
  const pool = createPool(URL, { schema, max: 1 });
  try {
    let t = performance.now();
    const copied = await copySqliteToPostgres(db as never, pool);
    if (!copied.ok) throw new Error('copy counts differ');
    log(`postgres: copied into ${schema} in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    // Match again on PostgreSQL from nothing, as a first tick would.
    await pool.query('TRUNCATE query_matches');
    await pool.query('UPDATE queries SET matched_through = 0');
    await pool.query('VACUUM ANALYZE');
    const backend = (await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    t = performance.now();
    let cpu = process.cpuUsage();
    let server = serverCpuS(backend);
    const m = await matchPendingPg(pool);
    log(
      `postgres match: ${m.queries} queries, ${m.matches.toLocaleString()} matches in ${((performance.now() - t) / 1000).toFixed(2)} s ` +
        `(CPU: client ${(cpuMs(cpu) / 1000).toFixed(2)} s, server ${(serverCpuS(backend) - server).toFixed(2)} s)`,
    );
    await pool.query('ANALYZE');
    t = performance.now();
    cpu = process.cpuUsage();
    server = serverCpuS(backend);
    const steps: string[] = [];
    const r = await planDigestsPg(pool, { clock, mode: 'now', onStep: (name, ms) => steps.push(`${name} ${ms.toFixed(0)} ms`) });
    const ms = performance.now() - t;
    log(
      `postgres plan: ${r.planned.toLocaleString()} digests (${r.slots.toLocaleString()} slots, ${r.items.toLocaleString()} items) in ${(ms / 1000).toFixed(2)} s = ` +
        `${Math.round(r.planned / (ms / 1000)).toLocaleString()} digests/s; CPU: client ${(cpuMs(cpu) / 1000).toFixed(2)} s, server ${(serverCpuS(backend) - server).toFixed(2)} s`,
    );
    log(`  steps: ${steps.join(', ')}`);
    const lists = (await pool.query(`SELECT count(*)::int AS n, coalesce(sum(paper_count), 0)::int AS papers FROM query_lists`)).rows[0];
    log(`  query lists written: ${lists.n.toLocaleString()} of ${lists.papers.toLocaleString()} papers`);
  } finally {
    await pool.end();
    if (process.env.BENCH_KEEP_PG) log(`kept schema ${schema}`);
    else await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  }
}
