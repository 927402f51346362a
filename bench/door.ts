// CPU (this process) and wall time per call of the web's subscriber calls: subscribe (its confirmation
// notice sent to a null mailer), confirm, getPreferences.
//   npx tsx bench/door.ts <checkout root> door|service|postgres [n]
// door / service: SQLite, through the door on this checkout, or the service of a checkout from before the
// door (to compare); postgres: PostgreSQL's door (DATABASE_URL, default the local test server), in a
// fresh schema dropped after. One call at a time (BENCHMARKS.md).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const [root, via, nArg] = process.argv.slice(2);
const n = Number(nArg ?? 1500);
const { loadConfig } = await import(join(root!, 'src/config.ts'));
const { createAppWithDb } = await import(join(root!, 'src/main.ts'));
const { silentLogger } = await import(join(root!, 'src/log.ts'));
const dir = mkdtempSync(join(tmpdir(), 'doorbench-'));
const config = loadConfig({ DATABASE_PATH: join(dir, 'd.db'), SMTP_URL: 'smtp://127.0.0.1:9', SECRET_KEY: 'x'.repeat(40), PUBLIC_URL: 'https://d.example.org', LOG_LEVEL: 'silent', SUBSCRIBE_RATE_LIMIT: '100000' });
const mailer = { send: async () => ({ response: '250 ok', messageId: 'x' }), close: async () => {} };
const { app, db } = await createAppWithDb(config, { logger: silentLogger, mailer });
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const out: Record<string, number> = {};
const pgUrl = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';
const schema = `pd_bench_${process.pid}`;
let pgDoor: { served: typeof app.door; close(): Promise<void> } | undefined;
let pool: import('pg').Pool | undefined;
if (via === 'postgres') {
  const { createPool } = await import(join(root!, 'src/db/postgres/pool.ts'));
  const { migratePostgres } = await import(join(root!, 'src/db/postgres/migrate.ts'));
  const { openPostgresDoor } = await import(join(root!, 'src/main.ts'));
  pool = createPool(pgUrl) as import('pg').Pool;
  await pool.query(`CREATE SCHEMA ${schema}`);
  await pool.end();
  pool = createPool(pgUrl, { schema }) as import('pg').Pool;
  await migratePostgres(pool);
  pgDoor = await openPostgresDoor({ ...app, config: { ...app.config, DATABASE_URL: pgUrl, DATABASE_SCHEMA: schema } });
}
const port = via === 'door' ? app.door : via === 'postgres' ? pgDoor!.served : app.subscribers;
const rowsSql = `SELECT id, token_salt AS "tokenSalt" FROM subscribers WHERE email LIKE 's%' ORDER BY id`;
// warm-up
for (let i = 0; i < 100; i++) await port.subscribe({ email: `w${i}@example.org`, topics: ['graph neural networks'] }, { waitForEmail: false });
let t = cpu();
let wall = performance.now();
for (let i = 0; i < n; i++) await port.subscribe({ email: `s${i}@example.org`, topics: ['graph neural networks', 'diffusion'] }, { waitForEmail: false });
await new Promise((r) => setTimeout(r, 200));
if (via !== 'postgres') await app.notices.sendDue();
out.subscribe_ms = (cpu() - t) / n;
out.subscribe_wall_ms = (performance.now() - wall - 200) / n;
const rows = (pool ? (await pool.query(rowsSql)).rows : db.prepare(rowsSql).all()) as Array<{ id: number; tokenSalt: string }>;
const tok = (u: string) => u.split('/').pop()!;
t = cpu();
wall = performance.now();
for (const r of rows) await port.confirm(tok(app.links.confirm(r)));
out.confirm_ms = (cpu() - t) / rows.length;
out.confirm_wall_ms = (performance.now() - wall) / rows.length;
t = cpu();
wall = performance.now();
for (const r of rows) await port.getPreferences(tok(app.links.preferences(r)));
out.prefs_ms = (cpu() - t) / rows.length;
out.prefs_wall_ms = (performance.now() - wall) / rows.length;
const sentSql = `SELECT count(*)::int AS c FROM notices WHERE status = 'sent'`.replace('::int', pool ? '::int' : '');
const sent = (pool ? (await pool.query(sentSql)).rows[0] : db.prepare(sentSql).get()) as { c: number };
console.log(JSON.stringify({ root, via, n, sent: sent.c, confirmed: rows.length, ...Object.fromEntries(Object.entries(out).map(([k, v]) => [k, Number(v.toFixed(4))])) }));
if (pgDoor) {
  await pgDoor.close();
  await pool!.query(`DROP SCHEMA ${schema} CASCADE`);
  await pool!.end();
}
await app.close();
rmSync(dir, { recursive: true, force: true });
