// Mailgun's webhook signature covers `timestamp + token`, not the event data, so a captured signature
// could carry any event. Each accepted token is remembered with a hash of the event data it came with
// (Mailgun's own advice) until its timestamp is too old to pass the freshness check anyway; a token seen
// again is the same post retried (same data: nothing new happens) or a replay (other data: refused).
import { createHash } from 'node:crypto';
import type { Db } from '../db/open.ts';
import { statement } from '../db/statements.ts';

export type TokenUse = 'first' | 'repeat' | 'replay';

/** Remembers a token unless it is already known (then nothing is returned). */
const SQL_REMEMBER = `
  INSERT INTO mailgun_tokens (token, body_sha256, expires_at) VALUES (:token, :hash, :expiresAt)
  ON CONFLICT (token) DO NOTHING
  RETURNING token`;

/** The event-data hash a known token came with. */
const SQL_KNOWN = `SELECT body_sha256 AS hash FROM mailgun_tokens WHERE token = ?`;

/** Tokens whose timestamps no longer pass the freshness check (index mailgun_tokens_expiry). */
const SQL_PRUNE = `DELETE FROM mailgun_tokens WHERE expires_at < ?`;

export function eventHash(eventData: unknown): string {
  return createHash('sha256').update(JSON.stringify(eventData ?? null)).digest('hex');
}

/**
 * Records one use of a verified token (call inside the transaction that acts on the event, so a failed
 * post leaves the token unused for the relay's retry), after pruning expired ones.
 */
export function useMailgunToken(db: Db, use: { token: string; hash: string; expiresAt: Date; now: Date }): TokenUse {
  statement(db, SQL_PRUNE).run(use.now.toISOString());
  const inserted = statement<Record<string, unknown>, { token: string }>(db, SQL_REMEMBER).get({
    token: use.token,
    hash: use.hash,
    expiresAt: use.expiresAt.toISOString(),
  });
  if (inserted) return 'first';
  return statement<[string], { hash: string }>(db, SQL_KNOWN).get(use.token)?.hash === use.hash ? 'repeat' : 'replay';
}
