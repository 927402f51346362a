// `digest worker`: a sender on PostgreSQL (DATABASE_URL=postgres://…); any number run against one database.
import type { Command } from 'commander';
import { AppError } from '../../errors.ts';
import { loadConfig, positiveInt, type CliContext } from '../context.ts';

export function registerWorker(program: Command, { io, setup, setExitCode }: CliContext): void {
  program
    .command('worker')
    .description(
      'PostgreSQL only (DATABASE_URL=postgres://…): claim planned digests, render each as `digest serve` would ' +
        '(same settings), deliver it over SMTP_URL, record each; a reader no longer confirmed gets nothing. ' +
        'SIGTERM/SIGINT stops cleanly (sends in flight finish, unstarted claims go back). On SQLite, `digest serve` or `digest run` send.',
    )
    .option('--lanes <n>', 'sends at once (SMTP connections); a claim takes one row per lane waiting, at most this many', positiveInt, 5)
    .option('--once', 'send what is claimable now, then exit')
    .action(async (o: { lanes: number; once?: boolean }) => {
      const { config, logger } = await setup();
      const { cmdWorker } = await import('../../send/postgres/worker-cli.ts');
      setExitCode(await cmdWorker(config, logger, io, { lanes: o.lanes, once: Boolean(o.once) }));
    });
}

export function registerRecover(program: Command, { io }: CliContext): void {
  program
    .command('recover')
    .description(
      'PostgreSQL only: mark the digests in flight of workers that are gone `unknown` (what every `digest worker` does at start); ' +
        '--after-restore: after pg_restore or a snapshot, the current slots planned, then every open digest (planned, retry, sending) `unknown`, never resent (workers stopped first)',
    )
    .option('--after-restore', 'every open digest may have gone out after the dump was taken')
    .action(async (o: { afterRestore?: boolean }) => {
      const config = await loadConfig();
      if (!config.DATABASE_URL) {
        const sqlite = 'on SQLite `digest run` recovers, and `digest restore` settles a restored backup';
        throw new AppError('RECOVER_NEEDS_POSTGRES', `DATABASE_URL is not a postgres:// URL: \`digest recover\` is for PostgreSQL; ${sqlite}`);
      }
      if (o.afterRestore) {
        const [{ cmdSettleAfterRestore }, { systemClock }] = await Promise.all([import('../../send/postgres/after-restore.ts'), import('../../clock.ts')]);
        io.out(await cmdSettleAfterRestore(config.DATABASE_URL, config.DATABASE_SCHEMA, { clock: systemClock }));
        return;
      }
      const { cmdRecover } = await import('../../ledger/postgres/recover.ts');
      io.out(await cmdRecover(config.DATABASE_URL, config.DATABASE_SCHEMA));
    });
}
