// Runs a CSV import in a worker thread (import-worker.ts) for `digest serve`: the console's upload of
// 25,000 rows is parsed, checked and written off the event loop, so every other page keeps answering. Its
// writes are the same short transactions as `digest import`'s, on the thread's own connection.
import { Worker } from 'node:worker_threads';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { AppError } from '../errors.ts';
import { ImportRefused, LineReport, type LineIssue } from './import-report.ts';
import type { ImportResult } from './import.ts';

export interface ImportJob {
  databasePath: string;
  path: string;
  name: string;
  nowMs: number;
  logLevel: string;
  config: Pick<Config, 'DIGEST_TZ' | 'DIGEST_HOUR' | 'DB_BUSY_TIMEOUT_MS'>;
}

export type ImportReply =
  | { ok: true; result: ImportResult }
  | { ok: false; code: string; message: string; temporary: boolean; lines?: LineIssue[]; badLines?: number };

/** As send-workers.ts: compiled, the plain JavaScript worker; from the sources, the tsx bootstrap. */
const ENTRY = import.meta.url.endsWith('.ts') ? new URL('./import-worker.mjs', import.meta.url) : new URL('./import-worker.js', import.meta.url);

export interface ImportThreadDeps {
  databasePath: string;
  clock: Clock;
  config: ImportJob['config'] & Pick<Config, 'LOG_LEVEL'>;
}

export function importInThread(deps: ImportThreadDeps, path: string, name: string): Promise<ImportResult> {
  const job: ImportJob = {
    databasePath: deps.databasePath,
    path,
    name,
    nowMs: deps.clock.now().getTime(),
    logLevel: deps.config.LOG_LEVEL,
    config: { DIGEST_TZ: deps.config.DIGEST_TZ, DIGEST_HOUR: deps.config.DIGEST_HOUR, DB_BUSY_TIMEOUT_MS: deps.config.DB_BUSY_TIMEOUT_MS },
  };
  return new Promise((resolve, reject) => {
    const worker = new Worker(ENTRY, { workerData: job });
    let answered = false;
    worker.once('message', (reply: ImportReply) => {
      answered = true;
      if (reply.ok) resolve(reply.result);
      else reject(toError(reply));
    });
    worker.once('error', (err) => reject(new AppError('IMPORT_FAILED', `${name}: the import stopped: ${err.message}`, { cause: err })));
    worker.once('exit', (code) => {
      if (!answered) reject(new AppError('IMPORT_FAILED', `${name}: the import thread exited (${code}) before answering`));
    });
  });
}

/** The thread's error as the error the importer threw (an ImportRefused keeps its listed lines). */
function toError(reply: Extract<ImportReply, { ok: false }>): AppError {
  if (reply.lines && reply.badLines !== undefined) {
    const report = new LineReport();
    for (const l of reply.lines) report.add(l.line, l.message);
    report.count = reply.badLines;
    return new ImportRefused(reply.message, report, reply.message);
  }
  return new AppError(reply.code, reply.message, { temporary: reply.temporary });
}
