// `digest` commands for the operator's upkeep: admin-password, backup, doctor, config, restore, migrate.
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { AppError } from '../../errors.ts';
import { commands, loadConfig, positiveInt, type CliContext } from '../context.ts';

export function registerAdminPassword(program: Command, { io, setExitCode }: CliContext): void {
  program
    .command('admin-password')
    .description('make the ADMIN_PASSWORD_HASH line for the operator console (password read without echo, or the first line of stdin)')
    .action(async () => {
      setExitCode(await (await import('../../admin/password-prompt.ts')).cmdAdminPassword(io));
    });
}

export function registerBackup(program: Command, { io, setExitCode }: CliContext): void {
  program
    .command('backup')
    .description('copy the database consistently while the service runs (SQLite online backup; pg_dump -Fc with DATABASE_URL), then check the copy')
    .argument('<file>', 'where to write the copy (refused if it exists, unless --force)')
    .option('--force', 'replace <file> if it exists')
    .action(async (file: string, o: { force?: boolean }) => {
      const config = await loadConfig();
      if (config.DATABASE_URL) {
        setExitCode(await (await import('./backup-postgres.ts')).backupOnPostgres(config, io, file, o));
        return;
      }
      // Only the database: no renderer, mail or migrations (a backup copies what is there, as it is).
      const { openDatabase } = await import('../../db/open.ts');
      const path = config.DATABASE_PATH;
      // Opening a path that does not exist would create an empty database there (and its folder), then
      // fail on a missing table: a mistyped DATABASE_PATH must say so, and leave nothing behind.
      if (!existsSync(path)) throw new AppError('DB_NOT_FOUND', `DATABASE_PATH: no database at ${path}: nothing to back up`);
      const db = openDatabase(path, { migrate: false });
      try {
        setExitCode(await (await commands()).cmdBackup(db, io, file, o));
      } finally {
        db.close();
      }
    });
}

export function registerDoctor(program: Command, { io, setup, setExitCode }: CliContext): void {
  program
    .command('doctor')
    .description('check the relay (TLS, AUTH, sender and recipient, no DATA), SPF, DKIM, DMARC, PUBLIC_URL, the database and each source; one line each with the fix; exit 1 if any fails')
    .option('--timeout <ms>', 'per network step', positiveInt, 5_000)
    .action(async (o: { timeout: number }) => {
      const { config, logger } = await setup();
      setExitCode(await (await import('../../doctor/command.ts')).cmdDoctor(config, io, logger, { timeoutMs: o.timeout }));
    });
}

export function registerConfig(program: Command, { io, sources, setExitCode }: CliContext): void {
  program
    .command('config')
    .description('print the effective configuration, secrets masked, with where each value came from (default, .env, environment)')
    .action(async () => {
      setExitCode((await import('../../cli-config.ts')).cmdConfig(io, sources));
    });
}

export function registerRestore(program: Command, { io, setExitCode }: CliContext): void {
  program
    .command('restore')
    .description(
      'replace the database with a backup (stop the service first; on PostgreSQL into an empty schema); digests that may have gone out since the backup become unknown, never resent',
    )
    .argument('<backup>', 'a file written by digest backup')
    .action(async (backup: string) => {
      const config = await loadConfig();
      if (config.DATABASE_URL) {
        setExitCode(await (await import('./backup-postgres.ts')).restoreOnPostgres(config, io, backup));
        return;
      }
      setExitCode(await (await import('../../cli-restore.ts')).cmdRestore(config, io, backup));
    });
}

export function registerMigrate(program: Command, { io }: CliContext): void {
  program
    .command('migrate')
    .description('apply pending database migrations (PostgreSQL when DATABASE_URL is postgres://)')
    .action(async () => {
      // DATABASE_URL=postgres://…: the PostgreSQL schema (db/migrations-pg); otherwise the SQLite file as before.
      if (/^postgres(ql)?:\/\//.test(process.env.DATABASE_URL ?? '')) {
        const { migrateFromEnv } = await import('../../db/postgres/migrate-cli.ts');
        io.out(await migrateFromEnv(process.env.DATABASE_URL as string));
        return;
      }
      const { openDatabase, migrate } = await import('../../db/open.ts');
      const db = openDatabase((await loadConfig()).DATABASE_PATH, { migrate: false });
      const applied = migrate(db);
      db.close();
      io.out(applied.length ? `applied ${applied.join(', ')}` : 'database is up to date');
    });
}
