// The operator console's sessions on PostgreSQL, across two real `digest serve` instances on one schema
// (issue 39: "the web tier keeps no state ... that another instance needs"): a login through instance A
// holds at instance B (its cookie and CSRF token act there), a logout through B ends the session at A, and
// a wrong CSRF token is refused. Skipped, said once, when PostgreSQL is unreachable.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copySqliteToPostgres } from '../../src/db/postgres/copy.ts';
import { adminHash, consoleLogin, consolePost, type ConsoleSession } from '../helpers/admin-setup.ts';
import { ensureBuilt } from '../helpers/build.ts';
import { childDir, startServe, type Serve } from '../helpers/pg-story.ts';
import { freePort } from '../helpers/ports.ts';
import { postgresForTests, type TestSchema } from '../helpers/postgres.ts';
import { seedSubscribers, tempDatabase, type TempDb } from '../helpers/seed.ts';

const pg = await postgresForTests();

describe.skipIf(!pg.reachable)('console sessions on PostgreSQL, two digest serve instances', () => {
  let s: TestSchema;
  let sqlite: TempDb;
  const dirs: Array<ReturnType<typeof childDir>> = [];
  const serves: Serve[] = [];
  let ids: number[];

  const status = async (id: number) => (await s.pool.query<{ status: string }>('SELECT status FROM subscribers WHERE id = $1', [id])).rows[0]?.status;
  /** The overview as `session` sees it on `serve`, redirects not followed (303 to the login form when logged out). */
  const overview = (serve: Serve, session: ConsoleSession) => fetch(`${serve.base}/admin`, { redirect: 'manual', headers: { cookie: session.cookie } });

  beforeAll(async () => {
    ensureBuilt();
    s = await pg.schema();
    sqlite = tempDatabase();
    ids = seedSubscribers(sqlite.db, [0, 1, 2].map((i) => ({ email: `r${i}@example.org`, topics: ['graphs'] }))).map((r) => r.id);
    expect((await copySqliteToPostgres(sqlite.db, s.pool)).ok).toBe(true);
    sqlite.db.close();
    const env = { DATABASE_URL: s.url, DATABASE_SCHEMA: s.name, DIGEST_TZ: 'UTC', SOURCES: '', ADMIN_PASSWORD_HASH: await adminHash() };
    // Each instance has its own working folder, hence its own SQLite file: only PostgreSQL is shared.
    for (let i = 0; i < 2; i++) {
      const own = childDir();
      dirs.push(own);
      serves.push(await startServe(new Date().toISOString(), { ...env, MAIL_CATCHER_PORT: String(await freePort()) }, own.cwd));
    }
  }, 180_000);
  afterAll(async () => {
    for (const serve of serves) await serve.stop();
    await s?.drop();
    sqlite?.cleanup();
    for (const d of dirs) d.cleanup();
  });

  it('a login at A acts at B; a logout at B ends it at A; a wrong CSRF token is refused', async () => {
    const [a, b] = serves as [Serve, Serve];
    const { session } = await consoleLogin(a);
    expect(session?.csrf).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const atA = session!;
    // Only the cookie's hash is stored in PostgreSQL, never the cookie.
    const stored = await s.pool.query<{ id_hash: string }>('SELECT id_hash FROM admin_sessions');
    expect(stored.rows).toHaveLength(1);
    expect(stored.rows[0]!.id_hash).not.toContain(atA.cookie.split('=')[1]!);

    // B knows the session A made: its pages, and a console POST with A's CSRF token.
    expect((await overview(b, atA)).status).toBe(200);
    const suppress = await consolePost(b, atA, `/admin/subscribers/${ids[0]}/suppress`, {});
    expect(suppress.status).toBe(303);
    expect(suppress.headers.get('location')).toBe(`/admin/subscribers/${ids[0]}?done=suppressed`);
    expect(await status(ids[0]!)).toBe('suppressed');

    // A wrong CSRF token with a good cookie: refused on either instance, nothing changed.
    for (const serve of [a, b]) {
      const forged = await consolePost(serve, { ...atA, csrf: 'x'.repeat(43) }, `/admin/subscribers/${ids[1]}/suppress`, {});
      expect(forged.status).toBe(403);
    }
    expect(await status(ids[1]!)).toBe('confirmed');

    // Logout through B: A refuses the cookie from then on (pages and POSTs).
    expect((await consolePost(b, atA, '/admin/logout', {})).status).toBe(303);
    const after = await overview(a, atA);
    expect(after.status).toBe(303);
    expect(after.headers.get('location')).toBe('/admin/login');
    expect((await consolePost(a, atA, `/admin/subscribers/${ids[2]}/suppress`, {})).status).toBe(401);
    expect(await status(ids[2]!)).toBe('confirmed');
    expect((await s.pool.query('SELECT 1 FROM admin_sessions')).rowCount).toBe(0);
  }, 120_000);
});
