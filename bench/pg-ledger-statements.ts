// The claim and record statements alone, one session, where their server CPU goes (issue 39): an edition of
// --rows digests planned in a fresh schema, then claim --batch rows and record them as sent until none is
// left, reading the session's backend CPU (/proc, a local server only) around each statement.
//   npx tsx bench/pg-ledger-statements.ts [--rows 50000] [--batch 256]
// Prints per row: wall and server CPU of the claim and of the record, and the tables' HOT share.
import { parseArgs } from 'node:util';
import { migratePostgres } from '../src/db/postgres/migrate.ts';
import { planEdition } from '../src/ledger/postgres/plan.ts';
import { SQL_CLAIM, SQL_MARK_SENT } from '../src/ledger/postgres/ledger-sql.ts';
import { seedSubscribers } from '../tests/helpers/pg-seed.ts';
import { processCpuMs } from './pg-server-cpu.ts';
import { withScratchSchema } from './pg-scratch.ts';

const { values } = parseArgs({ options: { rows: { type: 'string', default: '50000' }, batch: { type: 'string', default: '256' } } });
const url = /^postgres(ql)?:\/\//.test(process.env.DATABASE_URL ?? '') ? process.env.DATABASE_URL! : 'postgres://root@127.0.0.1:5432/test';
const batch = Number(values.batch);
await withScratchSchema(url, { max: 1 }, async (schema, pool) => {
  await migratePostgres(pool);
  await seedSubscribers(pool, Number(values.rows));
  await planEdition(pool, { edition: '2026-11-27', toPaper: 40 });
  await pool.query('VACUUM ANALYZE digests');
  await pool.query('VACUUM ANALYZE subscribers');
  const c = await pool.connect();
  const pid = (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  const cpu = () => processCpuMs(pid)?.ms ?? NaN;
  const now = new Date().toISOString();
  const t = { claimMs: 0, claimCpuMs: 0, recordMs: 0, recordCpuMs: 0 };
  let n = 0;
  for (;;) {
    let [w, k] = [performance.now(), cpu()];
    const rows = (await c.query<{ id: number }>(SQL_CLAIM, ['bench', now, batch])).rows;
    t.claimMs += performance.now() - w;
    t.claimCpuMs += cpu() - k;
    if (rows.length === 0) break;
    n += rows.length;
    [w, k] = [performance.now(), cpu()];
    const ids = rows.map((r) => r.id);
    await c.query(SQL_MARK_SENT, [ids, 'bench', ids.map((id) => `m${id}`), ids.map(() => 250), ids.map(() => '250 ok'), ids.map(() => now)]);
    t.recordMs += performance.now() - w;
    t.recordCpuMs += cpu() - k;
  }
  const hot = await c.query(
    `SELECT relname, n_tup_hot_upd::int AS hot, n_tup_upd::int AS upd FROM pg_stat_user_tables WHERE schemaname = $1 AND relname IN ('digests', 'subscribers')`,
    [schema],
  );
  c.release();
  const us = (ms: number) => Math.round((ms * 1000) / n);
  console.log(
    JSON.stringify({
      rows: n,
      batch,
      claimUsPerRow: us(t.claimMs),
      claimServerCpuUsPerRow: us(t.claimCpuMs),
      recordUsPerRow: us(t.recordMs),
      recordServerCpuUsPerRow: us(t.recordCpuMs),
      hotUpdates: Object.fromEntries(hot.rows.map((r) => [r.relname, `${r.hot}/${r.upd}`])),
    }),
  );
});
