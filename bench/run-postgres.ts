// `npm run bench -- --engine postgres --workers N [--lanes L] [--subscribers …] [--topics-profile …] [--keep]`
// (bench/run.ts hands over here): the SQLite bench's population (bench/generate.ts, same seed), its edition
// stored in PostgreSQL, in a scratch schema of DATABASE_URL (or the local server), dropped afterwards unless
// --keep. Everything runs as an operator runs it on PostgreSQL, with the compiled CLI (bin/digest.js):
// `digest migrate`, `digest import <csv>`, `digest ingest <batch>`, `digest plan --now --no-fetch` (match and
// plan there), then N `digest worker --once` processes at once (real render, real SMTP into Postfix's
// smtp-sink, as the SQLite bench) until the edition is sent. Lanes: the SMTP pool (--pool, 10) split over
// the workers, so the workers hold as many relay connections together as the ceiling's pool.
// Reported: digests/s (wall, spawn to last exit), the same run's ceiling (bench/ceiling.ts: one pre-built
// message of the mean size sent over and over through the service's SMTP pool, same sink and pool) and the
// share; CPU per digest of the workers and of their PostgreSQL backends (and of every postgres process);
// each worker's time in ledger calls (claim, record) per digest and peak RSS (bench/pg-worker-meter.mjs);
// and the check that every planned digest was sent once: `sent` rows = planned = the sink's message count
// (exit 1 otherwise). Needs Postfix's smtp-sink (it counts the messages); the SQLite-only options (--sink,
// --smtp, --send-in-child, --learning, --profile, the naive baseline) do not apply here.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { applicationName, createPool } from '../src/db/postgres/pool.ts';
import { silentLogger } from '../src/log.ts';
import { createMessageBuilder } from '../src/mail/raw-message.ts';
import { createPgDigests } from '../src/send/postgres/pg-digests.ts';
import type { ClaimedDigest } from '../src/ledger/postgres/ledger.ts';
import { measureCeiling } from './ceiling.ts';
import { generateInChild } from './children.ts';
import { fmt } from './measure.ts';
import { startPostfixSink, type PostfixSink } from './postfix-sink.ts';
import { BackendWatch, digestCli, runWorkers, type CliStep, type WorkersResult } from './pg-workers.ts';

type Options = Record<string, string | boolean | undefined>;

const MAIL_FROM = 'Paper Digest <digest@bench.example>';
const log = (line: string) => process.stderr.write(`${line}\n`);

export async function runPostgresBench(o: Options): Promise<void> {
  const n = (k: string, d: number) => {
    const v = o[k] === undefined ? d : Number(o[k]);
    if (!Number.isInteger(v) || v <= 0) throw new Error(`--${k}: expected a positive whole number, got ${String(o[k])}`);
    return v;
  };
  const subscribers = n('subscribers', 10_000);
  const pool = n('pool', 10);
  const workers = n('workers', 1);
  const lanes = n('lanes', Math.max(1, Math.round(pool / workers)));
  const profile = String(o['topics-profile']);
  const url = /^postgres(ql)?:\/\//.test(process.env.DATABASE_URL ?? '') ? process.env.DATABASE_URL! : 'postgres://root@127.0.0.1:5432/test';
  const loadAtStart = loadavg()[0]!;
  const dir = mkdtempSync(join(tmpdir(), 'digest-bench-pg-'));
  const schema = `pd_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  let sink: PostfixSink | undefined;
  try {
    sink = await startPostfixSink({ count: true });
    await admin.connect();
    log(`bench (PostgreSQL): ${fmt.int(subscribers)} subscribers, ${profile}; schema ${schema}; ${workers} worker(s) × ${lanes} lanes; SMTP ${sink.url} (Postfix's smtp-sink); data in ${dir}`);
    const csv = join(dir, 'subscribers.csv');
    const batch = join(dir, 'batch.json');
    const population = await generateInChild(
      { subscribers, papers: n('papers', 1000), topics: n('topics', 3), profile, seed: String(o.seed ?? '1') },
      batch,
      csv,
    );
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      DATABASE_URL: url,
      DATABASE_SCHEMA: schema,
      SMTP_URL: sink.url,
      SMTP_POOL_SIZE: String(pool),
      SECRET_KEY: 'bench-secret-key-0123456789abcdef0123456789',
      PUBLIC_URL: 'https://digest.bench.example',
      MAIL_FROM,
      DIGEST_TZ: 'UTC',
      LOG_LEVEL: 'warn',
    };
    const setup = await setupEdition(env, csv, batch, admin, schema);
    const planned = await counts(admin, schema);
    log(`  planned: ${fmt.int(planned.planned)} digests, ${planned.papers.toFixed(1)} papers each on average`);
    const sinkBefore = Math.max(0, sink.stats().messages);
    const send = await runWorkers(workers, lanes, env, dir, admin, schema);
    const sinkMessages = Math.max(0, sink.stats().messages) - sinkBefore;
    const after = await counts(admin, schema);
    const ceiling = await ceilingOf(url, schema, env, send, sink.url, pool, o['ceiling-messages']);
    const report = { subscribers, profile, workers, lanes, pool, population, setup, planned, after, send, sinkMessages, ceiling, loadAtStart, schema };
    console.log(reportLines(report).join('\n'));
    if (typeof o.json === 'string') writeFileSync(o.json, JSON.stringify(report, null, 1));
    if (after.sent !== planned.planned || sinkMessages !== planned.planned) process.exitCode = 1;
  } finally {
    sink?.stop();
    if (o.keep) log(`kept: schema ${schema}, files in ${dir}`);
    else {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch((e: Error) => log(`could not drop ${schema}: ${e.message}`));
      rmSync(dir, { recursive: true, force: true });
    }
    await admin.end().catch(() => {});
  }
}

/** The edition, as an operator makes it on PostgreSQL: each step the compiled CLI in its own process. */
async function setupEdition(env: Record<string, string>, csv: string, batch: string, admin: pg.Client, schema: string): Promise<Record<string, CliStep>> {
  const steps: Record<string, CliStep> = {};
  const commands: Array<[string, string[]]> = [
    ['migrate', ['migrate']],
    ['import', ['import', csv]],
    ['ingest', ['ingest', batch]],
    ['plan', ['plan', '--now', '--no-fetch']],
  ];
  for (const [name, args] of commands) {
    log(`… digest ${args.join(' ')}`);
    const s = await digestCli(args, env, [], new BackendWatch(admin, applicationName(schema)));
    steps[name] = s;
    const last = s.stdout.trim().split('\n').pop() ?? '';
    log(`  ${name}: ${fmt.s(s.seconds)} s, CPU ${fmt.s(s.cpuSeconds)} s (its backends ${fmt.s((s.backendsMs ?? 0) / 1000)} s), peak RSS ${s.peakRssMb} MB  ${last.slice(0, 160)}`);
  }
  return steps;
}

async function counts(admin: pg.Client, schema: string) {
  const r = await admin.query<{ status: string; n: number; papers: string }>(
    `SELECT status, count(*)::int AS n, avg(paper_count)::float8 AS papers FROM ${schema}.digests GROUP BY status`,
  );
  const by = Object.fromEntries(r.rows.map((x) => [x.status, x.n]));
  const all = r.rows.reduce((s, x) => s + x.n, 0);
  const papers = r.rows.reduce((s, x) => s + Number(x.papers) * x.n, 0) / Math.max(1, all);
  return { planned: by.planned ?? 0, sent: by.sent ?? 0, rows: all, byStatus: by, papers };
}

/**
 * The ceiling of this run: a sent digest whose message is nearest the mean size the workers handed the relay,
 * built once as the worker builds it (pg-digests.ts over the batch mirror, the SMTP mailer's message builder),
 * then sent over and over by the service's SMTP pool into the same sink with the same pool size.
 */
async function ceilingOf(url: string, schema: string, env: Record<string, string>, send: WorkersResult, smtpUrl: string, pool: number, messages: unknown) {
  const sent = send.workers.reduce((s, w) => s + w.meter.smtp.messages, 0);
  const meanBytes = send.workers.reduce((s, w) => s + w.meter.smtp.bytes, 0) / Math.max(1, sent);
  const db = createPool(url, { schema, max: 2 });
  let raw: Buffer;
  try {
    const rows = (await db.query<ClaimedDigest>(`SELECT id, subscriber_id, edition, to_paper, verp_nonce, attempts FROM digests WHERE status = 'sent' ORDER BY id LIMIT 300`)).rows;
    const config = loadConfig({ ...env, LOG_LEVEL: 'silent' });
    const digests = await createPgDigests(db, config, silentLogger);
    await digests.prepare(rows);
    const builder = createMessageBuilder({ from: MAIL_FROM });
    let best: Buffer | undefined;
    for (const row of rows) {
      const built = digests.build(row);
      if (built.kind !== 'mail') continue;
      const b = builder.build(built.mail, `ceiling-${row.id}@bench.example`, new Date()).raw;
      if (!best || Math.abs(b.length - meanBytes) < Math.abs(best.length - meanBytes)) best = Buffer.from(b);
    }
    digests.close();
    if (!best) throw new Error('ceiling: no sent digest to build');
    raw = best;
  } finally {
    await db.end();
  }
  const count = messages ? Number(messages) : Math.min(Math.max(sent, 2_000), 50_000);
  log(`… ceiling: ${fmt.int(count)} × one ${fmt.int(raw.length / 1024)} KB message (mean sent ${fmt.int(meanBytes / 1024)} KB), pool ${pool}`);
  const cpu0 = process.cpuUsage();
  const c = await measureCeiling({ url: smtpUrl, poolSize: pool, raw, from: MAIL_FROM, to: 'reader@bench.example', messages: count });
  const cpu = process.cpuUsage(cpu0);
  return { ...c, meanBytes, cpuMsPerMessage: (cpu.user + cpu.system) / 1000 / count };
}

type Report = {
  subscribers: number;
  profile: string;
  workers: number;
  lanes: number;
  pool: number;
  setup: Record<string, CliStep>;
  planned: Awaited<ReturnType<typeof counts>>;
  after: Awaited<ReturnType<typeof counts>>;
  send: WorkersResult;
  sinkMessages: number;
  ceiling: Awaited<ReturnType<typeof ceilingOf>>;
  loadAtStart: number;
};

/** The pool statements the workers waited on longest, summed over the workers. */
function topStatements(send: WorkersResult, sent: number): string {
  const all = new Map<string, { calls: number; ms: number }>();
  for (const w of send.workers) {
    for (const [k, v] of Object.entries(w.meter.statements ?? {})) {
      const a = all.get(k) ?? { calls: 0, ms: 0 };
      all.set(k, { calls: a.calls + v.calls, ms: a.ms + v.ms });
    }
  }
  const top = [...all].sort((a, b) => b[1].ms - a[1].ms).slice(0, 8);
  return top.map(([k, v]) => `\n    ${(v.ms / Math.max(1, sent)).toFixed(3)} ms (${(v.calls / Math.max(1, sent)).toFixed(2)})  ${k}`).join('');
}

function reportLines(r: Report): string[] {
  const sent = r.send.workers.reduce((s, w) => s + w.counts.sent, 0);
  const per = (ms: number | null) => (ms === null ? 'n/a' : `${(ms / Math.max(1, sent)).toFixed(3)} ms`);
  const sum = (f: (w: WorkersResult['workers'][number]) => number) => r.send.workers.reduce((s, w) => s + f(w), 0);
  const rate = sent / r.send.seconds;
  const setupS = Object.values(r.setup).reduce((s, x) => s + x.seconds, 0);
  const e2eS = r.setup.ingest!.seconds + r.setup.plan!.seconds + r.send.seconds;
  const claim = sum((w) => w.meter.ledger.claim.ms);
  const record = sum((w) => w.meter.ledger.record.ms);
  const ok = r.after.sent === r.planned.planned && r.sinkMessages === r.planned.planned;
  return [
    '',
    `paper-digest benchmark on PostgreSQL — ${fmt.int(r.subscribers)} subscribers (${r.profile} profile), ${r.workers} \`digest worker\` process(es) × ${r.lanes} lanes, ceiling pool ${r.pool}, relay Postfix's smtp-sink`,
    `machine: ${cpus().length} × ${cpus()[0]?.model.trim() ?? '?'}, ${Math.round(totalmem() / 2 ** 30)} GB, Node ${process.versions.node}; load average at start ${r.loadAtStart.toFixed(2)}, at end ${loadavg()[0]!.toFixed(2)} (other processes share the cores)`,
    `edition: ${fmt.int(r.planned.planned)} digests planned (${((r.planned.planned / r.subscribers) * 100).toFixed(1)}% of subscribers), ${r.planned.papers.toFixed(1)} papers each on average; messages mean ${fmt.int(r.ceiling.meanBytes / 1024)} KB as handed to the relay`,
    '',
    'setup (compiled CLI on PostgreSQL)   seconds   CPU s: the command   its backends   rest of the server   peak RSS',
    ...Object.entries(r.setup).map(
      ([name, s]) =>
        `  digest ${name.padEnd(10)} ${fmt.s(s.seconds).padStart(20)}   ${fmt.s(s.cpuSeconds).padStart(18)}   ${s.backendsMs == null ? 'n/a' : fmt.s(s.backendsMs / 1000).padStart(12)}   ` +
        `${s.postgresMs === null ? 'n/a' : fmt.s(s.postgresMs / 1000).padStart(18)}   ${s.peakRssMb} MB`,
    ),
    `  (setup total ${fmt.s(setupS)} s)`,
    '',
    `SEND: ${fmt.int(sent)} digests in ${fmt.s(r.send.seconds)} s (first spawn to last exit) = ${fmt.rate(rate)} digests/s; per worker sent ${r.send.workers.map((w) => fmt.int(w.counts.sent)).join(' + ')}`,
    `  ceiling (one pre-built ${fmt.int(r.ceiling.messageBytes / 1024)} KB message, service's SMTP pool of ${r.pool}, same sink): ${fmt.rate(r.ceiling.perSecond)} messages/s -> send = ${((rate / r.ceiling.perSecond) * 100).toFixed(0)}% of the ceiling`,
    `  end to end (ingest + plan + send; import is setup): ${fmt.s(e2eS)} s = ${fmt.rate(sent / e2eS)} digests/s = ${((sent / e2eS / r.ceiling.perSecond) * 100).toFixed(0)}% of the ceiling`,
    `  CPU per digest: workers ${per(sum((w) => w.meter.cpuMs))} (every thread); their PostgreSQL backends ${per(r.send.backendsMs)} (${r.send.backends} backends); rest of the server ${per(r.send.postgresMs)} (other sessions, background workers)`,
    `  ledger calls per digest (wall, call to answer, as a lane waits; server work, network and queueing included): claim ${per(claim)} + record ${per(record)} = ${per(claim + record)}`,
    `  the batch mirror's reads per digest (wall, the same way; a few set queries and the copy into the worker's SQLite): ${per(sum((w) => w.meter.mirror?.ms ?? 0))} in ${fmt.int(sum((w) => w.meter.mirror?.calls ?? 0))} batches`,
    `  statements, ms a digest waited for each (calls a digest): ${topStatements(r.send, sent)}`,
    `  peak RSS per worker: ${r.send.workers.map((w) => `${w.meter.peakRssMb} MB`).join(', ')}`,
    '',
    `check: ${ok ? 'OK' : 'MISMATCH'}: planned ${fmt.int(r.planned.planned)}; rows sent ${fmt.int(r.after.sent)} (by status ${JSON.stringify(r.after.byStatus)}); the sink counted ${fmt.int(r.sinkMessages)} messages; the workers handed the relay ${fmt.int(sum((w) => w.meter.smtp.messages))}`,
  ];
}
