// Operator console sessions: the port the console's guard and login routes call, and SQLite's adapter
// (admin_sessions, migration 003; PostgreSQL's is admin/postgres/sessions.ts, shared by every instance).
// The cookie holds 256 random bits; only their SHA-256 is stored, so reading the database (or a backup)
// does not let anyone log in. Each session has its own CSRF token, which every console form carries and
// every POST must match (in constant time).
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/open.ts';
import { statement } from '../db/statements.ts';

export const SESSION_TTL_MS = 12 * 3600 * 1000;

export interface AdminSession {
  csrf: string;
  expiresAt: string;
}

/** Where the console's sessions live: the SQLite file, or PostgreSQL with DATABASE_URL (every instance sees them). */
export interface ConsoleSessions {
  /** A new session (expired ones are purged first): the cookie value (never stored) and its CSRF token. */
  create(): Promise<{ id: string; csrf: string }>;
  /** The unexpired session a cookie names, if any. */
  find(id: string | undefined): Promise<AdminSession | undefined>;
  /** Logout: the cookie names no session any more, on any instance. */
  delete(id: string | undefined): Promise<void>;
}

/** What each adapter stores for a new session: the cookie's hash, its CSRF token, its times. */
export interface NewSessionRow {
  id: string;
  idHash: string;
  csrf: string;
  createdAt: string;
  expiresAt: string;
}

export const hashSessionId = (id: string) => createHash('sha256').update(id).digest('hex');

/** A cookie shaped like one we issue (43 base64url characters); anything else is never looked up. */
export const isSessionIdShape = (id: string | undefined): id is string => !!id && /^[A-Za-z0-9_-]{43}$/.test(id);

export function newSessionRow(now: Date): NewSessionRow {
  const id = randomBytes(32).toString('base64url');
  return {
    id,
    idHash: hashSessionId(id),
    csrf: randomBytes(32).toString('base64url'),
    createdAt: now.toISOString(),
    expiresAt: new Date(now.getTime() + SESSION_TTL_MS).toISOString(),
  };
}

export function constantTimeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

const SQL_INSERT = `INSERT INTO admin_sessions (id_hash, csrf, created_at, expires_at) VALUES (?, ?, ?, ?)`;
const SQL_FIND = `SELECT csrf, expires_at AS expiresAt FROM admin_sessions WHERE id_hash = ? AND expires_at > ?`;
const SQL_DELETE = `DELETE FROM admin_sessions WHERE id_hash = ?`;
const SQL_PURGE = `DELETE FROM admin_sessions WHERE expires_at <= ?`;

/** SQLite's sessions: the service's default (one instance per file). */
export class AdminSessions implements ConsoleSessions {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  async create(): Promise<{ id: string; csrf: string }> {
    const row = newSessionRow(this.clock.now());
    statement(this.db, SQL_PURGE).run(row.createdAt);
    statement(this.db, SQL_INSERT).run(row.idHash, row.csrf, row.createdAt, row.expiresAt);
    return { id: row.id, csrf: row.csrf };
  }

  async find(id: string | undefined): Promise<AdminSession | undefined> {
    if (!isSessionIdShape(id)) return undefined;
    return statement<[string, string], AdminSession>(this.db, SQL_FIND).get(hashSessionId(id), this.clock.now().toISOString());
  }

  async delete(id: string | undefined): Promise<void> {
    if (id) statement(this.db, SQL_DELETE).run(hashSessionId(id));
  }
}
