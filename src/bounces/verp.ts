// VERP (variable envelope return path): every digest leaves with its own envelope sender,
// `<local>+<digestId>-<tag>@<domain>` from BOUNCE_ADDRESS, where tag is an HMAC of the digest id
// (SECRET_KEY, 128 bits, src/tokens.ts). A bounce or complaint that comes back to that address names the
// digest, and through its ledger row the subscriber, without trusting any address quoted in the report:
// a forged or altered tag fails the constant-time check and changes nothing.
// Local part size: "bounces+" + up to 15 digits + "-" + 32 hex = at most 56 of the 64 characters RFC 5321
// allows, so config.ts limits BOUNCE_ADDRESS's own local part to 20 characters.
import { Tokens } from '../tokens.ts';

const TAG_PURPOSE = 'verp';

export interface VerpAddress {
  digestId: number;
}

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

  /** The envelope sender (MAIL FROM) of one digest. */
  envelopeFor(digestId: number): string {
    return `${this.local}+${digestId}-${this.tokens.tag(TAG_PURPOSE, String(digestId))}@${this.domain}`;
  }

  /** True for the bounce mailbox itself or any tagged form of it (whether or not the tag is good). */
  isBounceMailbox(address: string): boolean {
    const a = address.trim().replace(/^<|>$/g, '').toLowerCase();
    const at = a.lastIndexOf('@');
    if (at < 0 || a.slice(at + 1) !== this.domain) return false;
    const local = a.slice(0, at);
    return local === this.local || local.startsWith(`${this.local}+`);
  }

  /** The digest a tagged address names, or null when it is not ours or its tag does not verify. */
  parse(address: string): VerpAddress | null {
    const a = address.trim().replace(/^<|>$/g, '').toLowerCase();
    if (!this.isBounceMailbox(a)) return null;
    const m = /^[^@]*\+(\d{1,15})-([0-9a-f]{32})@/.exec(a);
    if (!m || !a.startsWith(`${this.local}+`)) return null;
    const digestId = Number(m[1]);
    return this.tokens.tagMatches(TAG_PURPOSE, String(digestId), m[2]!) ? { digestId } : null;
  }
}

/** The VERP maker when BOUNCE_ADDRESS and SECRET_KEY are set (config.ts requires the key with the address). */
export function verpFrom(config: { BOUNCE_ADDRESS?: string | undefined; SECRET_KEY?: string | undefined }): Verp | undefined {
  if (!config.BOUNCE_ADDRESS || !config.SECRET_KEY) return undefined;
  return new Verp(config.BOUNCE_ADDRESS, new Tokens(config.SECRET_KEY));
}
