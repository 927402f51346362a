// The PostgreSQL worker and planner as real processes (dist/, built first by ensureBuilt), on one test
// schema: for the multi-process stories.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from './delivery-setup.ts';
import type { TestSchema } from './postgres.ts';

export interface PgChild {
  child: ChildProcess;
  /** The claimant id, once the worker holds its liveness lock. */
  ready: Promise<string>;
  /** Its last JSON line, or null when it was killed. */
  done: Promise<Record<string, unknown> | null>;
  stderr(): string;
}

function start(entry: string, s: TestSchema, env: Record<string, string>): PgChild {
  const child = spawn(process.execPath, [join(REPO_ROOT, 'dist', entry)], {
    env: { PATH: process.env.PATH ?? '', DATABASE_URL: s.url, DATABASE_SCHEMA: s.name, LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let onReady: (c: string) => void = () => {};
  const ready = new Promise<string>((r) => (onReady = r));
  child.stdout!.on('data', (c: Buffer) => {
    out += c.toString();
    const m = /\{"ready":"([^"]+)"\}/.exec(out);
    if (m) onReady(m[1]!);
  });
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const done = new Promise<Record<string, unknown> | null>((resolve) =>
    child.on('close', (code) => {
      const last = out.trim().split('\n').pop() ?? '';
      if (code !== 0) return resolve(null);
      resolve(JSON.parse(last) as Record<string, unknown>);
    }),
  );
  return { child, ready, done, stderr: () => err };
}

export function startWorker(s: TestSchema, smtpUrl: string, env: Record<string, string> = {}): PgChild {
  return start('send/postgres/worker-main.js', s, { SMTP_URL: smtpUrl, WORKER_UNTIL_EMPTY: '1', ...env });
}

export function startPlanner(s: TestSchema, env: Record<string, string>): PgChild {
  return start('ledger/postgres/plan-main.js', s, env);
}
