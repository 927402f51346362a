// What the PostgreSQL door's use cases share: the pool and services they are given, signed links resolved
// against PostgreSQL's rows (records/link-tokens.ts's rules), a per-address transaction, and a lost
// database answered as a temporary fault (503, nothing changed) rather than a 500.
import type pg from 'pg';
import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import type { Pg } from '../../db/postgres/pool.ts';
import type { Links } from '../../links.ts';
import type { Logger } from '../../log.ts';
import type { LikeLookups } from '../../match/like/lookups.ts';
import type { Tokens } from '../../tokens.ts';
import { resolveLinkPg as resolveLinkOnPg, type LinkKind } from '../records/link-tokens.ts';
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
  return resolveLinkOnPg(c, deps.tokens, deps.clock, token, kind);
}

/** Whether the token's signature holds for one of PostgreSQL's subscribers (whatever its purpose or expiry). */
export async function signedByPg(c: Pg, deps: PgDoorDeps, token: string): Promise<boolean> {
  const claimed = deps.tokens.peek(token);
  const subscriber = claimed ? await records.findSubscriberById(c, claimed.subscriberId) : undefined;
  const check = deps.tokens.verify(token, subscriber, deps.clock.now());
  return check.ok || check.reason === 'expired';
}

export { forAddress } from '../records/postgres.ts';

export { answerDbLoss } from '../../db/postgres/retry.ts';
