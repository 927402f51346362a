// What the bounce paths (the SMTP receiver, the relays' webhooks) need from the store, as one small async
// port: a digest's VERP nonce, recordBounce's rules in one transaction, and Mailgun's token memory written
// in the same transaction as what its event does. Two adapters: this file's over the SQLite file (today's
// synchronous code, wrapped), and postgres-store.ts's over PostgreSQL, chosen in the composition root by
// DATABASE_URL. The send path's own recordBounce call (send/send-outcome.ts) stays synchronous inside its
// SQLite transaction and does not go through here.
import { nonceLookup } from './digest-tag.ts';
import { useMailgunToken, type TokenUse } from './mailgun-tokens.ts';
import { recordBounce, type BounceDeps, type BounceInput, type BounceOutcome } from './service.ts';
import type { Verp, VerpAddress } from './verp.ts';

/** One use of a verified Mailgun token: the hash of the event data it came with, until when it stays fresh. */
export interface MailgunTokenUse {
  token: string;
  hash: string;
  expiresAt: Date;
  now: Date;
}

/** What a token's use did: a first use records `input` (when given) in the same transaction; outcome null otherwise. */
export interface TokenRecord {
  use: TokenUse;
  outcome: BounceOutcome | null;
}

export interface BounceStore {
  /** A digest row's nonce: a number, null for rows planned before nonces, undefined when there is no such row. */
  nonceOf(digestId: number): Promise<number | null | undefined>;
  /** recordBounce's rules (service.ts) in one transaction, logged. */
  record(input: BounceInput): Promise<BounceOutcome>;
  /** Uses a Mailgun token and, on its first use, records `input`: both or neither are written. */
  recordWithToken(use: MailgunTokenUse, input: BounceInput | null): Promise<TokenRecord>;
}

/** The SQLite file's bounce store: today's synchronous repositories, wrapped. */
export function sqliteBounceStore(deps: BounceDeps): BounceStore {
  const { db } = deps;
  const nonceOf = nonceLookup(db);
  return {
    nonceOf: async (digestId) => nonceOf(digestId),
    record: async (input) => recordBounce(deps, input),
    recordWithToken: async (use, input) =>
      db
        .transaction((): TokenRecord => {
          const u = useMailgunToken(db, use);
          return { use: u, outcome: u === 'first' && input ? recordBounce(deps, input) : null };
        })
        .immediate(),
  };
}

/** The digest whose verified tag `address` carries, or null (the tag is checked against the row's nonce in `store`). */
export async function taggedDigestIn(store: BounceStore, verp: Verp, address: string): Promise<VerpAddress | null> {
  const c = verp.read(address);
  if (!c) return null;
  const nonce = await store.nonceOf(c.digestId);
  return verp.parse(address, (id) => (id === c.digestId ? nonce : undefined));
}
