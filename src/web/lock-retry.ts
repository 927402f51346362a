// A web write that meets another process's write lock is tried again, not failed at once and not
// waited for in one block. The connection of `digest serve` waits at most WEB_BUSY_TIMEOUT_MS per
// statement (better-sqlite3 waits synchronously: the whole process stalls meanwhile); a route whose
// handler throws SQLITE_BUSY / SQLITE_LOCKED runs again after a short pause, with the event loop free
// in between, until WEB_LOCK_WAIT_MS have passed; then the error handler answers 503 + Retry-After.
//
// Safe to re-run: a handler's writes are one transaction each and a busy one was rolled back; the
// handlers that write more than once (subscribe: one transaction, then the confirmation email) meet the
// lock at their first write. Reads never wait for a lock in WAL mode.
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import { retryWhileBusy } from '../db/busy.ts';

/**
 * Pause between tries. Short and fixed: a planner leaves the lock free for about 10 ms after each chunk
 * (src/plan/planner.ts), and a try every few ms catches that gap; each try blocks the event loop for at
 * most WEB_BUSY_TIMEOUT_MS (5 ms), and a failed try costs microseconds.
 */
const PAUSE_MS = 4;

export function retryLockedWrites(app: FastifyInstance, budgetMs: number): void {
  if (!(budgetMs > 0)) return;
  app.addHook('onRoute', (route) => {
    const handler = route.handler as (this: unknown, req: FastifyRequest, reply: FastifyReply) => unknown;
    route.handler = function retrying(this: unknown, req: FastifyRequest, reply: FastifyReply) {
      return retryWhileBusy(() => handler.call(this, req, reply), budgetMs, PAUSE_MS, () => reply.sent);
    } as RouteHandlerMethod;
  });
}
