// `node --import ./bench/pg-worker-meter.mjs bin/digest.js worker --once`: the PostgreSQL bench's meter in
// each `digest worker` (bench/run-postgres.ts). It wraps, in the compiled service (dist/), the ledger's
// claim and record calls (time from call to answer, as the worker's lane waits for it) and the SMTP
// pool's sends (messages and their bytes, as handed to the relay), and at exit writes them with the
// process's own CPU and peak RSS (process.resourceUsage) to BENCH_METER_FILE as JSON. A measuring
// instrument: nothing the worker does changes.
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

const out = process.env.BENCH_METER_FILE;
if (!out) {
  process.stderr.write('pg-worker-meter: BENCH_METER_FILE is not set\n');
  process.exit(2);
}
const { PgLedger } = await import(new URL('../dist/ledger/postgres/ledger.js', import.meta.url).href);
const { SmtpPool } = await import(new URL('../dist/mail/smtp-pool.js', import.meta.url).href);

/** Per ledger call group: calls, rows they carried, ms from call to answer. */
const ledger = { claim: { calls: 0, rows: 0, ms: 0 }, record: { calls: 0, rows: 0, ms: 0 }, other: { calls: 0, rows: 0, ms: 0 } };
const smtp = { messages: 0, bytes: 0 };

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

process.on('exit', () => {
  const u = process.resourceUsage();
  const meter = { ledger, smtp, cpuMs: (u.userCPUTime + u.systemCPUTime) / 1000, peakRssMb: Math.round(u.maxRSS / 1024) };
  writeFileSync(out, JSON.stringify(meter));
});
