// The operator's password: stored only as an scrypt hash in ADMIN_PASSWORD_HASH, made by
// `digest admin-password`. Format: scrypt$N$r$p$<salt base64url>$<hash base64url>, so the cost can be
// raised later without breaking existing hashes. N = 2^15, r = 8 (32 MB, about 60-100 ms here): slow enough
// to make guessing expensive, with the login rate limit on top; run off the event loop (async scrypt).
import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const N = 2 ** 15;
const R = 8;
const P = 1;
const KEY_BYTES = 32;

function scrypt(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  const options: ScryptOptions = { N: n, r, p, maxmem: 256 * n * r + 1024 * 1024 };
  return new Promise((resolve, reject) =>
    scryptCb(password.normalize('NFC'), salt, KEY_BYTES, options, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

export async function hashPassword(password: string): Promise<string> {
  if (password.length < 12) throw new Error('the password must be at least 12 characters');
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, N, R, P);
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** Constant-time check; a malformed hash never matches. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const m = /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/.exec(stored);
  if (!m) return false;
  const [n, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  // Parameters scrypt accepts (N a power of two) and a cost we are willing to pay.
  if (n < 1024 || n > 2 ** 20 || (n & (n - 1)) !== 0 || r < 1 || r > 32 || p < 1 || p > 16) return false;
  const expected = Buffer.from(m[5]!, 'base64url');
  let key: Buffer;
  try {
    key = await scrypt(password, Buffer.from(m[4]!, 'base64url'), n, r, p);
  } catch {
    return false;
  }
  return key.length === expected.length && timingSafeEqual(key, expected);
}
