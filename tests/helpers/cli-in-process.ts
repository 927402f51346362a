// The `digest` command in this process (runCli, the code bin/digest.js runs) with only the settings a
// test gives it, as the child helpers give a child (digest-cli.ts, pg-story.ts's digestAt): the same
// lines, exit code and writes, without a process start per call (~1 s each on the loaded CI machine).
// Keep one child-process test per command where the process boundary itself matters (bin exit codes,
// signals, two processes racing); use this for the rest.
//
// Calls run one at a time: they share process.env (and Date, when `at` is given).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, type CliIo } from '../../src/cli.ts';
import { SETTING_NAMES } from '../../src/config.ts';
import type { ChildResult } from './run-child.ts';

export interface InProcessOptions {
  /** The instant the command starts at, its clock running on from there (as tests/helpers/fake-clock.mjs). */
  at?: string;
}

let queue: Promise<unknown> = Promise.resolve();

/** `digest <args>` in this process; stdout and stderr as a child would print them (one line each, `\n` ended). */
export function digestInProcess(args: string[], env: Record<string, string>, options: InProcessOptions = {}): Promise<ChildResult> {
  const run = queue.then(() => runOnce(args, env, options));
  queue = run.catch(() => {});
  return run;
}

async function runOnce(args: string[], env: Record<string, string>, { at }: InProcessOptions): Promise<ChildResult> {
  const cwd = mkdtempSync(join(tmpdir(), 'digest-in-process-'));
  const saved = { ...process.env };
  // Only the given settings, as in a child: none of this process's own (vitest sets LOG_LEVEL).
  for (const name of SETTING_NAMES) delete process.env[name];
  Object.assign(process.env, { SOURCES: '', LOG_LEVEL: 'silent', DATABASE_PATH: join(cwd, 'digest.sqlite'), ...env });
  const restoreDate = at ? shiftDate(at) : () => {};
  let stdout = '';
  let stderr = '';
  const io: CliIo = { out: (l) => (stdout += `${l}\n`), err: (l) => (stderr += `${l}\n`), isTTY: false };
  try {
    const code = await runCli(['node', 'digest', ...args], io);
    return { code, stdout, stderr };
  } finally {
    restoreDate();
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
    rmSync(cwd, { recursive: true, force: true });
  }
}

/** Date.now and `new Date()` start at `at` and run on (timers untouched), as fake-clock.mjs does in a child. */
function shiftDate(at: string): () => void {
  const Real = Date;
  const offset = Real.parse(at) - Real.now();
  if (Number.isNaN(offset)) throw new Error(`not a date: ${at}`);
  class ShiftedDate extends Real {
    constructor(...args: unknown[]) {
      if (args.length === 0) super(Real.now() + offset);
      else super(...(args as [string]));
    }
    static override now(): number {
      return Real.now() + offset;
    }
  }
  globalThis.Date = ShiftedDate as DateConstructor;
  return () => {
    globalThis.Date = Real;
  };
}
