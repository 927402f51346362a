// Signed link tokens: HMAC-SHA256 with SECRET_KEY over (purpose, subscriber id, subscriber salt, expiry).
// 256-bit signatures, compared in constant time. A token names one subscriber and one purpose, so it
// never acts on another subscriber or for another purpose; rotating a subscriber's salt revokes all
// of their links.
import { createHmac, createSecretKey, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto';

/**
 * Purposes:
 * - confirm: double opt-in link (expires)
 * - manage: preferences page and unsubscribe (List-Unsubscribe, footer links)
 * - mute:<topicId>: one-click mute of one topic
 * - view:<digestId>: one digest's own token: its web view, and the feedback links of its papers and
 *   suggestions ("more/less like this", follow an author; the paper must be in that digest)
 * - paper:<paperId>: feedback on one paper, as emails sent before the per-digest token carry it; no
 *   longer signed, still accepted by the feedback routes
 * - feed: the personal Atom feed
 */
export type TokenPurpose = 'confirm' | 'manage' | 'feed' | `mute:${number}` | `view:${number}` | `paper:${number}`;

export interface TokenSubject {
  id: number;
  tokenSalt: string;
}

export interface VerifiedToken {
  subscriberId: number;
  purpose: TokenPurpose;
}

export type TokenCheck =
  | { ok: true; token: VerifiedToken }
  | { ok: false; reason: 'malformed' | 'bad-signature' | 'expired' };

export function newSalt(): string {
  return randomBytes(16).toString('base64url');
}

export class Tokens {
  /** The key prepared once: createHmac with a string key re-imports it per call (~20% of a signature). */
  private readonly key: KeyObject;

  constructor(secret: string) {
    if (secret.length < 32) throw new Error('SECRET_KEY must be at least 32 characters');
    this.key = createSecretKey(Buffer.from(secret, 'utf8'));
  }

  /** `<id>.<purpose>.<expiry|0>.<signature>`; the purpose uses '-' for ':' to stay URL-safe. */
  sign(subject: TokenSubject, purpose: TokenPurpose, expiresAt?: Date): string {
    const exp = expiresAt ? Math.floor(expiresAt.getTime() / 1000) : 0;
    const head = `${subject.id}.${purpose.replace(':', '-')}.${exp}`;
    return `${head}.${this.mac(head, subject.tokenSalt).toString('base64url')}`;
  }

  /** Reads the claimed subscriber id, so the caller can load the salt; verify() then checks the signature. */
  peek(token: string): { subscriberId: number; purpose: TokenPurpose; exp: number } | null {
    const m = /^(\d{1,15})\.(confirm|manage|feed|mute-\d{1,15}|view-\d{1,15}|paper-\d{1,15})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token);
    if (!m) return null;
    return { subscriberId: Number(m[1]), purpose: m[2]!.replace('-', ':') as TokenPurpose, exp: Number(m[3]) };
  }

  verify(token: string, subject: TokenSubject | undefined, now: Date): TokenCheck {
    const claimed = this.peek(token);
    if (!claimed) return { ok: false, reason: 'malformed' };
    // Always compute a MAC, even for an unknown subscriber, so timing does not tell ids apart.
    const salt = subject && subject.id === claimed.subscriberId ? subject.tokenSalt : 'no-such-subscriber';
    const head = token.slice(0, token.lastIndexOf('.'));
    const expected = this.mac(head, salt);
    const given = Buffer.from(token.slice(token.lastIndexOf('.') + 1), 'base64url');
    const match = given.length === expected.length && timingSafeEqual(given, expected);
    if (!match || !subject || subject.id !== claimed.subscriberId) return { ok: false, reason: 'bad-signature' };
    if (claimed.exp !== 0 && claimed.exp * 1000 < now.getTime()) return { ok: false, reason: 'expired' };
    return { ok: true, token: { subscriberId: claimed.subscriberId, purpose: claimed.purpose } };
  }

  /**
   * A short signature of `data` for one purpose, as lowercase hex (`bytes` of HMAC-SHA256, 16 = 128 bits):
   * the VERP tag of a digest's envelope sender (src/bounces/verp.ts). Lowercase hex because mail systems
   * may change the case of an address's local part.
   */
  tag(purpose: string, data: string, bytes = 16): string {
    return this.mac(`tag:${purpose}:${data}`, '').subarray(0, bytes).toString('hex');
  }

  /** Constant-time check of a tag made by tag() (a wrong length or non-hex text is simply false). */
  tagMatches(purpose: string, data: string, given: string, bytes = 16): boolean {
    const expected = this.mac(`tag:${purpose}:${data}`, '').subarray(0, bytes);
    const got = /^[0-9a-f]*$/i.test(given) ? Buffer.from(given, 'hex') : Buffer.alloc(0);
    return got.length === expected.length && timingSafeEqual(got, expected);
  }

  private mac(head: string, salt: string): Buffer {
    return createHmac('sha256', this.key).update(`${head}|${salt}`).digest();
  }
}
