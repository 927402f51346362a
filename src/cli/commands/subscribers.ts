// `digest` commands on subscribers and their consent: subscribe, unsubscribe, unsuppress, opt-outs,
// subscribers, preview, import. All but preview act on the deployment's store (PostgreSQL's with
// DATABASE_URL=postgres://…) through the operator's roster (operator/roster.ts).
import { Option, type Command } from 'commander';
import { collect, commands, hour, positiveInt, withApp, withRoster, type CliContext } from '../context.ts';

const consent = () => import('../../cli-consent.ts');

export function registerSubscribe(program: Command, { io, app, setExitCode }: CliContext): void {
  program
    .command('subscribe')
    .description('add a subscriber (pending until confirmed, unless --confirmed); in PostgreSQL when DATABASE_URL is postgres://…')
    .argument('<email>')
    .requiredOption('--topic <query>', 'a topic query; repeat for several', collect, [])
    .option('--confirmed', 'skip double opt-in (only for addresses that already agreed)')
    .option('--timezone <iana>', 'IANA time zone, e.g. Asia/Tokyo')
    .option('--hour <0-23>', 'local delivery hour', hour)
    .addOption(new Option('--frequency <f>', 'delivery frequency').choices(['daily', 'weekly']))
    .action(async (email: string, o: { topic: string[]; confirmed?: boolean; timezone?: string; hour?: number; frequency?: 'daily' | 'weekly' }) => {
      setExitCode(await withRoster(app, async (r) => (await commands()).cmdSubscribe(r, io, email, o)));
    });
}

export function registerUnsubscribe(program: Command, { io, app, appOptions, setup, setExitCode }: CliContext): void {
  program
    .command('unsubscribe')
    .description('unsubscribe an address at once (in PostgreSQL when DATABASE_URL is postgres://…)')
    .argument('<email>')
    .action(async (email: string) => {
      const { config, logger } = await setup();
      if (config.DATABASE_URL) {
        setExitCode(await (await commands()).cmdUnsubscribePg(config, logger, appOptions.clock ?? (await import('../../clock.ts')).systemClock, io, email));
        return;
      }
      setExitCode(await withApp(app, async (a) => (await commands()).cmdUnsubscribe(a, io, email)));
    });
}

export function registerUnsuppress(program: Command, { io, app, setExitCode }: CliContext): void {
  program
    .command('unsuppress')
    .description('lift an address\'s opt-out (unsubscribe, complaint, bounce, suppression) with a reason kept in its history')
    .argument('<email>')
    .requiredOption('--reason <text>', 'why (e.g. "asked by email on 2025-11-20 to be added back")')
    .action(async (email: string, o: { reason: string }) => {
      setExitCode(await withRoster(app, async (r, a) => (await consent()).cmdUnsuppress(r, a.logger, io, email, o)));
    });
}

export function registerOptOuts(program: Command, { io, app, setExitCode }: CliContext): void {
  program
    .command('opt-outs')
    .description('addresses that opted out or were suppressed, newest first, with the reason and date')
    .option('--limit <n>', 'rows to show', positiveInt, 100)
    .action(async (o: { limit: number }) => {
      setExitCode(await withRoster(app, async (r) => (await consent()).cmdOptOuts(r, io, o.limit)));
    });
}

export function registerSubscribers(program: Command, { io, app, setExitCode }: CliContext): void {
  program
    .command('subscribers')
    .description('list subscribers with status and topics')
    .action(async () => {
      setExitCode(await withRoster(app, async (r, a) => (await commands()).cmdSubscribers(r, a.clock, io)));
    });
}

export function registerPreview(program: Command, { io, app, setExitCode }: CliContext): void {
  program
    .command('preview')
    .description('render the digest that would be sent to this address now (sends nothing; from PostgreSQL when DATABASE_URL is postgres://)')
    .argument('<email>')
    .option('--out <file.html>', 'write the HTML there (default: print the plain-text part)')
    .action(async (email: string, o: { out?: string }) => {
      setExitCode(
        await withApp(app, async (a) => {
          const c = await commands();
          if (!a.config.DATABASE_URL) return c.cmdPreview(a, io, email, o);
          return (await import('./preview-postgres.ts')).previewOnPostgres(a, io, email, o);
        }),
      );
    });
}

export function registerImport(program: Command, { io, app, setExitCode }: CliContext): void {
  program
    .command('import')
    .description('bulk-import subscribers from CSV: email,topics[,confirmed] with topics split by ";"')
    .argument('<file.csv>')
    .action(async (file: string) => {
      setExitCode(await withRoster(app, async (r) => (await commands()).cmdImport(r, io, file)));
    });
}
