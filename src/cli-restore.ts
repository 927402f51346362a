// `digest restore <backup>`: the backup goes into DATABASE_PATH (the database there is moved aside and
// kept), migrations run, and the ledger is told what the backup cannot know (send/after-restore.ts):
// digests that may have gone out since it was taken become unknown, so the next run resends nothing.
// Run it with the service stopped: a `digest serve` still running would keep writing the moved-aside file.
import type { CliIo } from './cli-io.ts';
import { systemClock } from './clock.ts';
import type { Config } from './config.ts';
import { openDatabase } from './db/open.ts';
import { restoreFile } from './db/restore.ts';
import { createLogger } from './log.ts';
import { settleAfterRestore } from './send/after-restore.ts';

export async function cmdRestore(config: Config, io: CliIo, backup: string): Promise<number> {
  const logger = createLogger(config.LOG_LEVEL);
  const restored = restoreFile(backup, config.DATABASE_PATH, systemClock.now());
  const db = openDatabase(config.DATABASE_PATH, { busyTimeoutMs: config.DB_BUSY_TIMEOUT_MS });
  try {
    const s = await settleAfterRestore(db, { clock: systemClock, logger, replaced: restored.previous });
    io.out(`restored ${backup} into ${config.DATABASE_PATH}${restored.previous ? ` (the database that was there is at ${restored.previous})` : ''}`);
    io.out(
      `${s.unknown} digests not recorded as sent in the backup may have gone out since: marked unknown, never resent (their papers ride in the next digest)` +
        (s.planned > 0 ? `; ${s.planned} of them for slots that came after the backup` : ''),
    );
    if (s.optOutsCarried > 0) {
      const what = s.optOutsCarried === 1 ? 'opt-out (unsubscribe or suppression) was' : 'opt-outs (unsubscribes, suppressions) were';
      io.out(`${s.optOutsCarried} ${what} recorded after the backup: carried over from the replaced database`);
    }
  } finally {
    db.close();
  }
  return 0;
}
