// What a shared rate limit costs a request: one hit() on the SQLite adapter (a file in WAL mode) and on
// the PostgreSQL adapter (when it answers), and a whole GET /api/topics/preview (Fastify inject, the
// sample batch ingested) whose limit counts in that store. CPU per unit from process.cpuUsage (wall rates
// are noisy on a shared machine).
//   npx tsx bench/shared-limits.ts [--hits 20000] [--previews 2000] [--pg postgres://root@127.0.0.1:5432/test]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/open.ts';
import { createSqliteLimits, type SharedLimits } from '../src/db/shared-limits.ts';
import { createPostgresLimits } from '../src/db/postgres/shared-limits.ts';
import { parseFeed } from '../src/ingest/detect.ts';
import { silentLogger } from '../src/log.ts';
import { createAppWithDb } from '../src/main.ts';
import { SAMPLE_BATCH } from '../src/serve.ts';
import { buildServer } from '../src/web/server.ts';

const { values } = parseArgs({
  options: {
    hits: { type: 'string', default: '20000' },
    previews: { type: 'string', default: '2000' },
    pg: { type: 'string', default: 'postgres://root@127.0.0.1:5432/test' },
  },
});
const HITS = Number(values.hits);
const PREVIEWS = Number(values.previews);

interface Cost {
  cpuUs: number;
  wallUs: number;
}

async function measure(n: number, fn: (i: number) => Promise<unknown>): Promise<Cost> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await fn(i);
  const cpu = process.cpuUsage(cpu0);
  return { cpuUs: (cpu.user + cpu.system) / n, wallUs: ((performance.now() - t0) * 1000) / n };
}

const show = (what: string, c: Cost) => console.log(`${what.padEnd(52)} ${c.cpuUs.toFixed(1).padStart(7)} µs CPU  ${c.wallUs.toFixed(1).padStart(7)} µs wall`);
const address = (i: number) => `10.0.${(i >> 8) & 255}.${i & 255}`;

async function storeAlone(name: string, limits: SharedLimits): Promise<void> {
  const now = Date.now();
  await measure(200, (i) => limits.hit('bench', address(i), 60_000, now)); // warm: statements, pool
  show(`${name}: hit() over 1,000 addresses`, await measure(HITS, (i) => limits.hit('bench', address(i % 1000), 60_000, now + i)));
}

/** The counters in this process's memory, as @fastify/rate-limit's default store kept them: the baseline. */
function inMemory(): SharedLimits {
  const rows = new Map<string, { hits: number; until: number }>();
  return {
    async hit(purpose, key, windowMs, now) {
      const k = `${purpose} ${key}`;
      const r = rows.get(k);
      if (!r || r.until <= now) rows.set(k, { hits: 1, until: now + windowMs });
      else r.hits++;
      const cur = rows.get(k)!;
      return { hits: cur.hits, resetAtMs: cur.until };
    },
    take: async () => ({ taken: true, untilMs: 0 }),
    release: async () => {},
    close: async () => {},
  };
}

async function previews(dir: string): Promise<void> {
  const config = loadConfig({ DATABASE_PATH: join(dir, 'app.sqlite'), SECRET_KEY: 'bench-secret-0123456789abcdef0123456789', LOG_LEVEL: 'silent', SMTP_URL: 'smtp://127.0.0.1:9', SOURCES: '' });
  const { app } = await createAppWithDb(config, { logger: silentLogger });
  app.operator.ingest(parseFeed(readFileSync(SAMPLE_BATCH, 'utf8'), 'batch', {}));
  const shared = buildServer(app);
  const memory = buildServer({ ...app, limits: inMemory() });
  await Promise.all([shared.ready(), memory.ready()]);
  const get = (server: typeof shared) => (i: number) =>
    server.inject({ method: 'GET', url: '/api/topics/preview?q=language%20models', remoteAddress: address(i % 1000) });
  // Alternated, three rounds each, so a busy moment of the machine falls on both.
  for (let round = 0; round < 3; round++) {
    await measure(200, get(memory));
    show(`round ${round + 1}: preview, limit in this process's memory`, await measure(PREVIEWS, get(memory)));
    await measure(200, get(shared));
    show(`round ${round + 1}: preview, limit in the SQLite file`, await measure(PREVIEWS, get(shared)));
  }
  await Promise.all([shared.close(), memory.close()]);
  await app.close();
}

const dir = mkdtempSync(join(tmpdir(), 'bench-limits-'));
try {
  const db = openDatabase(join(dir, 'limits.sqlite'));
  await storeAlone('SQLite (WAL, synchronous=NORMAL)', createSqliteLimits(db, { lockWaitMs: 1000 }));
  db.close();
  const probe = new pg.Client({ connectionString: values.pg });
  const reachable = await probe.connect().then(
    () => true,
    () => false,
  );
  if (reachable) {
    const schema = `bench_limits_${process.pid}`;
    await probe.query(`CREATE SCHEMA ${schema}`);
    const limits = createPostgresLimits({ url: values.pg, schema });
    try {
      await storeAlone('PostgreSQL (pool of 4, one client)', limits);
    } finally {
      await limits.close();
      await probe.query(`DROP SCHEMA ${schema} CASCADE`);
    }
  } else console.log(`PostgreSQL at ${values.pg} does not answer: skipped`);
  await probe.end().catch(() => {});
  await previews(dir);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
