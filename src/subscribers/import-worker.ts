// The console's import thread: its own SQLite connection running the same importer as `digest import`
// (import.ts), so parsing, checking and writing 25,000 rows never hold the web server's event loop.
// Started by import-thread.ts; answers one message, the result or the error as plain data.
import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase } from '../db/open.ts';
import { errorMessage, isAppError } from '../errors.ts';
import { createLogger } from '../log.ts';
import { importSubscribersCsv, ImportRefused } from './import.ts';
import type { ImportJob, ImportReply } from './import-thread.ts';

/** Longest one try at the write lock blocks this thread; the importer retries up to DB_BUSY_TIMEOUT_MS. */
const TRY_MS = 50;

async function main(job: ImportJob): Promise<ImportReply> {
  const db = openDatabase(job.databasePath, { migrate: false, checkWritable: false, busyTimeoutMs: TRY_MS });
  try {
    // The caller's clock, carried over as an offset (tests run the console on a fixed day).
    const offset = job.nowMs - Date.now();
    const clock = { now: () => new Date(Date.now() + offset) };
    const logger = createLogger(job.logLevel).child({ component: 'import' });
    const result = await importSubscribersCsv({ db, clock, logger, config: job.config }, job.path, { name: job.name });
    return { ok: true, result };
  } catch (e) {
    if (!isAppError(e)) return { ok: false, code: 'INTERNAL', message: errorMessage(e), temporary: false };
    const lines = e instanceof ImportRefused ? { lines: e.lines, badLines: e.badLines } : {};
    return { ok: false, code: e.code, message: e.message, temporary: e.temporary, ...lines };
  } finally {
    db.close();
  }
}

parentPort!.postMessage(await main(workerData as ImportJob));
