// The `digest` command. Each subcommand builds the app through the composition root (src/main.ts).
import { existsSync } from 'node:fs';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
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

const defaultIo: CliIo = {
  out: (l) => process.stdout.write(`${l}\n`),
  err: (l) => process.stderr.write(`${l}\n`),
  isTTY: Boolean(process.stdout.isTTY),
};

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

/** Runs the CLI and returns the exit code (0 on success, 1 on failure, 2 on bad usage). */
export async function runCli(argv: string[], io: CliIo = defaultIo, appOptions: AppOptions = {}): Promise<number> {
  let code = 0;
  const app = async () => (await import('./main.ts')).createApp(await loadConfig(), { mailMode: 'client', ...appOptions });

  const program = new Command('digest')
    .description('Daily research-paper digests, matched per subscriber by topic queries')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) })
    .showSuggestionAfterError();

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
    .action(async (o: { dryRun?: boolean; due?: boolean }) => {
      code = await withApp(app, async (a) => (await commands()).cmdRun(a, io, { dryRun: Boolean(o.dryRun), due: Boolean(o.due) }));
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
    return code;
  } catch (e) {
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
