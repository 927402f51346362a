// The `digest` command. Each subcommand builds the app through the composition root (src/main.ts).
import { existsSync, readFileSync } from 'node:fs';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { CommandLogs } from './cli-log.ts';
import { storageFault } from './db/faults.ts';
import { AppError, errorMessage, isAppError } from './errors.ts';
import type { AppOptions } from './main.ts';
import type { CliIo } from './cli-io.ts';

// The commands, the composition root and the configuration are imported when a command runs, not at
// start-up: `digest --help` (or a usage error) then loads commander only. Measured on the compiled build
// (bare `node -e ""`: 0.11 s): with the commands loaded up front ~0.5 s; with the configuration's schema
// still loaded up front 0.35 s (zod ~120 ms and config.js ~115 ms of imports: node-cron, the source
// kinds' settings); with neither see README "Production build".
const commands = () => import('./cli-commands.ts');
const loadConfig = async () => (await import('./config.ts')).loadConfig();

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

function hour(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 23) throw new InvalidArgumentError('must be a whole hour from 0 to 23');
  return n;
}

function positiveInt(v: string): number {
  const n = Number(v);
  if (!/^\d+$/.test(v.trim()) || !Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('must be a whole number from 1 up');
  return n;
}

function collect(v: string, prev: string[]): string[] {
  return [...prev, v];
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
  /** The configuration and logger of a command (its log on a terminal goes to a file unless --verbose). */
  const setup = async () => {
    const config = logs.configure(await loadConfig(), Boolean(program.opts().verbose));
    return { config, logger: appOptions.logger ?? (await logs.logger(config)) };
  };
  const app = async () => {
    const { config, logger } = await setup();
    return (await import('./main.ts')).createApp(config, { mailMode: 'client', ...appOptions, logger });
  };

  const program = new Command('digest')
    .description('Daily research-paper digests, matched per subscriber by topic queries')
    .version(packageVersion(), '-V, --version', 'print the version')
    .option('--verbose', 'log lines on the terminal too (by default a command on a terminal logs to LOG_FILE, or digest.log beside the database)')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) })
    .showSuggestionAfterError()
    .hook('preAction', async () => {
      // Every command names the variables that look meant for us but are not settings (SMPT_URL).
      const { suspiciousSettings, describeSuspicious } = await import('./config-check.ts');
      const { SETTING_NAMES } = await import('./config.ts');
      for (const s of suspiciousSettings(sources, SETTING_NAMES)) io.err(`warning: ${describeSuspicious(s)}`);
    });

  program
    .command('serve')
    .description('serve the web pages and run the scheduler (what npm start runs)')
    .action(async () => {
      code = await (await commands()).cmdServe(await loadConfig(), io, appOptions);
    });

  program
    .command('ingest')
    .description('ingest a batch of papers from a file or URL; prints the batch id and counts')
    .argument('<file-or-url>', 'path or http(s) URL of a batch JSON, Hugging Face daily-papers JSON or arXiv RSS/Atom')
    .addOption(new Option('--format <format>', 'input format').choices(['auto', 'batch', 'hf', 'arxiv']).default('auto'))
    .option('--source <name>', 'source name to record (default: from the input)')
    .option('--date <YYYY-MM-DD>', 'day of the batch when the input does not say')
    .action(async (input: string, o: { format: 'auto' | 'batch' | 'hf' | 'arxiv'; source?: string; date?: string }) => {
      code = await withApp(app, async (a) => (await commands()).cmdIngest(a, io, input, o));
    });

  program
    .command('run')
    .description('one tick now: fetch sources, match new papers, send every pending digest')
    .option('--dry-run', 'show what would be planned; send nothing, write nothing')
    .option('--due', 'only digests due now in each subscriber\'s own time zone (what the scheduler does)')
    .option('--no-fetch', 'do not ask the paper sources; match and send what is already ingested')
    .action(async (o: { dryRun?: boolean; due?: boolean; fetch: boolean }) => {
      code = await withApp(app, async (a) => (await commands()).cmdRun(a, io, { dryRun: Boolean(o.dryRun), due: Boolean(o.due), fetch: o.fetch }));
    });

  program
    .command('subscribe')
    .description('add a subscriber (pending until confirmed, unless --confirmed)')
    .argument('<email>')
    .requiredOption('--topic <query>', 'a topic query; repeat for several', collect, [])
    .option('--confirmed', 'skip double opt-in (only for addresses that already agreed)')
    .option('--timezone <iana>', 'IANA time zone, e.g. Asia/Tokyo')
    .option('--hour <0-23>', 'local delivery hour', hour)
    .addOption(new Option('--frequency <f>', 'delivery frequency').choices(['daily', 'weekly']))
    .action(async (email: string, o: { topic: string[]; confirmed?: boolean; timezone?: string; hour?: number; frequency?: 'daily' | 'weekly' }) => {
      code = await withApp(app, async (a) => (await commands()).cmdSubscribe(a, io, email, o));
    });

  program
    .command('unsubscribe')
    .description('unsubscribe an address at once')
    .argument('<email>')
    .action(async (email: string) => {
      code = await withApp(app, async (a) => (await commands()).cmdUnsubscribe(a, io, email));
    });

  program
    .command('unsuppress')
    .description('lift an address\'s opt-out (unsubscribe, complaint, bounce, suppression) with a reason kept in its history')
    .argument('<email>')
    .requiredOption('--reason <text>', 'why (e.g. "asked by email on 2025-11-20 to be added back")')
    .action(async (email: string, o: { reason: string }) => {
      code = await withApp(app, async (a) => (await import('./cli-consent.ts')).cmdUnsuppress(a, io, email, o));
    });

  program
    .command('opt-outs')
    .description('addresses that opted out or were suppressed, newest first, with the reason and date')
    .option('--limit <n>', 'rows to show', positiveInt, 100)
    .action(async (o: { limit: number }) => {
      code = await withApp(app, async (a) => (await import('./cli-consent.ts')).cmdOptOuts(a, io, o.limit));
    });

  program
    .command('subscribers')
    .description('list subscribers with status and topics')
    .action(async () => {
      code = await withApp(app, async (a) => (await commands()).cmdSubscribers(a, io));
    });

  program
    .command('preview')
    .description('render the digest that would be sent to this address now (sends nothing)')
    .argument('<email>')
    .option('--out <file.html>', 'write the HTML there (default: print the plain-text part)')
    .action(async (email: string, o: { out?: string }) => {
      code = await withApp(app, async (a) => (await commands()).cmdPreview(a, io, email, o));
    });

  program
    .command('import')
    .description('bulk-import subscribers from CSV: email,topics[,confirmed] with topics split by ";"')
    .argument('<file.csv>')
    .action(async (file: string) => {
      code = await withApp(app, async (a) => (await commands()).cmdImport(a, io, file));
    });

  program
    .command('status')
    .description(
      'overdue subscribers, bounces and complaints (30 days), recent editions: planned / sent / pending / failed / suppressed / unknown, top failure reasons; with an email: what that subscriber\'s last slot did, and why it sent nothing',
    )
    .argument('[email]')
    .option('--limit <n>', 'editions to show', positiveInt, 10)
    .action(async (email: string | undefined, o: { limit: number }) => {
      const c = await commands();
      code = await withApp(app, (a) => (email === undefined ? c.cmdStatus(a, io, o.limit) : c.cmdSubscriberStatus(a, io, email)));
    });

  program
    .command('sources')
    .description('configured paper sources, last day fetched, last error')
    .action(async () => {
      code = await withApp(app, async (a) => (await commands()).cmdSources(a, io));
    });

  program
    .command('admin-password')
    .description('make the ADMIN_PASSWORD_HASH line for the operator console (password read without echo, or the first line of stdin)')
    .action(async () => {
      code = await (await import('./admin/password-prompt.ts')).cmdAdminPassword(io);
    });

  program
    .command('backup')
    .description('copy the database consistently while the service runs (SQLite online backup), then check the copy')
    .argument('<file>', 'where to write the copy (refused if it exists, unless --force)')
    .option('--force', 'replace <file> if it exists')
    .action(async (file: string, o: { force?: boolean }) => {
      // Only the database: no renderer, mail or migrations (a backup copies what is there, as it is).
      const { openDatabase } = await import('./db/open.ts');
      const path = (await loadConfig()).DATABASE_PATH;
      // Opening a path that does not exist would create an empty database there (and its folder), then
      // fail on a missing table: a mistyped DATABASE_PATH must say so, and leave nothing behind.
      if (!existsSync(path)) throw new AppError('DB_NOT_FOUND', `DATABASE_PATH: no database at ${path}: nothing to back up`);
      const db = openDatabase(path, { migrate: false });
      try {
        code = await (await commands()).cmdBackup(db, io, file, o);
      } finally {
        db.close();
      }
    });

  program
    .command('doctor')
    .description('check the relay (TLS, AUTH, sender and recipient, no DATA), SPF, DKIM, DMARC, PUBLIC_URL, the database and each source; one line each with the fix; exit 1 if any fails')
    .option('--timeout <ms>', 'per network step', positiveInt, 5_000)
    .action(async (o: { timeout: number }) => {
      const { config, logger } = await setup();
      code = await (await import('./doctor/command.ts')).cmdDoctor(config, io, logger, { timeoutMs: o.timeout });
    });

  program
    .command('config')
    .description('print the effective configuration, secrets masked, with where each value came from (default, .env, environment)')
    .action(async () => {
      code = (await import('./cli-config.ts')).cmdConfig(io, sources);
    });

  program
    .command('restore')
    .description('replace the database with a backup (stop the service first); digests that may have gone out since the backup become unknown, never resent')
    .argument('<backup>', 'a file written by digest backup')
    .action(async (backup: string) => {
      code = await (await import('./cli-restore.ts')).cmdRestore(await loadConfig(), io, backup);
    });

  program
    .command('migrate')
    .description('apply pending database migrations')
    .action(async () => {
      const { openDatabase, migrate } = await import('./db/open.ts');
      const db = openDatabase((await loadConfig()).DATABASE_PATH, { migrate: false });
      const applied = migrate(db);
      db.close();
      io.out(applied.length ? `applied ${applied.join(', ')}` : 'database is up to date');
    });

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

async function withApp<A extends { close(): Promise<void> }>(
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

function oneLine(e: unknown): string {
  // A raw SQLite error ("database or disk is full") becomes one naming the cause (disk full, locked…).
  const fault = isAppError(e) ? undefined : storageFault(e);
  const msg = fault ? fault.message : isAppError(e) ? e.message : errorMessage(e);
  return msg.split('\n')[0] ?? msg;
}
