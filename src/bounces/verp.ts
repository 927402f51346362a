// VERP (variable envelope return path): every digest leaves with its own envelope sender,
// `<local>+<digestId>-<tag>@<domain>` from BOUNCE_ADDRESS, where tag is an HMAC (SECRET_KEY, 128 bits,
// src/tokens.ts) of the digest id and the random nonce of its ledger row. A bounce or complaint that comes
// back to that address names the digest, and through its ledger row the subscriber, without trusting any
// address quoted in the report: a forged or altered tag fails the constant-time check and changes nothing.
// The nonce makes a tag good for one row only: SQLite gives a deleted row's id to the next digest, whose
// nonce differs, so a late bounce for the deleted one cannot hit it. Rows planned before migration 010
// have no nonce (null): their tags sign the id alone and stay good while that row exists.
// Local part size: "bounces+" + up to 15 digits + "-" + 32 hex = at most 56 of the 64 characters RFC 5321
// allows, so config.ts limits BOUNCE_ADDRESS's own local part to 20 characters.
import { Tokens } from '../tokens.ts';

const TAG_PURPOSE = 'verp';

export interface VerpAddress {
  digestId: number;
}

/** A tagged address as read, before its tag is checked against the row it names. */
export interface VerpCandidate {
  digestId: number;
  tag: string;
}

/** A digest row's nonce: a number, null for rows planned before nonces, undefined when there is no such row. */
export type NonceOf = (digestId: number) => number | null | undefined;

/** What the tag signs: the id, and the row's nonce when it has one. */
const signed = (digestId: number, nonce: number | null) => (nonce === null ? String(digestId) : `${digestId}.${nonce}`);

export class Verp {
  readonly local: string;
  readonly domain: string;

  constructor(
    readonly bounceAddress: string,
    private readonly tokens: Tokens,
  ) {
    const at = bounceAddress.lastIndexOf('@');
    this.local = bounceAddress.slice(0, at).toLowerCase();
    this.domain = bounceAddress.slice(at + 1).toLowerCase();
  }

  /** The envelope sender (MAIL FROM) of one digest: its id and its row's nonce (null only for rows from before nonces). */
  envelopeFor(digestId: number, nonce: number | null): string {
    return `${this.local}+${digestId}-${this.tokens.tag(TAG_PURPOSE, signed(digestId, nonce))}@${this.domain}`;
  }

  /** True for the bounce mailbox itself or any tagged form of it (whether or not the tag is good). */
  isBounceMailbox(address: string): boolean {
    const a = address.trim().replace(/^<|>$/g, '').toLowerCase();
    const at = a.lastIndexOf('@');
    if (at < 0 || a.slice(at + 1) !== this.domain) return false;
    const local = a.slice(0, at);
    return local === this.local || local.startsWith(`${this.local}+`);
  }

  /** The digest id and tag a tagged form of our mailbox carries, unchecked; null for anything else. */
  read(address: string): VerpCandidate | null {
    const a = address.trim().replace(/^<|>$/g, '').toLowerCase();
    if (!this.isBounceMailbox(a) || !a.startsWith(`${this.local}+`)) return null;
    const m = /^[^@]*\+(\d{1,15})-([0-9a-f]{32})@/.exec(a);
    return m ? { digestId: Number(m[1]), tag: m[2]! } : null;
  }

  /**
   * The digest a tagged address names, or null when it is not ours, names no row, or its tag was not made
   * for that row (constant-time check against the row's nonce).
   */
  parse(address: string, nonceOf: NonceOf): VerpAddress | null {
    const c = this.read(address);
    if (!c) return null;
    const nonce = nonceOf(c.digestId);
    if (nonce === undefined) return null;
    return this.tokens.tagMatches(TAG_PURPOSE, signed(c.digestId, nonce), c.tag) ? { digestId: c.digestId } : null;
  }
}

/** The VERP maker when BOUNCE_ADDRESS and SECRET_KEY are set (config.ts requires the key with the address). */
export function verpFrom(config: { BOUNCE_ADDRESS?: string | undefined; SECRET_KEY?: string | undefined }): Verp | undefined {
  if (!config.BOUNCE_ADDRESS || !config.SECRET_KEY) return undefined;
  return new Verp(config.BOUNCE_ADDRESS, new Tokens(config.SECRET_KEY));
}
