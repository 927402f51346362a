// Resolves a signed link token to the subscriber it was made for, or throws a clear 4xx AppError.
// A token made for another purpose, another subscriber, or tampered with in any way is refused.
import type { Clock } from '../../clock.ts';
import type { Db } from '../../db/open.ts';
import { AppError, isAppError } from '../../errors.ts';
import type { Tokens } from '../../tokens.ts';
import type { Pg } from '../../db/postgres/pool.ts';
import * as pgRecords from './postgres.ts';
import { findSubscriberById, type SubscriberRecord } from './repo.ts';

export type LinkKind = 'confirm' | 'manage' | 'mute' | 'view' | 'paper' | 'feed' | 'read';

/** The tokens a web view link may carry: its own read:<digest>, or the view:<digest> one older emails carry. */
export const WEB_VIEW_KINDS = ['read', 'view'] as const satisfies readonly LinkKind[];

export interface ResolvedLink<K extends LinkKind = LinkKind> {
  subscriber: SubscriberRecord;
  /** Which of the accepted kinds the token is (a route may take more than one, e.g. feedback). */
  kind: K;
  /** topics.id for 'mute', digests.id for 'view' and 'read', papers.id for 'paper'. */
  targetId: number | undefined;
}

const WHAT: Record<LinkKind, string> = {
  confirm: 'confirmation link',
  manage: 'link',
  mute: 'mute link',
  view: 'link to this digest',
  paper: 'link',
  feed: 'feed link',
  read: 'link to this digest',
};

export function invalidLink(kind: LinkKind): AppError {
  return new AppError(
    'LINK_INVALID',
    `This ${WHAT[kind]} is not valid. Please use the most recent link from your email, copied in full.`,
  );
}

export function expiredLink(kind: LinkKind): AppError {
  const hint = kind === 'confirm' ? ' Subscribe again to receive a new confirmation email.' : '';
  return new AppError('LINK_EXPIRED', `This ${WHAT[kind]} has expired.${hint}`);
}

/**
 * `kind` is the one kind of token the link takes, or a list of kinds it accepts (the feedback routes
 * take a digest's own token and, for emails sent before it, a per-paper one); error messages speak of
 * the first. The caller checks the target id against what the link acts on.
 */
export function resolveLink<K extends LinkKind>(db: Db, tokens: Tokens, clock: Clock, token: string, kind: K | readonly K[]): ResolvedLink<K> {
  const claimed = tokens.peek(token);
  return checkLink(tokens, clock, token, claimed ? findSubscriberById(db, claimed.subscriberId) : undefined, kind);
}

/** resolveLink on PostgreSQL: the same checks over PostgreSQL's subscriber row. */
export async function resolveLinkPg<K extends LinkKind>(c: Pg, tokens: Tokens, clock: Clock, token: string, kind: K | readonly K[]): Promise<ResolvedLink<K>> {
  const claimed = tokens.peek(token);
  return checkLink(tokens, clock, token, claimed ? await pgRecords.findSubscriberById(c, claimed.subscriberId) : undefined, kind);
}

/** Either engine's check of a token against the subscriber it claims (undefined: no such row). */
function checkLink<K extends LinkKind>(tokens: Tokens, clock: Clock, token: string, subscriber: SubscriberRecord | undefined, kind: K | readonly K[]): ResolvedLink<K> {
  const kinds: readonly K[] = typeof kind === 'string' ? [kind] : kind;
  const named = kinds[0]!;
  // verify() runs (and spends the same time) whether or not the subscriber exists.
  const check = tokens.verify(token, subscriber, clock.now());
  if (!check.ok) throw check.reason === 'expired' ? expiredLink(named) : invalidLink(named);
  if (!subscriber) throw invalidLink(named);
  const [purpose, target] = check.token.purpose.split(':');
  const found = kinds.find((k) => k === purpose);
  if (found === undefined) throw invalidLink(named);
  return { subscriber, kind: found, targetId: target === undefined ? undefined : Number(target) };
}

/** A link this store refused as not its own (another store, during a move, may know it). */
export const foreignLink = (e: unknown): boolean => isAppError(e) && e.code === 'LINK_INVALID';

/** Runs `first` (the primary store); `then` (the earlier store) only when `first` refused a link
 * (LINK_INVALID) that the primary store did not sign: a refusal of its own (a complained address's
 * confirmation link, another reader's digest) is final. */
export function eitherStore(signedHere: (token: string) => Promise<boolean>) {
  return async <T>(token: string, first: () => Promise<T>, then: () => Promise<T>): Promise<T> => {
    try {
      return await first();
    } catch (e) {
      if (!foreignLink(e) || (await signedHere(token))) throw e;
      return then();
    }
  };
}
