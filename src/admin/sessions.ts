// Operator console sessions in SQLite (admin_sessions, migration 003): the cookie holds 256 random bits;
// only their SHA-256 is stored, so reading the database (or a backup) does not let anyone log in. Each
// session has its own CSRF token, which every console form carries and every POST must match.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/open.ts';
import { statement } from '../db/statements.ts';

export const SESSION_TTL_MS = 12 * 3600 * 1000;

export interface AdminSession {
  csrf: string;
  expiresAt: string;
}

const SQL_INSERT = `INSERT INTO admin_sessions (id_hash, csrf, created_at, expires_at) VALUES (?, ?, ?, ?)`;
const SQL_FIND = `SELECT csrf, expires_at AS expiresAt FROM admin_sessions WHERE id_hash = ? AND expires_at > ?`;
const SQL_DELETE = `DELETE FROM admin_sessions WHERE id_hash = ?`;
const SQL_PURGE = `DELETE FROM admin_sessions WHERE expires_at <= ?`;

const hashId = (id: string) => createHash('sha256').update(id).digest('hex');

export function constantTimeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export class AdminSessions {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /** A new session: returns the cookie value (never stored) and its CSRF token. */
  create(): { id: string; csrf: string } {
    const now = this.clock.now();
    statement(this.db, SQL_PURGE).run(now.toISOString());
    const id = randomBytes(32).toString('base64url');
    const csrf = randomBytes(32).toString('base64url');
    statement(this.db, SQL_INSERT).run(hashId(id), csrf, now.toISOString(), new Date(now.getTime() + SESSION_TTL_MS).toISOString());
    return { id, csrf };
  }

  find(id: string | undefined): AdminSession | undefined {
    if (!id || !/^[A-Za-z0-9_-]{43}$/.test(id)) return undefined;
    return statement<[string, string], AdminSession>(this.db, SQL_FIND).get(hashId(id), this.clock.now().toISOString());
  }

  delete(id: string | undefined): void {
    if (id) statement(this.db, SQL_DELETE).run(hashId(id));
  }
}
