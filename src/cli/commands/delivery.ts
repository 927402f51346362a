// `digest` commands that fetch, send and report on deliveries: serve, ingest, run, status, sources.
import { Option, type Command } from 'commander';
import { commands, loadConfig, positiveInt, withApp, type CliContext } from '../context.ts';

export function registerServe(program: Command, { io, appOptions, setExitCode }: CliContext): void {
  program
    .command('serve')
    .description('serve the web pages and run the scheduler (what npm start runs)')
    .action(async () => {
      // The serving process is wired by the composition root (src/serve.ts), not by the CLI.
      setExitCode(await (await import('../../serve.ts')).serve(await loadConfig(), io, appOptions));
    });
}

export function registerIngest(program: Command, { io, app, setup, setExitCode }: CliContext): void {
  program
    .command('ingest')
    .description('ingest a batch of papers from a file or URL; prints the batch id and counts (into PostgreSQL when DATABASE_URL is postgres://)')
    .argument('<file-or-url>', 'path or http(s) URL of a batch JSON, Hugging Face daily-papers JSON or arXiv RSS/Atom')
    .addOption(new Option('--format <format>', 'input format').choices(['auto', 'batch', 'hf', 'arxiv']).default('auto'))
    .option('--source <name>', 'source name to record (default: from the input)')
    .option('--date <YYYY-MM-DD>', 'day of the batch when the input does not say')
    .action(async (input: string, o: { format: 'auto' | 'batch' | 'hf' | 'arxiv'; source?: string; date?: string }) => {
      // DATABASE_URL=postgres://…: the batch goes into PostgreSQL, where `digest plan` matches and plans it.
      if ((await loadConfig()).DATABASE_URL) {
        const { config, logger } = await setup();
        setExitCode(await (await import('./edition.ts')).ingestIntoPostgres(config, logger, io, input, o));
        return;
      }
      setExitCode(await withApp(app, async (a) => (await commands()).cmdIngest(a, io, input, o)));
    });
}

export function registerRun(program: Command, { io, app, setExitCode }: CliContext): void {
  program
    .command('run')
    .description(
      'one tick now: fetch sources, match new papers, send every pending digest (on PostgreSQL too, DATABASE_URL=postgres://…: ' +
        'safe beside `digest serve`, `digest worker`s and another run; a slot is never sent twice)',
    )
    .option('--dry-run', 'show what would be planned; send nothing, write nothing')
    .option('--due', 'only digests due now in each subscriber\'s own time zone (what the scheduler does)')
    .option('--no-fetch', 'do not ask the paper sources; match and send what is already ingested')
    .action(async (o: { dryRun?: boolean; due?: boolean; fetch: boolean }) => {
      const opts = { dryRun: Boolean(o.dryRun), due: Boolean(o.due), fetch: o.fetch };
      // DATABASE_URL=postgres://…: the tick runs on PostgreSQL, where the readers and the ledger live.
      if ((await loadConfig()).DATABASE_URL) {
        setExitCode(await withApp(app, async (a) => (await import('./run-postgres.ts')).runOnPostgres(a, io, opts)));
        return;
      }
      setExitCode(await withApp(app, async (a) => (await commands()).cmdRun(a, io, opts)));
    });
}

export function registerStatus(program: Command, { io, app, appOptions, setup, setExitCode }: CliContext): void {
  program
    .command('status')
    .description(
      'overdue subscribers, bounces and complaints (30 days), recent editions: planned / sent / pending / failed / suppressed / unknown, top failure reasons; with an email: what that subscriber\'s last slot did, and why it sent nothing',
    )
    .argument('[email]')
    .option('--limit <n>', 'editions to show', positiveInt, 10)
    .action(async (email: string | undefined, o: { limit: number }) => {
      // DATABASE_URL=postgres://…: the figures are read where the readers and the ledger live.
      if ((await loadConfig()).DATABASE_URL) {
        const { config } = await setup();
        // The app's clock as on SQLite (the system's unless runCli was given one): the 24 h windows and "why no email" count from it.
        setExitCode(await (await import('./status-postgres.ts')).statusOnPostgres(config, io, email, o.limit, appOptions.clock));
        return;
      }
      const c = await commands();
      setExitCode(await withApp(app, (a) => (email === undefined ? c.cmdStatus(a, io, o.limit) : c.cmdSubscriberStatus(c.sqliteSubscriberStatus(a), io, email))));
    });
}

export function registerSources(program: Command, { io, app, setup, setExitCode }: CliContext): void {
  program
    .command('sources')
    .description('configured paper sources, last day fetched, last error (from PostgreSQL when DATABASE_URL is postgres://)')
    .action(async () => {
      if ((await loadConfig()).DATABASE_URL) {
        const { config } = await setup();
        setExitCode(await (await import('./sources-postgres.ts')).sourcesOnPostgres(config, io));
        return;
      }
      setExitCode(await withApp(app, async (a) => (await commands()).cmdSources(a, io)));
    });
}
