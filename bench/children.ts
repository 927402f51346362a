// The benchmark's child processes (bench/run.ts): the generator, and the compiled CLI's `digest import`
// and `digest run`, each in its own process so that the figures are the service's own (its peak RSS, its
// CPU), not the bench process's.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { loadConfig } from '../src/config.ts';
import type { SendSummary } from '../src/send/send-types.ts';
import type { GenerateStats } from './generate.ts';
import { procStats } from './postfix-sink.ts';

type Config = ReturnType<typeof loadConfig>;

export interface GenerateOptions {
  subscribers: number;
  papers: number;
  topics: number;
  profile: string;
  seed: string;
}

/** bench/generate.ts in a child process: writes the batch and the CSV, resolves what it made. */
export function generateInChild(opts: GenerateOptions, batchFile: string, csvFile: string): Promise<GenerateStats> {
  const script = fileURLToPath(new URL('./generate.ts', import.meta.url));
  const args = ['--import', 'tsx', script, '--subscribers', String(opts.subscribers), '--papers', String(opts.papers)];
  args.push('--topics', String(opts.topics), '--topics-profile', opts.profile, '--seed', opts.seed, '--batch', batchFile, '--csv', csvFile);
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`bench/generate.ts failed: ${stderr || err.message}`));
      else resolve(JSON.parse(stdout) as GenerateStats);
    });
  });
}

/** `node bin/digest.js import <csv>` (the compiled CLI) on the bench database; resolves the subscriber count. */
export function importInChild(csvFile: string, config: Config): Promise<number> {
  const bin = fileURLToPath(new URL('../bin/digest.js', import.meta.url));
  const env = childEnv(config);
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [bin, 'import', csvFile], { env, maxBuffer: 1 << 24 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`digest import failed: ${stderr || err.message}`));
      const m = /imported ([\d,]+)/.exec(stdout);
      resolve(m ? Number(m[1]!.replaceAll(',', '')) : Number.NaN);
    });
  });
}

export interface SendInChildOptions {
  pool: number;
  workers?: string | undefined;
  workerHeapMb?: string | undefined;
  /** Node's own options for the child, before the script (e.g. `--cpu-prof --cpu-prof-dir /tmp/prof`). */
  nodeOptions?: string | undefined;
  /** Every thread sends its first rendered digest to every reader (bench/render-free.mjs). */
  renderFree: boolean;
  /** Where `digest run`'s output is written (digest-run.log). */
  logDir: string;
}

/**
 * `node bin/digest.js run` on the bench database (planned already: it only sends). Its peak RSS is read
 * from /proc (VmHWM, the process's high-water mark over every thread) every 100 ms until it exits.
 */
export async function sendInChild(config: Config, opts: SendInChildOptions): Promise<{ summary: SendSummary; peakRssMb: number; cpuSeconds: number }> {
  const bin = fileURLToPath(new URL('../bin/digest.js', import.meta.url));
  const env: Record<string, string> = {
    ...childEnv(config),
    SMTP_POOL_SIZE: String(opts.pool),
    ...(opts.workers ? { SEND_WORKERS: opts.workers } : {}),
    ...(opts.workerHeapMb ? { SEND_WORKER_HEAP_MB: opts.workerHeapMb } : {}),
    // Info, for the 'sending finished' line: its summary carries each thread's time in GC (src/send/gc-meter.ts).
    LOG_LEVEL: 'info',
  };
  // The child gets a fixed environment, so NODE_OPTIONS would not reach it: node's options go before the script.
  const nodeArgs = opts.nodeOptions?.split(/\s+/).filter(Boolean) ?? [];
  if (opts.renderFree) nodeArgs.push('--import', fileURLToPath(new URL('./render-free.mjs', import.meta.url)));
  let peakMb = 0;
  /** The child's CPU (every thread, user + system) at the last poll: ~100 ms short of its total at most. */
  let cpuSeconds = 0;
  let logs = '';
  const stdout = await new Promise<string>((resolve, reject) => {
    const child = execFile(process.execPath, [...nodeArgs, bin, 'run'], { env, maxBuffer: 1 << 30 }, (err, out, stderr) => {
      clearInterval(poll);
      // What `digest run` printed (with node options such as --trace-gc-nvp, a lot): kept with --keep.
      writeFileSync(join(opts.logDir, 'digest-run.log'), `${out}${stderr}`);
      logs = stderr;
      if (err) reject(new Error(`digest run failed: ${stderr || err.message}`));
      else resolve(out);
    });
    const poll = setInterval(() => {
      try {
        const stats = procStats(child.pid!);
        peakMb = Math.max(peakMb, stats.maxRssMb);
        cpuSeconds = stats.cpuSeconds;
      } catch {
        // exited between two polls
      }
    }, 100);
  });
  const m = /sent (\d+), skipped (\d+), failed (\d+)(?:, (\d+) to retry later)?/.exec(stdout);
  if (!m) throw new Error(`digest run: no summary line in ${JSON.stringify(stdout)}`);
  const n = (i: number) => Number(m[i] ?? 0);
  return {
    summary: { sent: n(1), suppressed: 0, unknown: n(2), failed: n(3), retrying: n(4), newlySuppressed: 0, paused: false, aborted: false, gc: finishedLine(logs)?.gc },
    peakRssMb: peakMb,
    cpuSeconds,
  };
}

/** The run's 'sending finished' log line (JSON), if `digest run` wrote one. */
function finishedLine(stderr: string): SendSummary | undefined {
  for (const line of stderr.split('\n')) {
    if (!line.includes('"sending finished"')) continue;
    try {
      return JSON.parse(line) as SendSummary;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** The child's whole environment: the bench's configuration, nothing inherited but PATH. */
function childEnv(config: Config): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    DATABASE_PATH: config.DATABASE_PATH,
    SMTP_URL: config.SMTP_URL ?? '',
    SECRET_KEY: config.SECRET_KEY ?? '',
    PUBLIC_URL: config.PUBLIC_URL,
    MAIL_FROM: config.MAIL_FROM,
    DIGEST_TZ: config.DIGEST_TZ,
    LOG_LEVEL: 'warn',
  };
}
