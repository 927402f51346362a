// Riding out a lost database (PostgreSQL restarted, failover, a network blip): a statement that fails
// because the connection or the server went away is tried again, with growing pauses, until it works or
// the budget is spent. A constraint or syntax error is not retried. Every write it is used for is a
// compare-and-set, so running one twice (its commit reached the server, its answer did not) is harmless.
import { setTimeout as sleep } from 'node:timers/promises';
import { AppError } from '../../errors.ts';

/** SQLSTATE classes 08 (connection exception) and 57P (operator intervention: shutdown, starting up). */
export function isConnectionLoss(e: unknown): boolean {
  const err = e as { code?: string; message?: string };
  if (typeof err.code === 'string' && /^(08|57P)/.test(err.code)) return true;
  if (typeof err.code === 'string' && /^E(CONNREFUSED|CONNRESET|PIPE|TIMEDOUT|HOSTUNREACH|NOTFOUND)$/.test(err.code)) return true;
  return /Connection terminated|connection timeout|Client has encountered a connection error|not queryable/i.test(err.message ?? '');
}

export async function whileConnectionLost<T>(fn: () => Promise<T>, budgetMs = 60_000, onRetry?: (e: unknown) => void): Promise<T> {
  const started = Date.now();
  for (let pause = 50; ; pause = Math.min(pause * 2, 1000)) {
    try {
      return await fn();
    } catch (e) {
      if (!isConnectionLoss(e) || Date.now() - started > budgetMs) throw e;
      onRetry?.(e);
      await sleep(pause);
    }
  }
}

const UNREACHABLE = 'We could not save this just now. Nothing was changed; please try again in a moment.';

/** A lost or restarting database: a temporary DB_FAULT (503 with Retry-After), as SQLite's storage faults. */
export async function answerDbLoss<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (isConnectionLoss(e)) throw new AppError('DB_FAULT', UNREACHABLE, { temporary: true, retryInSeconds: 5, cause: e });
    throw e;
  }
}
