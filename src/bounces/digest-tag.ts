// Which ledger row a tagged bounce address names: the VERP tag (verp.ts) is checked against the nonce of
// the row its id points at, so a tag verifies only for the very digest it was made for.
import type { Db } from '../db/open.ts';
import { statement } from '../db/statements.ts';
import type { NonceOf, Verp, VerpAddress } from './verp.ts';

/** A digest's VERP nonce (NULL for rows planned before migration 010). */
const SQL_DIGEST_NONCE = `SELECT verp_nonce AS nonce FROM digests WHERE id = ?`;

export function nonceLookup(db: Db): NonceOf {
  return (digestId) => statement<[number], { nonce: number | null }>(db, SQL_DIGEST_NONCE).get(digestId)?.nonce;
}

/** The digest whose verified tag `address` carries, or null. */
export function taggedDigest(db: Db, verp: Verp, address: string): VerpAddress | null {
  return verp.parse(address, nonceLookup(db));
}
