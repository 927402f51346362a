// `npm run bench:ab -- --base <rev> [--runs 3] [--subscribers 30000] [--topics-profile broad]`
//
// A/B of two builds of the service on the same input, through the public commands only: the working
// tree's and `--base`'s (a git revision, built in a temporary worktree). For each build: `digest import`
// of the same CSV and `digest ingest` of the same batch into a fresh database, kept as a snapshot; then
// `--runs` rounds, each running `digest run` (match, plan, render, send) once per build on a copy of its
// snapshot into a fresh Postfix smtp-sink, the two builds in alternating order (A B, B A, …) so a drift of
// the machine weighs on both alike. Reports per build the median and range of digests/s, the CPU of
// `digest run` (every thread) and of the sink per digest, and the peak RSS.
//
// Why: the shared 2-core machine spreads one commit's runs of `npm run bench` by 5-15% (other tenants,
// the host), more than most single changes move it; a change is only worth claiming when its runs and the
// base's, interleaved, do not overlap. Needs Postfix's smtp-sink (apt-get install postfix).
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { POSTFIX_SMTP_SINK, procStats, startPostfixSink } from './postfix-sink.ts';

const { values: o } = parseArgs({
  options: {
    base: { type: 'string', default: 'HEAD~1' },
    runs: { type: 'string', default: '3' },
    subscribers: { type: 'string', default: '30000' },
    papers: { type: 'string', default: '1000' },
    topics: { type: 'string', default: '3' },
    'topics-profile': { type: 'string', default: 'friendly' },
    seed: { type: 'string', default: '1' },
    keep: { type: 'boolean', default: false },
  },
});
const RUNS = Math.max(1, Number(o.runs));
const log = (line: string) => process.stderr.write(`${line}\n`);
const repo = resolve(fileURLToPath(new URL('..', import.meta.url)));
if (!existsSync(POSTFIX_SMTP_SINK)) {
  console.error(`bench:ab needs Postfix's smtp-sink (${POSTFIX_SMTP_SINK}): apt-get install postfix`);
  process.exit(2);
}

interface Build {
  name: string;
  dir: string;
  snapshot: string;
  runs: Run[];
}
interface Run {
  seconds: number;
  sent: number;
  cpuMs: number;
  sinkCpuMs: number;
  peakRssMb: number;
}

const dir = mkdtempSync(join(tmpdir(), 'digest-ab-'));
const baseDir = join(dir, 'base');
try {
  const rev = execFileSync('git', ['rev-parse', '--short', o.base!], { cwd: repo, encoding: 'utf8' }).trim();
  log(`bench:ab: working tree vs ${o.base} (${rev}); ${o.subscribers} subscribers × ${o.papers} papers, ${o['topics-profile']} topics; data in ${dir}`);
  execFileSync('git', ['worktree', 'add', '--detach', baseDir, rev], { cwd: repo, stdio: 'ignore' });
  symlinkSync(join(repo, 'node_modules'), join(baseDir, 'node_modules'));
  for (const d of [repo, baseDir]) {
    log(`  building ${d === repo ? 'the working tree' : rev}`);
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: d, stdio: 'ignore' });
  }

  const csv = join(dir, 'subscribers.csv');
  const batch = join(dir, 'batch.json');
  execFileSync(process.execPath, ['--import', 'tsx', join(repo, 'bench', 'generate.ts'), '--subscribers', o.subscribers!, '--papers', o.papers!,
    '--topics', o.topics!, '--topics-profile', o['topics-profile']!, '--seed', o.seed!, '--batch', batch, '--csv', csv], { cwd: repo, stdio: 'ignore' });

  const builds: Build[] = [
    { name: `base ${rev}`, dir: baseDir, snapshot: join(dir, 'base.sqlite'), runs: [] },
    { name: 'working tree', dir: repo, snapshot: join(dir, 'head.sqlite'), runs: [] },
  ];
  for (const b of builds) {
    const env = serviceEnv(b.snapshot, 'smtp://127.0.0.1:1');
    execFileSync(process.execPath, ['bin/digest.js', 'import', csv], { cwd: b.dir, env, stdio: 'ignore' });
    execFileSync(process.execPath, ['bin/digest.js', 'ingest', batch], { cwd: b.dir, env, stdio: 'ignore' });
  }

  for (let round = 0; round < RUNS; round++) {
    const order = round % 2 === 0 ? builds : [...builds].reverse();
    for (const b of order) {
      const r = await runOnce(b);
      b.runs.push(r);
      log(`  round ${round + 1}, ${b.name}: ${r.sent} sent in ${r.seconds.toFixed(1)} s = ${(r.sent / r.seconds).toFixed(0)} digests/s; ` +
        `CPU ${(r.cpuMs / r.sent).toFixed(3)} ms per digest + sink ${(r.sinkCpuMs / r.sent).toFixed(3)}; peak RSS ${r.peakRssMb} MB`);
    }
  }

  console.log(`\nbench:ab — ${o.subscribers} subscribers, ${o['topics-profile']} topics, ${RUNS} alternating runs of \`digest run\` each (median, range)`);
  console.log('build                 digests/s                CPU ms/digest (digest run)   sink CPU ms/digest     peak RSS MB');
  for (const b of builds) {
    const cell = (xs: number[], digits: number) => `${median(xs).toFixed(digits)} (${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)})`;
    console.log(
      `${b.name.padEnd(21)} ${cell(b.runs.map((r) => r.sent / r.seconds), 0).padEnd(24)} ${cell(b.runs.map((r) => r.cpuMs / r.sent), 3).padEnd(28)} ` +
        `${cell(b.runs.map((r) => r.sinkCpuMs / r.sent), 3).padEnd(22)} ${cell(b.runs.map((r) => r.peakRssMb), 0)}`,
    );
  }
} finally {
  try {
    execFileSync('git', ['worktree', 'remove', '--force', baseDir], { cwd: repo, stdio: 'ignore' });
  } catch {
    // never added
  }
  if (!o.keep) rmSync(dir, { recursive: true, force: true });
}

function serviceEnv(database: string, smtpUrl: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    DATABASE_PATH: database,
    SMTP_URL: smtpUrl,
    SECRET_KEY: 'bench-secret-key-0123456789abcdef0123456789',
    PUBLIC_URL: 'https://digest.bench.example',
    MAIL_FROM: 'Paper Digest <digest@bench.example>',
    DIGEST_TZ: 'UTC',
    LOG_LEVEL: 'warn',
  };
}

/** One `digest run` of a build on a fresh copy of its snapshot, into a fresh sink. */
async function runOnce(b: Build): Promise<Run> {
  const db = join(dir, 'run.sqlite');
  for (const f of [db, `${db}-wal`, `${db}-shm`]) rmSync(f, { force: true });
  copyFileSync(b.snapshot, db);
  const sink = await startPostfixSink();
  try {
    const sinkBefore = sink.stats().cpuSeconds;
    const started = performance.now();
    const child = spawn(process.execPath, ['bin/digest.js', 'run'], { cwd: b.dir, env: serviceEnv(db, sink.url), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    // The child's CPU (every thread) and high-water mark, read from /proc until it exits.
    // Each the largest seen: a poll that catches the process exited but not yet reaped reads no VmHWM.
    const last = { cpuSeconds: 0, maxRssMb: 0 };
    const poll = setInterval(() => {
      try {
        const now = procStats(child.pid!);
        last.cpuSeconds = Math.max(last.cpuSeconds, now.cpuSeconds);
        last.maxRssMb = Math.max(last.maxRssMb, now.maxRssMb);
      } catch {
        // exited between two polls
      }
    }, 50);
    const code = await new Promise<number | null>((done) => child.once('exit', done));
    clearInterval(poll);
    const seconds = (performance.now() - started) / 1000;
    const sent = /sent (\d+)/.exec(out);
    if (code !== 0 || !sent) throw new Error(`digest run (${b.name}) failed (${code}): ${out.slice(-500)}`);
    return { seconds, sent: Number(sent[1]), cpuMs: last.cpuSeconds * 1000, sinkCpuMs: (sink.stats().cpuSeconds - sinkBefore) * 1000, peakRssMb: last.maxRssMb };
  } finally {
    sink.stop();
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

