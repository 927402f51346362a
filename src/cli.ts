// The `digest` command. Each subcommand builds the app through the composition root (src/main.ts).
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { loadConfig } from './config.ts';
import { errorMessage, isAppError } from './errors.ts';
import { openDatabase, migrate } from './db/open.ts';
import { createApp, type AppOptions } from './main.ts';
import {
  cmdImport,
  cmdIngest,
  cmdPreview,
  cmdRun,
  cmdServe,
  cmdSources,
  cmdStatus,
  cmdSubscriberStatus,
  cmdSubscribe,
  cmdSubscribers,
  cmdUnsubscribe,
} from './cli-commands.ts';
import type { CliIo } from './cli-io.ts';

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

function collect(v: string, prev: string[]): string[] {
  return [...prev, v];
}

/** Runs the CLI and returns the exit code (0 on success, 1 on failure, 2 on bad usage). */
export async function runCli(argv: string[], io: CliIo = defaultIo, appOptions: AppOptions = {}): Promise<number> {
  let code = 0;
  const app = () => createApp(loadConfig(), { mailMode: 'client', ...appOptions });

  const program = new Command('digest')
    .description('Daily research-paper digests, matched per subscriber by topic queries')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) })
    .showSuggestionAfterError();

  program
    .command('serve')
    .description('serve the web pages and run the scheduler (what npm start runs)')
    .action(async () => {
      code = await cmdServe(loadConfig(), io, appOptions);
    });

  program
    .command('ingest')
    .description('ingest a batch of papers from a file or URL; prints the batch id and counts')
    .argument('<file-or-url>', 'path or http(s) URL of a batch JSON, Hugging Face daily-papers JSON or arXiv RSS/Atom')
    .addOption(new Option('--format <format>', 'input format').choices(['auto', 'batch', 'hf', 'arxiv']).default('auto'))
    .option('--source <name>', 'source name to record (default: from the input)')
    .option('--date <YYYY-MM-DD>', 'day of the batch when the input does not say')
    .action(async (input: string, o: { format: 'auto' | 'batch' | 'hf' | 'arxiv'; source?: string; date?: string }) => {
      code = await withApp(app, (a) => cmdIngest(a, io, input, o));
    });

  program
    .command('run')
    .description('one tick now: fetch sources, match new papers, send every pending digest')
    .option('--dry-run', 'show what would be planned; send nothing, write nothing')
    .option('--due', 'only digests due now in each subscriber\'s own time zone (what the scheduler does)')
    .action(async (o: { dryRun?: boolean; due?: boolean }) => {
      code = await withApp(app, (a) => cmdRun(a, io, { dryRun: Boolean(o.dryRun), due: Boolean(o.due) }));
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
      code = await withApp(app, (a) => cmdSubscribe(a, io, email, o));
    });

  program
    .command('unsubscribe')
    .description('unsubscribe an address at once')
    .argument('<email>')
    .action(async (email: string) => {
      code = await withApp(app, (a) => cmdUnsubscribe(a, io, email));
    });

  program
    .command('subscribers')
    .description('list subscribers with status and topics')
    .action(async () => {
      code = await withApp(app, (a) => cmdSubscribers(a, io));
    });

  program
    .command('preview')
    .description('render the digest that would be sent to this address now (sends nothing)')
    .argument('<email>')
    .option('--out <file.html>', 'write the HTML there (default: print the plain-text part)')
    .action(async (email: string, o: { out?: string }) => {
      code = await withApp(app, (a) => cmdPreview(a, io, email, o));
    });

  program
    .command('import')
    .description('bulk-import subscribers from CSV: email,topics[,confirmed] with topics split by ";"')
    .argument('<file.csv>')
    .action(async (file: string) => {
      code = await withApp(app, (a) => cmdImport(a, io, file));
    });

  program
    .command('status')
    .description('recent editions: planned / sent / pending / failed / suppressed, top failure reasons; with an email: why that subscriber got no email')
    .argument('[email]')
    .option('--limit <n>', 'editions to show', (v) => Number(v), 10)
    .action(async (email: string | undefined, o: { limit: number }) => {
      code = await withApp(app, (a) => (email === undefined ? cmdStatus(a, io, o.limit) : cmdSubscriberStatus(a, io, email)));
    });

  program
    .command('sources')
    .description('configured paper sources, last day fetched, last error')
    .action(async () => {
      code = await withApp(app, (a) => cmdSources(a, io));
    });

  program
    .command('migrate')
    .description('apply pending database migrations')
    .action(() => {
      const db = openDatabase(loadConfig().DATABASE_PATH, { migrate: false });
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
  const msg = isAppError(e) ? e.message : errorMessage(e);
  return msg.split('\n')[0] ?? msg;
}
