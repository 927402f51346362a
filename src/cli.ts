// The `digest` command. Each subcommand builds the app through the composition root (src/main.ts);
// the subcommands themselves are registered from src/cli/commands/.
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { CLI_COMMANDS } from './cli/commands/index.ts';
import { loadConfig, type CliContext } from './cli/context.ts';
import { CommandLogs } from './cli-log.ts';
import { storageFault } from './db/faults.ts';
import { errorMessage, isAppError } from './errors.ts';
import type { EnvSources } from './config-check.ts';
import type { AppOptions } from './main.ts';
import type { CliIo } from './cli-io.ts';

export type { CliIo } from './cli-io.ts';

/** Set once stdout's reader went away (`digest status | head`): the rest of the output is dropped. */
let stdoutClosed = false;

const defaultIo: CliIo = {
  out: (l) => {
    if (!stdoutClosed) process.stdout.write(`${l}\n`);
  },
  err: (l) => process.stderr.write(`${l}\n`),
  isTTY: Boolean(process.stdout.isTTY),
};

/**
 * A closed pipe on stdout (EPIPE) ends the output quietly; the command itself finishes what it was doing
 * (a `digest run | head` must not stop in the middle of a send).
 */
let pipeWatched = false;
function endQuietlyOnClosedPipe(): void {
  if (pipeWatched) return;
  pipeWatched = true;
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
    stdoutClosed = true;
  });
}

/** package.json's version, read from the repository root (src/ and dist/ are both one level down). */
function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

/**
 * Runs the CLI and returns the exit code (0 on success, 1 on failure, 2 on bad usage). `envFile`: a .env
 * file whose variables fill in what the environment does not set (the bins pass ./.env when it exists).
 */
export async function runCli(argv: string[], io: CliIo = defaultIo, appOptions: AppOptions = {}, envFile?: string): Promise<number> {
  let code = 0;
  if (io === defaultIo) endQuietlyOnClosedPipe();
  const { loadEnvFile } = await import('./config-check.ts');
  const sources = { env: process.env, fromFile: envFile ? loadEnvFile(envFile) : new Set<string>() };
  const logs = new CommandLogs(io, Boolean(process.stderr.isTTY));
  const program = createProgram(io, sources);
  const setup = async () => {
    const config = logs.configure(await loadConfig(), Boolean(program.opts().verbose));
    return { config, logger: appOptions.logger ?? (await logs.logger(config)) };
  };
  const app = async () => {
    const { config, logger } = await setup();
    return (await import('./main.ts')).createApp(config, { mailMode: 'client', ...appOptions, logger });
  };
  const ctx: CliContext = { io, appOptions, sources, setup, app, setExitCode: (c) => (code = c) };
  for (const register of CLI_COMMANDS) register(program, ctx);

  try {
    await program.parseAsync(argv);
    logs.finish();
    return code;
  } catch (e) {
    logs.finish();
    if (e instanceof CommanderError) {
      // --help and --version end here with exit code 0; usage errors were already printed.
      return e.exitCode === 0 ? 0 : 2;
    }
    io.err(`error: ${oneLine(e)}`);
    return 1;
  }
}

/** The `digest` program itself: its description, version, global --verbose and output; no commands yet. */
function createProgram(io: CliIo, sources: EnvSources): Command {
  return new Command('digest')
    .description('Daily research-paper digests, matched per subscriber by topic queries')
    .version(packageVersion(), '-V, --version', 'print the version')
    .option('--verbose', 'log lines on the terminal too (by default a command on a terminal logs to LOG_FILE, or digest.log beside the database)')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) })
    .showSuggestionAfterError()
    .hook('preAction', async () => {
      // Every command names the variables that look meant for us but are not settings (SMPT_URL).
      const { suspiciousSettings, describeSuspicious } = await import('./config-check.ts');
      const { SETTING_NAMES, databaseUrlWarning } = await import('./config.ts');
      for (const s of suspiciousSettings(sources, SETTING_NAMES)) io.err(`warning: ${describeSuspicious(s)}`);
      const dbWarning = databaseUrlWarning(sources.env);
      if (dbWarning) io.err(`warning: ${dbWarning}`);
    });
}

/** PostgreSQL's undefined_table and invalid_schema_name: a schema `digest migrate` has not made ready. */
const PG_NOT_MIGRATED = new Set(['42P01', '3F000']);

function oneLine(e: unknown): string {
  // A raw SQLite error ("database or disk is full") becomes one naming the cause (disk full, locked…).
  const fault = isAppError(e) ? undefined : storageFault(e);
  const msg = fault ? fault.message : isAppError(e) ? e.message : errorMessage(e);
  const line = msg.split('\n')[0] ?? msg;
  const code = isAppError(e) ? undefined : (e as { code?: unknown } | null)?.code;
  // As `digest serve` says it (main.ts openPostgresDoor): the fix, not only PostgreSQL's words.
  if (typeof code === 'string' && PG_NOT_MIGRATED.has(code)) return `DATABASE_URL: the PostgreSQL schema is not ready (${line}); run \`digest migrate\` first`;
  return line;
}
