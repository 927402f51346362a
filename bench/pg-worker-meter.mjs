// `node --import ./bench/pg-worker-meter.mjs bin/digest.js worker --once`: the PostgreSQL bench's meter in
// each `digest worker` (bench/run-postgres.ts). It wraps, in the compiled service (dist/), the ledger's
// claim and record calls and the batch mirror's reads (time from call to answer, as the worker waits) and the SMTP
// pool's sends (messages and their bytes, as handed to the relay), and at exit writes them with the
// process's own CPU and peak RSS (process.resourceUsage) to BENCH_METER_FILE as JSON. A measuring
// instrument: nothing the worker does changes.
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import pg from 'pg';

const out = process.env.BENCH_METER_FILE;
if (!out) {
  process.stderr.write('pg-worker-meter: BENCH_METER_FILE is not set\n');
  process.exit(2);
}
const { PgLedger } = await import(new URL('../dist/ledger/postgres/ledger.js', import.meta.url).href);
const { SmtpPool } = await import(new URL('../dist/mail/smtp-pool.js', import.meta.url).href);
const { BatchMirror } = await import(new URL('../dist/send/postgres/batch-mirror.js', import.meta.url).href);

/** Per ledger call group: calls, rows they carried, ms from call to answer. */
const ledger = { claim: { calls: 0, rows: 0, ms: 0 }, record: { calls: 0, rows: 0, ms: 0 }, other: { calls: 0, rows: 0, ms: 0 } };
const smtp = { messages: 0, bytes: 0 };
/** The batch's reads into the worker's in-memory SQLite (BatchMirror.prepare: a few set queries and the copy). */
const mirror = { calls: 0, rows: 0, ms: 0 };

const realPrepare = BatchMirror.prototype.prepare;
BatchMirror.prototype.prepare = async function (ids) {
  const t = performance.now();
  try {
    return await realPrepare.call(this, ids);
  } finally {
    mirror.calls++;
    mirror.rows += ids.length;
    mirror.ms += performance.now() - t;
  }
};

const GROUPS = { claimBatch: 'claim', recordSent: 'record', markSkipped: 'record', markRetry: 'record', markFailed: 'record', markRefused: 'record', markBroken: 'record' };
for (const name of Object.getOwnPropertyNames(PgLedger.prototype)) {
  const real = PgLedger.prototype[name];
  if (name === 'constructor' || typeof real !== 'function') continue;
  const group = ledger[GROUPS[name] ?? 'other'];
  PgLedger.prototype[name] = async function (...args) {
    const t = performance.now();
    try {
      const r = await real.apply(this, args);
      group.rows += name === 'claimBatch' ? r.length : Array.isArray(args[0]) ? args[0].length : 1;
      return r;
    } finally {
      group.calls++;
      group.ms += performance.now() - t;
    }
  };
}

const realSend = SmtpPool.prototype.send;
SmtpPool.prototype.send = function (envelope, raw) {
  smtp.messages++;
  smtp.bytes += raw.length;
  return realSend.call(this, envelope, raw);
};

/** Every statement run on a pool (pool.query), by its first words: calls and ms from call to answer. */
const statements = {};
const realQuery = pg.Pool.prototype.query;
pg.Pool.prototype.query = function (text, ...rest) {
  if (typeof rest[rest.length - 1] === 'function') return realQuery.call(this, text, ...rest);
  const sql = typeof text === 'string' ? text : (text?.text ?? '?');
  const key = sql.replace(/\s+/g, ' ').trim().slice(0, 70);
  const t = performance.now();
  const p = realQuery.call(this, text, ...rest);
  const done = () => {
    const s = (statements[key] ??= { calls: 0, ms: 0 });
    s.calls++;
    s.ms += performance.now() - t;
  };
  p.then(done, done);
  return p;
};

process.on('exit', () => {
  const u = process.resourceUsage();
  const meter = { ledger, mirror, statements, smtp, cpuMs: (u.userCPUTime + u.systemCPUTime) / 1000, peakRssMb: Math.round(u.maxRSS / 1024) };
  writeFileSync(out, JSON.stringify(meter));
});
