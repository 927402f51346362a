// `digest copy --to postgres://…`: the SQLite deployment (DATABASE_PATH) into PostgreSQL, checked by counts.
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { AppError } from '../../errors.ts';
import { loadConfig, type CliContext } from '../context.ts';

export function registerCopy(program: Command, { io, setExitCode }: CliContext): void {
  program
    .command('copy')
    .description('copy the SQLite database into an empty PostgreSQL schema in one transaction, with a row count check per table (stop the service first)')
    .requiredOption('--to <url>', 'postgres://… (the schema is migrated first; a non-empty one is refused)')
    .option('--schema <name>', 'the PostgreSQL schema to fill (default: DATABASE_SCHEMA, else the search_path)')
    .action(async (o: { to: string; schema?: string }) => {
      const { createPool, isPostgresUrl } = await import('../../db/postgres/pool.ts');
      if (!isPostgresUrl(o.to)) throw new AppError('COPY_TARGET', `--to must be a postgres:// URL, not ${o.to}`);
      const path = (await loadConfig()).DATABASE_PATH;
      if (!existsSync(path)) throw new AppError('DB_NOT_FOUND', `DATABASE_PATH: no database at ${path}: nothing to copy`);
      const { openDatabase } = await import('../../db/open.ts');
      const { copySqliteToPostgres } = await import('../../db/postgres/copy.ts');
      const db = openDatabase(path, { migrate: false, readonly: true });
      const pool = createPool(o.to, { schema: o.schema, max: 1 });
      try {
        const report = await copySqliteToPostgres(db, pool);
        for (const c of report.counts) {
          io.out(`${c.table.padEnd(22)} ${String(c.sqlite).padStart(10)} ${String(c.postgres).padStart(10)}  ${c.sqlite === c.postgres ? 'ok' : 'MISMATCH'}`);
        }
        io.out(report.ok ? 'copied: every table has the same rows on both sides' : 'counts differ: rolled back, nothing copied');
        setExitCode(report.ok ? 0 : 1);
      } finally {
        db.close();
        await pool.end();
      }
    });
}
