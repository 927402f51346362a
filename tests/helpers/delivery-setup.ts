// Everything a delivery test needs, real parts only: a SQLite file in a temp dir, a scriptable SMTP
// server, the SMTP mailer, the real renderer, signed links; plus a way to run the real CLI
// (`digest run`) as a child process against the same database and relay.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { systemClock, type Clock } from '../../src/clock.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { planDigests } from '../../src/plan/planner.ts';
import { createRenderer, type Renderer } from '../../src/render/render.ts';
import { sendPending, type SendDeps, type SendOptions, type SendSummary } from '../../src/send/sender.ts';
import { Links } from '../../src/links.ts';
import { silentLogger } from '../../src/log.ts';
import { createSmtpMailer } from '../../src/mail/smtp-mailer.ts';
import type { Mailer } from '../../src/mail/types.ts';
import { Tokens } from '../../src/tokens.ts';
import { DIGEST_BIN } from './build.ts';
import { matchPending } from '../../src/match/matcher.ts';
import { openDatabase } from '../../src/db/open.ts';
import { tempDatabase, withDatabase, type TempDb } from './seed.ts';
import { SmtpSink, type SinkOptions } from './smtp-sink.ts';

export const SECRET = 'test-secret-key-0123456789abcdef0123456789';
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

let rendererOnce: Promise<Renderer> | undefined;
/** MJML compiles once per test file. */
export function sharedRenderer(): Promise<Renderer> {
  return (rendererOnce ??= createRenderer());
}

/** Environment for both the in-process config and child processes; fast retries by default. */
export function deliveryEnvVars(t: TempDb, sink: SmtpSink, overrides: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_PATH: t.path,
    SMTP_URL: sink.url,
    SECRET_KEY: SECRET,
    PUBLIC_URL: 'https://digest.example.org',
    MAIL_FROM: 'Paper Digest <digest@papers.example.org>',
    UNSUBSCRIBE_MAILTO: 'unsubscribe@papers.example.org',
    SMTP_POOL_SIZE: '3',
    SMTP_MAX_ATTEMPTS: '5',
    SMTP_RETRY_BASE_MS: '20',
    SMTP_RETRY_MAX_MS: '200',
    SMTP_TIMEOUT_MS: '3000',
    RELAY_DOWN_AFTER: '5',
    HARD_FAILURES_TO_SUPPRESS: '2',
    SHUTDOWN_GRACE_MS: '5000',
    LOG_LEVEL: 'silent',
    ...overrides,
  };
}

export interface DeliveryEnv {
  t: TempDb;
  sink: SmtpSink;
  config: Config;
  links: Links;
  tokens: Tokens;
  mailer: Mailer;
  deps: SendDeps;
  env: Record<string, string>;
  /**
   * matchPending + planDigests ('now': every subscriber's slot is now). `at` plans as of that instant
   * (a later day is a new slot); sending always runs on the real clock.
   */
  plan(at?: string): ReturnType<typeof planDigests>;
  send(opts?: SendOptions): Promise<SendSummary>;
  close(): Promise<void>;
}

export async function deliveryEnv(
  opts: { env?: Record<string, string>; sink?: SinkOptions; clock?: Clock; databaseDir?: string } = {},
): Promise<DeliveryEnv> {
  // databaseDir: put the database in this (existing) folder, e.g. a small tmpfs for full-disk tests.
  const t = opts.databaseDir
    ? withDatabase({ dir: opts.databaseDir, path: join(opts.databaseDir, 'digest.sqlite'), remove: () => undefined }, openDatabase(join(opts.databaseDir, 'digest.sqlite')))
    : tempDatabase();
  const sink = await SmtpSink.start(opts.sink);
  const env = deliveryEnvVars(t, sink, opts.env);
  const config = loadConfig(env);
  const clock = opts.clock ?? systemClock;
  const tokens = new Tokens(SECRET);
  const links = new Links(config.PUBLIC_URL, tokens, clock);
  const mailer = createSmtpMailer({
    url: sink.url,
    from: config.MAIL_FROM,
    poolSize: config.SMTP_POOL_SIZE,
    ratePerSecond: config.SMTP_RATE_PER_SECOND,
    timeoutMs: config.SMTP_TIMEOUT_MS,
    logger: silentLogger,
  });
  const deps: SendDeps = { db: t.db, mailer, renderer: await sharedRenderer(), links, clock, config, logger: silentLogger };
  return {
    t,
    sink,
    config,
    links,
    tokens,
    mailer,
    deps,
    env,
    plan(at?: string) {
      matchPending(t.db);
      return planDigests(t.db, { clock: at === undefined ? clock : { now: () => new Date(at) }, mode: 'now' });
    },
    send: (o: SendOptions = {}) => sendPending(deps, o),
    async close() {
      await mailer.close();
      await sink.close();
      t.cleanup();
    },
  };
}

export interface ChildRun {
  child: ChildProcess;
  /** Exit code (null when killed by a signal), signal, stdout and stderr. */
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
}

/**
 * Starts the real CLI, `node bin/digest.js run` (built, what the tests use), in a child process with this
 * environment. The working directory is the test's temp dir, so a developer's .env in the repo cannot leak in.
 */
export function startBuiltRun(env: Record<string, string>, cwd: string, args: string[] = []): ChildRun {
  return startRun(DIGEST_BIN, env, cwd, args);
}

function startRun(bin: string, env: Record<string, string>, cwd: string, args: string[]): ChildRun {
  const child = spawn(process.execPath, [bin, 'run', ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SOURCES: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) =>
    // 'close' waits for the pipes to drain.
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, done };
}

export interface RunLine {
  /** Subscribers whose slot ran. */
  slots: number;
  planned: number;
  sent: number;
  skipped: number;
  failed: number;
  retrying: number;
}

/** Reads the summary line of `digest run`: "slots 3: planned 3, sent 3, skipped 0, failed 0[, 2 to retry later]". */
export function runSummary(stdout: string): RunLine {
  const m = /slots (\d+): planned (\d+), sent (\d+), skipped (\d+), failed (\d+)(?:, (\d+) to retry later)?/.exec(stdout);
  if (!m) throw new Error(`no summary line in digest run output: ${JSON.stringify(stdout)}`);
  return {
    slots: Number(m[1]),
    planned: Number(m[2]),
    sent: Number(m[3]),
    skipped: Number(m[4]),
    failed: Number(m[5]),
    retrying: Number(m[6] ?? 0),
  };
}
