// The console's sessions on PostgreSQL (admin_sessions, db/migrations-pg/014_init.sql): with
// DATABASE_URL every `digest serve` instance reads and writes the same rows, so a login at one instance
// holds at every other and a logout anywhere ends it everywhere. Same rules as SQLite's adapter
// (admin/sessions.ts): only the cookie's SHA-256 is stored, a TTL, expired rows purged at each login.
import type pg from 'pg';
import type { Clock } from '../../clock.ts';
import { hashSessionId, isSessionIdShape, newSessionRow, type AdminSession, type ConsoleSessions } from '../sessions.ts';

// Timestamps are ISO-8601 UTC text, as on SQLite: they compare in time order as strings.
const SQL_PURGE = `DELETE FROM admin_sessions WHERE expires_at <= $1`;
const SQL_INSERT = `INSERT INTO admin_sessions (id_hash, csrf, created_at, expires_at) VALUES ($1, $2, $3, $4)`;
const SQL_FIND = `SELECT csrf, expires_at AS "expiresAt" FROM admin_sessions WHERE id_hash = $1 AND expires_at > $2`;
const SQL_DELETE = `DELETE FROM admin_sessions WHERE id_hash = $1`;

export function postgresConsoleSessions(pool: pg.Pool, clock: Clock): ConsoleSessions {
  return {
    async create() {
      const row = newSessionRow(clock.now());
      await pool.query(SQL_PURGE, [row.createdAt]);
      await pool.query(SQL_INSERT, [row.idHash, row.csrf, row.createdAt, row.expiresAt]);
      return { id: row.id, csrf: row.csrf };
    },
    async find(id) {
      if (!isSessionIdShape(id)) return undefined;
      const r = await pool.query<AdminSession>(SQL_FIND, [hashSessionId(id), clock.now().toISOString()]);
      return r.rows[0];
    },
    async delete(id) {
      if (id) await pool.query(SQL_DELETE, [hashSessionId(id)]);
    },
  };
}
