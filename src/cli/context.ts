// What every `digest` subcommand's registration is given, and the small helpers they share.
import { InvalidArgumentError } from 'commander';
import type { CliIo } from '../cli-io.ts';
import type { Config } from '../config.ts';
import type { EnvSources } from '../config-check.ts';
import type { App, AppOptions } from '../main.ts';
import type { OperatorRoster } from '../operator/roster.ts';
import type { Logger } from '../log.ts';

// The commands, the composition root and the configuration are imported when a command runs, not at
// start-up: `digest --help` (or a usage error) then loads commander only; loading them up front cost
// several times a bare node's start. Measured: BENCHMARKS.md § Why the code is shaped this way, context.ts.
export const commands = () => import('../cli-commands.ts');
export const loadConfig = async () => (await import('../config.ts')).loadConfig();

export interface CliContext {
  io: CliIo;
  appOptions: AppOptions;
  /** Where each setting came from (the environment, a .env file). */
  sources: EnvSources;
  /** The configuration and logger of a command (its log on a terminal goes to a file unless --verbose). */
  setup: () => Promise<{ config: Config; logger: Logger }>;
  /** The whole app, built through the composition root. */
  app: () => Promise<App>;
  /** The exit code runCli returns once the command finished. */
  setExitCode: (code: number) => void;
}

export function hour(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 23) throw new InvalidArgumentError('must be a whole hour from 0 to 23');
  return n;
}

export function positiveInt(v: string): number {
  const n = Number(v);
  if (!/^\d+$/.test(v.trim()) || !Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('must be a whole number from 1 up');
  return n;
}

export function collect(v: string, prev: string[]): string[] {
  return [...prev, v];
}

export async function withApp<A extends { close(): Promise<void> }>(
  make: () => Promise<A>,
  fn: (app: A) => Promise<number>,
): Promise<number> {
  const a = await make();
  try {
    return await fn(a);
  } finally {
    await a.close();
  }
}

/**
 * The app and the roster of the deployment's store: PostgreSQL's when DATABASE_URL is postgres://… (where
 * the workers read who to mail), else SQLite's.
 */
export async function withRoster(make: () => Promise<App>, fn: (roster: OperatorRoster, app: App) => Promise<number>): Promise<number> {
  return withApp(make, async (a) => {
    const pg = await (await import('../main.ts')).openPostgresDoor(a);
    try {
      return await fn(pg?.roster ?? a.roster, a);
    } finally {
      await pg?.close();
    }
  });
}
