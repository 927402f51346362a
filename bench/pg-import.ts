// `digest import` on PostgreSQL (src/operator/postgres/import.ts): n rows (half confirmed, two topics each)
// into a fresh schema of the local PostgreSQL; prints wall time and this process's CPU time.
//   npx tsx bench/pg-import.ts 10000
import { writeFileSync } from 'node:fs';
import { createTestSchema } from '../tests/helpers/postgres.ts';
import { migratePostgres } from '../src/db/postgres/migrate.ts';
import { importCsvPg } from '../src/operator/postgres/import.ts';
import { systemClock } from '../src/clock.ts';
import { silentLogger } from '../src/log.ts';
const n = Number(process.argv[2] ?? 10000);
const topics = ['diffusion models', 'graph networks', 'reinforcement learning', 'mixture of experts', 'protein folding', 'speculative decoding'];
const file = `/tmp/pg-consent-bench-${n}.csv`;
writeFileSync(file, 'email,topics,confirmed\n' + Array.from({ length: n }, (_, i) => `user${i}@bench.example,${topics[i % 6]};${topics[(i + 1) % 6]},${i % 2 ? 'yes' : 'no'}`).join('\n') + '\n');
const s = await createTestSchema();
try {
  await migratePostgres(s.pool);
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  const r = await importCsvPg({ pool: s.pool, clock: systemClock, logger: silentLogger, config: { DIGEST_TZ: 'UTC', DIGEST_HOUR: 8 } }, file);
  const ms = performance.now() - t0;
  const c = process.cpuUsage(cpu);
  console.log(JSON.stringify({ n, created: r.created, wallMs: Math.round(ms), clientCpuMs: Math.round((c.user + c.system) / 1000), rowsPerSecWall: Math.round(n / (ms / 1000)) }));
} finally {
  await s.drop();
}
