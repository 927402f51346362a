// The built `digest` CLI as a child process in an empty folder (no .env), with only the variables given:
// its own SQLite file there, logs silent. Output is read as it comes; the folder goes when it exits.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './delivery-setup.ts';

export interface DigestRun {
  code: Promise<number | null>;
  out: () => string;
  err: () => string;
  kill: (sig: NodeJS.Signals) => void;
}

export function startDigest(args: string[], env: Record<string, string>, prefix = 'digest-cli-'): DigestRun {
  const cwd = mkdtempSync(join(tmpdir(), prefix));
  const child = spawn(process.execPath, [join(REPO_ROOT, 'bin', 'digest.js'), ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'silent', DATABASE_PATH: join(cwd, 'digest.sqlite'), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const code = new Promise<number | null>((r) => child.on('close', (c) => (rmSync(cwd, { recursive: true, force: true }), r(c))));
  return { code, out: () => out, err: () => err, kill: (sig) => child.kill(sig) };
}
