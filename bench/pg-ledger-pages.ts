// What the claim and the record touch per row, counted rather than timed (issue 39 item 5): an edition of
// --rows digests in a fresh schema, then --batches claims of --batch rows, each recorded as sent, every
// statement run under EXPLAIN (ANALYZE, BUFFERS, WAL). Buffer reads and WAL records do not depend on the
// machine's load as CPU time does, so two builds compare on a shared machine. One session; local or remote.
//   npx tsx bench/pg-ledger-pages.ts [--rows 50000] [--batch 256] [--batches 40] [--setup 'ALTER TABLE …']
// Prints per row, for the claim and the record: shared buffers read, WAL records, WAL bytes (the statements'
// data-modifying nodes, which include their scans, so a page pruned on the way is counted).
import { parseArgs } from 'node:util';
import { migratePostgres } from '../src/db/postgres/migrate.ts';
import { planEdition } from '../src/ledger/postgres/plan.ts';
import * as sql from '../src/ledger/postgres/ledger-sql.ts';
import { seedSubscribers } from '../tests/helpers/pg-seed.ts';
import { withScratchSchema } from './pg-scratch.ts';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '50000' },
    batch: { type: 'string', default: '256' },
    batches: { type: 'string', default: '40' },
    setup: { type: 'string', default: '' },
  },
});
const url = /^postgres(ql)?:\/\//.test(process.env.DATABASE_URL ?? '') ? process.env.DATABASE_URL! : 'postgres://root@127.0.0.1:5432/test';
// Older trees have no record by place: the record by id is what they do.
const markSentAt = (sql as Record<string, string>).SQL_MARK_SENT_AT;
const FIELDS = ['Shared Hit Blocks', 'Shared Read Blocks', 'WAL Records', 'WAL Bytes', 'WAL FPI'] as const;
type Totals = Record<(typeof FIELDS)[number], number>;

interface PlanNode { 'Node Type': string; Plans?: PlanNode[]; [k: string]: unknown }
/** Sums the data-modifying nodes: each one's counts include its own scans (a CTE's UPDATE is not under the top node). */
function add(into: Totals, node: PlanNode): void {
  if (node['Node Type'] === 'ModifyTable') for (const f of FIELDS) into[f] += Number(node[f] ?? 0);
  for (const c of node.Plans ?? []) add(into, c);
}
const zero = (): Totals => Object.fromEntries(FIELDS.map((f) => [f, 0])) as Totals;

await withScratchSchema(url, { max: 1 }, async (_schema, pool) => {
  await migratePostgres(pool);
  for (const s of values.setup.split(';').filter((x) => x.trim())) await pool.query(s);
  await seedSubscribers(pool, Number(values.rows));
  await planEdition(pool, { edition: '2026-11-27', toPaper: 40 });
  await pool.query('VACUUM ANALYZE digests');
  await pool.query('VACUUM ANALYZE subscribers');
  const c = await pool.connect();
  const claim = zero();
  const record = zero();
  let n = 0;
  const explain = async (text: string, params: unknown[]) =>
    (await c.query(`EXPLAIN (ANALYZE, BUFFERS, WAL, FORMAT JSON) ${text}`, params)).rows[0]['QUERY PLAN'][0].Plan as PlanNode;
  for (let b = 0; b < Number(values.batches); b++) {
    const now = new Date().toISOString();
    add(claim, await explain(sql.SQL_CLAIM, ['bench', now, Number(values.batch)]));
    // EXPLAIN returns no rows: what the claim took is read back (outside the counts).
    const rows = (await c.query(`SELECT id, ctid::text AS place FROM digests WHERE status = 'sending' AND claimed_by = 'bench'`)).rows;
    if (rows.length === 0) break;
    n += rows.length;
    const ids = rows.map((r) => r.id);
    const params = [ids, 'bench', ids.map((id) => `<d${id}@digest.example.org>`), ids.map(() => 250), ids.map(() => '250 2.0.0 Ok: queued'), ids.map(() => now)];
    add(record, await explain(markSentAt ?? sql.SQL_MARK_SENT, markSentAt ? [...params, rows.map((r) => r.place)] : params));
  }
  c.release();
  const per = (t: Totals) => Object.fromEntries(FIELDS.map((f) => [f, +(t[f] / n).toFixed(2)]));
  console.log(JSON.stringify({ rows: n, batch: Number(values.batch), setup: values.setup || undefined, recordByPlace: !!markSentAt, claim: per(claim), record: per(record) }));
});
