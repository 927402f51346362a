// Commands that still act on the SQLite file alone. With DATABASE_URL=postgres://… the readers, their
// consent and the ledger live in PostgreSQL: run there, these would read stale figures or, worse, plan
// and send from the SQLite copy (a second digest) or record an operator's decision where no sender looks.
// So they stop, naming what to do instead, rather than act on the wrong store. (The roster and consent
// commands, subscribe, unsubscribe, unsuppress, opt-outs, subscribers and import, act on PostgreSQL there.)
import { AppError } from '../../errors.ts';

const SQLITE_ONLY: Readonly<Record<string, string>> = {
  run: '`digest serve` (its ticks plan on PostgreSQL) or `digest plan`, with `digest worker`s sending',
};

/** Whether `command` acts on the SQLite file alone. */
export function sqliteOnly(command: string): boolean {
  return SQLITE_ONLY[command] !== undefined;
}

/** Throws when `command` acts on SQLite only and the deployment's store is PostgreSQL. */
export function refuseOnPostgres(command: string, databaseUrl: string | undefined): void {
  const instead = SQLITE_ONLY[command];
  if (!databaseUrl || instead === undefined) return;
  throw new AppError(
    'SQLITE_ONLY_COMMAND',
    `\`digest ${command}\` acts on the SQLite file (DATABASE_PATH), but DATABASE_URL points at PostgreSQL, where this deployment's readers are; instead: ${instead}`,
  );
}
