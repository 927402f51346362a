// `digest backup <file>` and `digest restore <file>` with DATABASE_URL=postgres://…: pg_dump -Fc of the
// deployment's schema, checked and renamed into place (db/postgres/backup.ts), and its restore into an
// empty schema followed by what `digest recover --after-restore` does (send/postgres/after-restore.ts):
// digests that may have gone out since the dump become unknown, never resent. README "Backups on PostgreSQL".
import type { CliIo } from '../../cli-io.ts';
import type { Config } from '../../config.ts';
import type { PgCounts } from '../../db/postgres/backup.ts';
import { plural } from '../../words.ts';

function countsLine(c: PgCounts): string {
  return [
    plural(c.subscribers, 'subscriber', 'subscribers'),
    plural(c.digests, 'digest', 'digests'),
    plural(c.papers, 'paper', 'papers'),
    plural(c.bounceEvents, 'bounce report', 'bounce reports'),
    plural(c.consentEvents, 'opt-out event', 'opt-out events'),
  ].join(', ');
}

export async function backupOnPostgres(config: Config, io: CliIo, file: string, o: { force?: boolean }): Promise<number> {
  const { backupPostgres } = await import('../../db/postgres/backup.ts');
  const r = await backupPostgres(config.DATABASE_URL!, config.DATABASE_SCHEMA, file, { overwrite: Boolean(o.force) });
  const mb = (r.bytes / 1024 / 1024).toFixed(1);
  io.out(
    `backup ${r.file}: ${mb} MB dumped (pg_dump -Fc of schema ${r.schema}) in ${r.dumpMs} ms, checked in ${r.checkMs} ms: ` +
      `pg_restore --list ok (${r.entries} entries), migration ${r.version}; ${countsLine(r.counts)}`,
  );
  return 0;
}

export async function restoreOnPostgres(config: Config, io: CliIo, file: string): Promise<number> {
  const { restorePostgres } = await import('../../db/postgres/backup.ts');
  const { cmdSettleAfterRestore } = await import('../../send/postgres/after-restore.ts');
  const { systemClock: clock } = await import('../../clock.ts');
  const { createLogger } = await import('../../log.ts');
  const r = await restorePostgres(config.DATABASE_URL!, config.DATABASE_SCHEMA, file);
  const renamed = r.from !== r.schema ? ` (dumped from schema ${r.from})` : '';
  io.out(`restored ${file} into schema ${r.schema}${renamed} in ${r.restoreMs} ms: ${countsLine(r.counts)}`);
  io.out(await cmdSettleAfterRestore(config.DATABASE_URL!, config.DATABASE_SCHEMA, { clock, logger: createLogger(config.LOG_LEVEL) }));
  return 0;
}
