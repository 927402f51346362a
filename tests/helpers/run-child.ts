// A Node child process with only the environment a test gives it (plus PATH and HOME), its output
// collected: how tests run the real `digest` command.
import { spawn } from 'node:child_process';

export interface ChildResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `node <args>` in `cwd`; SOURCES is empty unless `env` sets it (no test fetches the internet). */
export function runNodeChild(args: string[], env: Record<string, string>, cwd: string): Promise<ChildResult> {
  const child = spawn(process.execPath, args, {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SOURCES: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}
