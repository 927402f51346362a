// What the PostgreSQL door's use cases share: the pool and services they are given, signed links resolved
// against PostgreSQL's rows (records/link-tokens.ts's rules), a per-address transaction, and a lost
// database answered as a temporary fault (503, nothing changed) rather than a 500.
import type pg from 'pg';
import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import { inTransaction, type Pg } from '../../db/postgres/pool.ts';
import { isConnectionLoss } from '../../db/postgres/retry.ts';
import { AppError } from '../../errors.ts';
import type { Links } from '../../links.ts';
import type { Logger } from '../../log.ts';
import type { LikeLookups } from '../../match/like/lookups.ts';
import type { Tokens } from '../../tokens.ts';
import { expiredLink, invalidLink, type LinkKind } from '../records/link-tokens.ts';
import * as records from '../records/postgres.ts';
import type { SubscriberRecord } from '../records/repo.ts';

export interface PgDoorDeps {
  pool: pg.Pool;
  clock: Clock;
  tokens: Tokens;
  links: Links;
  logger: Logger;
  config: Pick<Config, 'DIGEST_TZ' | 'DIGEST_HOUR'>;
  /** Looks up like: examples PostgreSQL lacks (over its like_examples); unset: an unknown example is refused. */
  likeLookups?: LikeLookups | undefined;
}

/** The subscriber a signed link names, or the same 4xx errors as on SQLite; verify() runs whether or not the row exists. */
export async function resolveLinkPg(c: Pg, deps: PgDoorDeps, token: string, kind: LinkKind): Promise<{ subscriber: SubscriberRecord; targetId: number | undefined }> {
  const claimed = deps.tokens.peek(token);
  const subscriber = claimed ? await records.findSubscriberById(c, claimed.subscriberId) : undefined;
  const check = deps.tokens.verify(token, subscriber, deps.clock.now());
  if (!check.ok) throw check.reason === 'expired' ? expiredLink(kind) : invalidLink(kind);
  if (!subscriber) throw invalidLink(kind);
  const [purpose, target] = check.token.purpose.split(':');
  if (purpose !== kind) throw invalidLink(kind);
  return { subscriber, targetId: target === undefined ? undefined : Number(target) };
}

/** Whether the token's signature holds for one of PostgreSQL's subscribers (whatever its purpose or expiry). */
export async function signedByPg(c: Pg, deps: PgDoorDeps, token: string): Promise<boolean> {
  const claimed = deps.tokens.peek(token);
  const subscriber = claimed ? await records.findSubscriberById(c, claimed.subscriberId) : undefined;
  const check = deps.tokens.verify(token, subscriber, deps.clock.now());
  return check.ok || check.reason === 'expired';
}

/**
 * One transaction holding the address's advisory lock: two instances taking requests for one address
 * (a double click through a load balancer) write one after the other, as SQLite's BEGIN IMMEDIATE does,
 * so the per-address email limits count every email.
 */
export function forAddress<T>(pool: pg.Pool, email: string, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  return inTransaction(pool, async (c) => {
    await c.query(`SELECT pg_advisory_xact_lock(hashtextextended(lower($1), 0))`, [email]);
    return fn(c);
  });
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
