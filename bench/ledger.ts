// `npx tsx bench/ledger.ts [--subscribers 100000] [--papers 1000] [--history 0] [--lanes 3] [--repeat 3] [--wal-digests 5000]`
//
// The ledger's write per digest alone (src/ledger/states.ts recordSentThenClaim), on a real SQLite file:
// N confirmed subscribers and one edition planned by the real migrations and planner (bench/plan-setup.ts,
// friendly topics: ~1 row per subscriber), optionally --history days of earlier 'sent' rows per
// subscriber (a ledger that has been running a while). Then `--lanes` lanes do what a sending thread's
// lanes do, minus rendering and SMTP: claim a row each, then record it sent and claim the next in one
// transaction, round robin, until nothing is left.
//
// Reported:
//   cpu: process CPU (user + system, process.cpuUsage) of that loop per digest: the ledger and nothing
//        else (each row's subscriber and to_paper are read beforehand, on another connection). Includes
//        the automatic checkpoints, as a sending run pays them. Median of --repeat runs, each on a fresh
//        copy of the planned database.
//   written: bytes the process handed to write()/pwrite() per digest (/proc/self/io wchar): WAL + checkpoints.
//   WAL: frames appended per digest, counted in a separate pass over the first --wal-digests rows with
//        automatic checkpoints off (a TRUNCATE checkpoint every 200 digests, the WAL's size read before it).
// The planned database is kept in $TMPDIR/bench-ledger/ keyed by the migrations and the options, so only
// the first run plans. --pragma "cache_size=-16000" (repeatable) sets pragmas on the sending connection;
// --sql "…" (repeatable) runs on each copy before sending (to try a schema change without a migration);
// --breakdown: the WAL pass also says whose pages the frames were (table or index, through dbstat, read at
// the end of each 200-digest window: a page freed and reused within one counts for its last owner);
// --from FILE: start from that planned database instead (e.g. one kept by this bench at an older schema),
// each copy migrated first: what an upgraded install sends from.
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ManualClock } from '../src/clock.ts';
import { listMigrations, openDatabase, type Db } from '../src/db/open.ts';
import { planDigests } from '../src/plan/planner.ts';
import { SqliteLedger } from '../src/ledger/index.ts';
import { SUBSCRIBER_MARKS } from '../src/send/send-ledger.ts';
import { buildPlanDatabase } from './plan-setup.ts';

const { values: o } = parseArgs({
  options: {
    subscribers: { type: 'string', default: '100000' },
    papers: { type: 'string', default: '1000' },
    history: { type: 'string', default: '0' },
    lanes: { type: 'string', default: '3' },
    repeat: { type: 'string', default: '3' },
    'wal-digests': { type: 'string', default: '5000' },
    pragma: { type: 'string', multiple: true, default: [] },
    sql: { type: 'string', multiple: true, default: [] },
    breakdown: { type: 'boolean', default: false },
    from: { type: 'string' },
  },
});
const N = Number(o.subscribers);
const PAPERS = Number(o.papers);
const HISTORY = Number(o.history);
const LANES = Math.max(1, Number(o.lanes));
const log = (l: string) => process.stdout.write(`${l}\n`);
const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');
const EDITION_AT = '2025-11-25T12:00:00Z';

function templatePath(): string {
  const key = createHash('sha1')
    .update(JSON.stringify({ N, PAPERS, HISTORY, v: 1, migrations: listMigrations().map((m) => [m.name, m.sql]) }))
    .digest('hex')
    .slice(0, 12);
  const dir = join(tmpdir(), 'bench-ledger');
  mkdirSync(dir, { recursive: true });
  return join(dir, `planned-${N}-${HISTORY}-${key}.sqlite`);
}

/** The planned database: subscribers, topics, one day of papers, `HISTORY` days of sent rows, today's edition planned. */
async function buildTemplate(path: string): Promise<void> {
  const building = `${path}.building`;
  for (const f of [building, `${building}-wal`, `${building}-shm`]) rmSync(f, { force: true });
  const t0 = performance.now();
  const db = openDatabase(building);
  const clock = new ManualClock(EDITION_AT);
  buildPlanDatabase(db, { subscribers: N, papers: PAPERS, profile: 'friendly', clock });
  if (HISTORY > 0) {
    // Earlier editions, delivered: what the rows of a running install look like (no paper list left to
    // matter here: a small one, as a pruned row would have none).
    const add = db.prepare(`
      INSERT INTO digests (subscriber_id, edition, status, from_paper, to_paper, topic_ids, items, paper_count, attempts,
                           claimed_by, claimed_at, message_id, smtp_code, smtp_response, planned_at, sent_at)
      SELECT id, :edition, 'sent', 0, 0, '', unhex('11'), 0, 1, 'bench-host:4242:1764000000000', :at,
             'digest-' || id || '.' || :edition || '@bench.example', 250, '250 2.0.0 Ok: queued as 4dK3xY0abcZ', :at, :at
      FROM subscribers ORDER BY id`);
    for (let d = HISTORY; d >= 1; d--) {
      const day = new Date(Date.parse(EDITION_AT) - d * 86_400_000);
      db.transaction(() => add.run({ edition: day.toISOString().slice(0, 10), at: day.toISOString() }))();
    }
  }
  const r = await planDigests(db, { clock, mode: 'now' });
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  renameSync(building, path);
  for (const f of [`${building}-wal`, `${building}-shm`]) rmSync(f, { force: true });
  log(`planned database built in ${((performance.now() - t0) / 1000).toFixed(1)} s: ${r.planned.toLocaleString()} digests planned -> ${path}`);
}

function copyOf(template: string, name: string): string {
  const path = join(tmpdir(), 'bench-ledger', name);
  for (const f of [path, `${path}-wal`, `${path}-shm`]) rmSync(f, { force: true });
  copyFileSync(template, path);
  if (o.sql!.length > 0 || o.from) {
    const db = openDatabase(path, { migrate: o.from !== undefined, checkWritable: false });
    for (const sql of o.sql!) db.exec(sql);
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
  }
  return path;
}

function removeCopy(path: string): void {
  for (const f of [path, `${path}-wal`, `${path}-shm`]) rmSync(f, { force: true });
}

function wchar(): number {
  const m = /^wchar: (\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'));
  return m ? Number(m[1]) : NaN;
}

interface Row {
  subscriberId: number;
  toPaper: number;
}

/** Each planned row's subscriber and last paper (what the loader reads between the claim and the record). */
function plannedRows(path: string): Map<number, Row> {
  const db = openDatabase(path, { migrate: false, checkWritable: false });
  const rows = new Map<number, Row>();
  for (const r of db.prepare(`SELECT id, subscriber_id AS s, to_paper AS p FROM digests WHERE status = 'planned'`).all() as { id: number; s: number; p: number }[]) {
    rows.set(r.id, { subscriberId: r.s, toPaper: r.p });
  }
  db.close();
  return rows;
}

function openSending(path: string, pragmas: string[]): Db {
  // As a send worker opens it (send-worker.ts).
  const db = openDatabase(path, { migrate: false });
  for (const p of pragmas) db.pragma(p);
  return db;
}

const RESPONSE = '250 2.0.0 Ok: queued as 4dK3xY0abcZ';

/**
 * Lanes round robin: claim, then record sent + claim next, until nothing is left or `limit` rows are
 * recorded (the last one with markSent). `every.fn` runs after every `every.n` digests.
 */
function sendAll(db: Db, rows: Map<number, Row>, clock: ManualClock, limit: number, every?: { n: number; fn: () => void }): number {
  const ledger = new SqliteLedger(db, SUBSCRIBER_MARKS, 'bench-host:4242:1764000000000');
  const current: (number | undefined)[] = [];
  for (let i = 0; i < LANES; i++) current.push(ledger.claimNext(clock.now()));
  let done = 0;
  let active = current.filter((c) => c !== undefined).length;
  while (active > 0) {
    for (let i = 0; i < LANES; i++) {
      const id = current[i];
      if (id === undefined) continue;
      const row = rows.get(id)!;
      clock.advance(3);
      const stop = done + 1 >= limit;
      const sent = { id, subscriberId: row.subscriberId, toPaper: row.toPaper, messageId: `digest-${id}.2025-11-25@bench.example`, response: RESPONSE, at: clock.now() };
      let next: number | undefined;
      if (stop) {
        if (!ledger.markSent(id, sent.subscriberId, sent.toPaper, sent.messageId, sent.response, sent.at)) throw new Error(`row ${id} not recorded`);
      } else {
        const r = ledger.recordSentThenClaim(sent, clock.now());
        if (!r.recorded) throw new Error(`row ${id} not recorded`);
        next = r.next;
      }
      done++;
      if (every && done % every.n === 0) every.fn();
      current[i] = next;
      if (next === undefined) active--;
      if (stop) return done; // the other lanes' claims stay 'sending' in this throw-away copy
    }
  }
  return done;
}

const template = o.from ?? templatePath();
if (!existsSync(template)) await buildTemplate(template);
const rows = plannedRows(template);
const sqlite = (openDatabase(':memory:', { migrate: false, checkWritable: false }).prepare('SELECT sqlite_version() AS v').get() as { v: string }).v;
log(`ledger bench: ${rows.size.toLocaleString()} planned digests, ${o.from ? `from ${o.from} (migrated)` : `${N.toLocaleString()} subscribers, ${HISTORY} days of history`}, ${LANES} lanes, SQLite ${sqlite}, pragmas [${o.pragma!.join('; ')}], sql [${o.sql!.join('; ')}], load ${load()}`);

// CPU and bytes written: every row sent, production settings (plus --pragma).
const runs: { cpu: number; user: number; sys: number; wall: number; written: number; n: number }[] = [];
for (let r = 0; r < Number(o.repeat); r++) {
  const path = copyOf(template, `run-${process.pid}.sqlite`);
  const db = openSending(path, o.pragma!);
  const clock = new ManualClock(EDITION_AT);
  const w0 = wchar();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const n = sendAll(db, rows, clock, Infinity);
  const wall = performance.now() - t0;
  const c = process.cpuUsage(c0);
  const written = wchar() - w0;
  const check = db.prepare(`SELECT count(*) AS sent, sum(s.watermark = d.to_paper) AS advanced FROM digests d JOIN subscribers s ON s.id = d.subscriber_id WHERE d.status = 'sent' AND d.edition = '2025-11-25'`).get() as { sent: number; advanced: number };
  if (check.sent !== rows.size || check.advanced !== rows.size || n !== rows.size) throw new Error(`bench: ${n} recorded, ${check.sent} sent, ${check.advanced} watermarks of ${rows.size}`);
  db.close();
  removeCopy(path);
  const run = { cpu: (c.user + c.system) / n, user: c.user / n, sys: c.system / n, wall: (wall * 1000) / n, written: written / n, n };
  runs.push(run);
  log(`  run ${r + 1}: cpu ${run.cpu.toFixed(1)} µs/digest (user ${run.user.toFixed(1)}, sys ${run.sys.toFixed(1)}), wall ${run.wall.toFixed(1)} µs, written ${(run.written / 1024).toFixed(1)} KB/digest (load ${load()})`);
}
const median = <T>(xs: T[], f: (x: T) => number) => xs.map(f).sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
if (runs.length > 0) log(`cpu: ${median(runs, (r) => r.cpu).toFixed(1)} µs per digest (median of ${runs.length}; user ${median(runs, (r) => r.user).toFixed(1)}, sys ${median(runs, (r) => r.sys).toFixed(1)})`);
if (runs.length > 0) log(`written (WAL + checkpoints): ${(median(runs, (r) => r.written) / 1024).toFixed(1)} KB per digest`);

// WAL frames per digest: automatic checkpoints off, counted from the WAL's size before each TRUNCATE checkpoint.
const walDigests = Math.min(Number(o['wal-digests']), rows.size);
if (walDigests > 0) {
  const path = copyOf(template, `wal-${process.pid}.sqlite`);
  const db = openSending(path, [...o.pragma!, 'wal_autocheckpoint = 0']);
  const clock = new ManualClock(EDITION_AT);
  let frames = 0;
  const byTree = new Map<string, number>();
  const count = () => {
    const size = statSync(`${path}-wal`).size;
    frames += size > 32 ? (size - 32) / (4096 + 24) : 0;
    if (o.breakdown && size > 32) {
      const owner = new Map<number, string>();
      for (const r of db.prepare(`SELECT name, pageno, pagetype FROM dbstat`).all() as { name: string; pageno: number; pagetype: string }[]) {
        owner.set(r.pageno, r.pagetype === 'leaf' ? r.name : `${r.name} (${r.pagetype})`);
      }
      const wal = readFileSync(`${path}-wal`);
      for (let at = 32; at + 24 <= wal.length; at += 4096 + 24) {
        const name = owner.get(wal.readUInt32BE(at)) ?? 'free list';
        byTree.set(name, (byTree.get(name) ?? 0) + 1);
      }
    }
    db.pragma('wal_checkpoint(TRUNCATE)');
  };
  db.pragma('wal_checkpoint(TRUNCATE)');
  const n = sendAll(db, rows, clock, walDigests, { n: 200, fn: count });
  count();
  db.close();
  removeCopy(path);
  log(`WAL: ${(frames / n).toFixed(2)} frames = ${((frames * 4120) / n / 1024).toFixed(1)} KB per digest (first ${n.toLocaleString()} digests)`);
  for (const [name, c] of [...byTree].sort((a, b) => b[1] - a[1])) log(`  ${name}: ${(c / n).toFixed(2)} frames per digest`);
}
