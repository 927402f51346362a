// The settings table on PostgreSQL: the link-signing secret every `digest serve` on the database shares
// when SECRET_KEY is not set (a link one instance mailed must verify on another).
import { randomBytes } from 'node:crypto';
import type { Pg } from './pool.ts';

// The first writer wins: two instances starting together keep the same secret.
const SQL_WRITE_ONCE = `INSERT INTO settings (key, value) VALUES ('secret_key', $1) ON CONFLICT (key) DO NOTHING`;
const SQL_READ = `SELECT value FROM settings WHERE key = 'secret_key'`;

/** The stored secret, generated once; `generated` says this call made it. */
export async function sharedSecret(c: Pg): Promise<{ secret: string; generated: boolean }> {
  const stored = (await c.query<{ value: string }>(SQL_READ)).rows[0]?.value;
  if (stored) return { secret: stored, generated: false };
  const made = randomBytes(32).toString('hex');
  await c.query(SQL_WRITE_ONCE, [made]);
  const kept = (await c.query<{ value: string }>(SQL_READ)).rows[0]!.value;
  return { secret: kept, generated: kept === made };
}
