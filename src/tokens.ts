// Signed link tokens: HMAC-SHA256 with SECRET_KEY over (purpose, subscriber id, subscriber salt, expiry),
// compared in constant time. A token names one subscriber and one purpose, so it never acts on another
// subscriber or for another purpose; rotating a subscriber's salt revokes all of their links.
//
// Two forms, both verified:
// - long, `<id>.<purpose>.<expiry|0>.<signature>`: the full 256-bit signature (43 characters); for a link
//   that expires (confirm) and for every email sent before the compact form;
// - compact, `<id36>.<code>.<signature>`: the links of a digest (manage, its view token, the feed; the mute
//   tokens of emails sent before mute links carried the manage token),
//   ids in base 36, the purpose as one letter and an id (`m`, `f`, `t<topic36>`, `v<digest36>`), and 128
//   bits of the signature (22 characters), as the VERP tags already are. Decision: a broad digest carries
//   ~320 signed links, and compact ones make its message ~10 KB smaller. 128 bits of HMAC-SHA256 leave a
//   forger a 2^-128 chance per try (NIST SP 800-107 allows truncation to it); the public forms are rate
//   limited anyway. Measured: BENCHMARKS.md § Why the code is shaped this way, tokens.ts.
// The two forms sign different texts (the compact one is prefixed `c|`, a long head starts with a digit),
// so a signature of one form can never be replayed as the other.
import { createHmac, createSecretKey, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto';

/**
 * Purposes:
 * - confirm: double opt-in link (expires)
 * - manage: preferences page and unsubscribe (List-Unsubscribe, footer links)
 * - mute:<topicId>: one-click mute of one topic, as emails sent before carry it; no longer signed (a mute
 *   link is the manage token and the topic id: links.ts mute()), still accepted by /mute/:token
 * - view:<digestId>: one digest's own token: its web view, and the feedback links of its papers and
 *   suggestions ("more/less like this", follow an author; the paper must be in that digest)
 * - paper:<paperId>: feedback on one paper, as emails sent before the per-digest token carry it; no
 *   longer signed, still accepted by the feedback routes
 * - feed: the personal Atom feed
 * - read:<digestId>: reading one digest on the web and nothing else (the "view in browser" link, which a
 *   reader may share); emails sent before it carry view:<digestId> there
 */
export type TokenPurpose = 'confirm' | 'manage' | 'feed' | `mute:${number}` | `view:${number}` | `paper:${number}` | `read:${number}`;

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

/** What a token claims before its signature is checked. */
interface Claim {
  subscriberId: number;
  purpose: TokenPurpose;
  exp: number;
  /** The signed text (without the salt) and the signature as given. */
  head: string;
  signature: string;
  compact: boolean;
}

export function newSalt(): string {
  return randomBytes(16).toString('base64url');
}

/** Bytes of the signature a compact token carries (128 bits: 22 base64url characters). */
const COMPACT_SIGNATURE_BYTES = 16;
const LONG = /^(\d{1,15})\.(confirm|manage|feed|mute-\d{1,15}|view-\d{1,15}|paper-\d{1,15}|read-\d{1,15})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/;
const COMPACT = /^([0-9a-z]{1,11})\.(m|f|[tvr][0-9a-z]{1,11})\.([A-Za-z0-9_-]{22})$/;
/** A base-36 id as written by sign(): no leading zero, within the safe integers. */
const ID36 = /^(0|[1-9a-z][0-9a-z]*)$/;

export class Tokens {
  /** The key prepared once: createHmac with a string key re-imports it per call (~20% of a signature). */
  private readonly key: KeyObject;

  constructor(secret: string) {
    if (secret.length < 32) throw new Error('SECRET_KEY must be at least 32 characters');
    this.key = createSecretKey(Buffer.from(secret, 'utf8'));
  }

  /**
   * A link token for `purpose`: compact when the purpose has a compact code and the link does not expire
   * (every link of a digest), else the long form (confirm).
   */
  sign(subject: TokenSubject, purpose: TokenPurpose, expiresAt?: Date): string {
    const code = expiresAt === undefined ? compactCode(purpose) : undefined;
    if (code !== undefined) {
      const head = `${subject.id.toString(36)}.${code}`;
      return `${head}.${this.mac(`c|${head}`, subject.tokenSalt).subarray(0, COMPACT_SIGNATURE_BYTES).toString('base64url')}`;
    }
    return this.signLong(subject, purpose, expiresAt);
  }

  /** The long form, `<id>.<purpose>.<expiry|0>.<signature>`: what emails sent before the compact form carry. */
  signLong(subject: TokenSubject, purpose: TokenPurpose, expiresAt?: Date): string {
    const exp = expiresAt ? Math.floor(expiresAt.getTime() / 1000) : 0;
    const head = `${subject.id}.${purpose.replace(':', '-')}.${exp}`;
    return `${head}.${this.mac(head, subject.tokenSalt).toString('base64url')}`;
  }

  /** Reads the claimed subscriber id, so the caller can load the salt; verify() then checks the signature. */
  peek(token: string): { subscriberId: number; purpose: TokenPurpose; exp: number } | null {
    const c = claim(token);
    return c ? { subscriberId: c.subscriberId, purpose: c.purpose, exp: c.exp } : null;
  }

  verify(token: string, subject: TokenSubject | undefined, now: Date): TokenCheck {
    const claimed = claim(token);
    if (!claimed) return { ok: false, reason: 'malformed' };
    // Always compute a MAC, even for an unknown subscriber, so timing does not tell ids apart.
    const salt = subject && subject.id === claimed.subscriberId ? subject.tokenSalt : 'no-such-subscriber';
    const expected = claimed.compact
      ? this.mac(`c|${claimed.head}`, salt).subarray(0, COMPACT_SIGNATURE_BYTES)
      : this.mac(claimed.head, salt);
    // Compared as text, not as decoded bytes: the last character of a signature carries unused bits (22
    // characters are 132 bits for 128; 43 are 258 for 256), which a decoder ignores, so 2-16 spellings of
    // one signature would all pass. Only the one sign() writes does. latin1 is exact here: LONG and COMPACT
    // admit only base64url characters, one byte each.
    const given = Buffer.from(claimed.signature, 'latin1');
    const wanted = Buffer.from(expected.toString('base64url'), 'latin1');
    const match = given.length === wanted.length && timingSafeEqual(given, wanted);
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

/** The compact code of a purpose (`m`, `f`, `t<topic36>`, `v<digest36>`, `r<digest36>`), or undefined: long form only. */
function compactCode(purpose: TokenPurpose): string | undefined {
  if (purpose === 'manage') return 'm';
  if (purpose === 'feed') return 'f';
  const colon = purpose.indexOf(':');
  if (colon < 0) return undefined; // confirm
  const kind = purpose.slice(0, colon);
  const id = Number(purpose.slice(colon + 1));
  if (!Number.isSafeInteger(id) || id < 0) return undefined;
  if (kind === 'mute') return `t${id.toString(36)}`;
  if (kind === 'view') return `v${id.toString(36)}`;
  if (kind === 'read') return `r${id.toString(36)}`;
  return undefined;
}

function claim(token: string): Claim | null {
  const long = LONG.exec(token);
  if (long) {
    return {
      subscriberId: Number(long[1]),
      purpose: long[2]!.replace('-', ':') as TokenPurpose,
      exp: Number(long[3]),
      head: token.slice(0, token.lastIndexOf('.')),
      signature: long[4]!,
      compact: false,
    };
  }
  const compact = COMPACT.exec(token);
  if (!compact) return null;
  const subscriberId = id36(compact[1]!);
  const code = compact[2]!;
  let purpose: TokenPurpose | undefined;
  if (code === 'm') purpose = 'manage';
  else if (code === 'f') purpose = 'feed';
  else {
    const target = id36(code.slice(1));
    if (target !== undefined) purpose = code[0] === 't' ? `mute:${target}` : code[0] === 'r' ? `read:${target}` : `view:${target}`;
  }
  if (subscriberId === undefined || purpose === undefined) return null;
  return { subscriberId, purpose, exp: 0, head: `${compact[1]}.${code}`, signature: compact[3]!, compact: true };
}

/** A base-36 id as sign() writes it, or undefined (a leading zero, or past the safe integers). */
function id36(text: string): number | undefined {
  if (!ID36.test(text)) return undefined;
  const n = parseInt(text, 36);
  return Number.isSafeInteger(n) ? n : undefined;
}
