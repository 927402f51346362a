// `digest import` on PostgreSQL (src/operator/postgres/import.ts): n rows (half confirmed, two topics each)
// into a fresh schema of the local PostgreSQL; prints wall time, this process's CPU time and the CPU of the
// pool's PostgreSQL backends (when the server runs on this machine), per row. With --sqlite, SQLite's
// `digest import` of the same file into a fresh database file too, for the same figures beside it.
//   npx tsx bench/pg-import.ts 10000 [--sqlite]
import { writeFileSync } from 'node:fs';
import { createTestSchema } from '../tests/helpers/postgres.ts';
import { tempDatabase } from '../tests/helpers/seed.ts';
import { migratePostgres } from '../src/db/postgres/migrate.ts';
import { importCsvPg } from '../src/operator/postgres/import.ts';
import { importSubscribersCsv } from '../src/subscribers/import.ts';
import { systemClock } from '../src/clock.ts';
import { silentLogger } from '../src/log.ts';
import { BackendCpu } from './pg-server-cpu.ts';

const n = Number(process.argv[2] ?? 10000);
const withSqlite = process.argv.includes('--sqlite');
const topics = ['diffusion models', 'graph networks', 'reinforcement learning', 'mixture of experts', 'protein folding', 'speculative decoding'];
const file = `/tmp/pg-consent-bench-${n}.csv`;
writeFileSync(file, 'email,topics,confirmed\n' + Array.from({ length: n }, (_, i) => `user${i}@bench.example,${topics[i % 6]};${topics[(i + 1) % 6]},${i % 2 ? 'yes' : 'no'}`).join('\n') + '\n');
const config = { DIGEST_TZ: 'UTC', DIGEST_HOUR: 8 };

function figures(engine: string, created: number, ms: number, cpu: NodeJS.CpuUsage, serverMs: number | null) {
  const clientMs = (cpu.user + cpu.system) / 1000;
  return {
    engine,
    n,
    created,
    wallMs: Math.round(ms),
    rowsPerSecWall: Math.round(n / (ms / 1000)),
    clientCpuMs: Math.round(clientMs),
    clientCpuUsPerRow: Math.round((clientMs * 1000) / n),
    serverCpuMs: serverMs,
    serverCpuUsPerRow: serverMs === null ? null : Math.round((serverMs * 1000) / n),
  };
}

const s = await createTestSchema();
const backends = new BackendCpu(s.pool);
try {
  await migratePostgres(s.pool);
  backends.start();
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  const r = await importCsvPg({ pool: s.pool, clock: systemClock, logger: silentLogger, config }, file);
  const ms = performance.now() - t0;
  console.log(JSON.stringify(figures('postgres', r.created, ms, process.cpuUsage(cpu), backends.stop())));
} finally {
  await s.drop();
}

if (withSqlite) {
  const lite = tempDatabase('pg-import-bench-');
  try {
    const cpu = process.cpuUsage();
    const t0 = performance.now();
    const r = await importSubscribersCsv({ db: lite.db, clock: systemClock, logger: silentLogger, config }, file);
    const ms = performance.now() - t0;
    console.log(JSON.stringify(figures('sqlite', r.created, ms, process.cpuUsage(cpu), null)));
  } finally {
    lite.cleanup();
  }
}
