// Two web instances behind one load balancer: the login, subscribe and preview limits count in the store
// both share (one SQLite file; or, where PostgreSQL answers, one PostgreSQL schema with each instance on
// its own SQLite file), so requests split between the instances meet the same 429 as the same requests
// sent to one. Two real listening servers, real SMTP capture; only the clock is fake, and each instance's
// clock is moved together, as real machines' clocks run.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/admin/password.ts';
import { openDatabase } from '../../src/db/open.ts';
import { createSqliteLimits, type SharedLimits } from '../../src/db/shared-limits.ts';
import { createPostgresLimits } from '../../src/db/postgres/shared-limits.ts';
import { COPIED_TABLES, NOT_COPIED_TABLES } from '../../src/db/postgres/copy.ts';
import { LOGIN_RATE_LIMIT } from '../../src/web/console/routes.ts';
import { postgresForTests, type TestSchema } from '../helpers/postgres.ts';
import { tempDatabaseDir } from '../helpers/seed.ts';
import { holdWriteLock } from '../helpers/storage-faults.ts';
import { jsonPost, startWebHarness, type WebHarness } from '../helpers/web-harness.ts';

const pg = await postgresForTests();
const PASSWORD = 'shared limits password 2025!';
const passwordHash = await hashPassword(PASSWORD);
const CLIENT = '203.0.113.7';
const OTHER_CLIENT = '198.51.100.1';
// What an operator would see on the process's stderr while the instances count (checked last).
const warnings: string[] = [];
const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
process.on('warning', onWarning);

interface Engine {
  name: string;
  skip: boolean;
  /** Settings of the two instances, and what to clean up after. */
  setUp(): Promise<{ env: Record<string, string>; shareSqlite: boolean; rows(h: WebHarness): Promise<number>; drop(): Promise<void> }>;
}

let schema: TestSchema | undefined;
const engines: Engine[] = [
  {
    name: 'one SQLite file',
    skip: false,
    setUp: async () => ({
      env: {},
      shareSqlite: true,
      rows: async (h) => (h.tmp.db.prepare('SELECT count(*) AS n FROM shared_limits').get() as { n: number }).n,
      drop: async () => {},
    }),
  },
  {
    name: 'one PostgreSQL schema (DATABASE_URL)',
    skip: !pg.reachable,
    setUp: async () => {
      schema = await pg.schema();
      const s = schema;
      return {
        env: { DATABASE_URL: s.url, DATABASE_SCHEMA: s.name },
        shareSqlite: false,
        rows: async () => Number((await s.pool.query<{ n: string }>('SELECT count(*) AS n FROM shared_limits')).rows[0]!.n),
        drop: () => s.drop(),
      };
    },
  },
];

/** Two instances; on SQLite the second opens the first's file. */
async function startPair(env: Record<string, string>, shareSqlite: boolean, previewRateLimit = 120): Promise<[WebHarness, WebHarness]> {
  const all = { ADMIN_PASSWORD_HASH: passwordHash, TRUST_PROXY: '127.0.0.1', SUBSCRIBE_RATE_LIMIT: '3', ...env };
  const a = await startWebHarness(all, undefined, { web: { previewRateLimit } });
  const b = await startWebHarness({ ...all, ...(shareSqlite ? { DATABASE_PATH: a.tmp.path } : {}) }, undefined, { web: { previewRateLimit } });
  return [a, b];
}

const from = (ip: string) => ({ 'x-forwarded-for': ip });

async function subscribe(h: WebHarness, email: string, ip = CLIENT): Promise<{ status: number; body: string }> {
  const r = await fetch(`${h.base}/subscribe`, { ...jsonPost({ email, topics: ['llm'] }), headers: { 'content-type': 'application/json', ...from(ip) } });
  return { status: r.status, body: await r.text() };
}

/** A login: the form's token (a double-submit cookie, no server state) is fetched from `formFrom`. */
async function login(h: WebHarness, password: string, ip = CLIENT, formFrom = h): Promise<number> {
  const form = await fetch(`${formFrom.base}/admin/login`);
  const cookie = form.headers.getSetCookie().find((c) => c.startsWith('digest_admin_login='))!.split(';')[0]!;
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
  const res = await fetch(`${h.base}/admin/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, ...from(ip) },
    body: new URLSearchParams({ _csrf: csrf, password }).toString(),
  });
  return res.status;
}

const preview = async (h: WebHarness, ip = CLIENT) => (await fetch(`${h.base}/api/topics/preview?q=llm`, { headers: from(ip) })).status;

for (const engine of engines) {
  describe.skipIf(engine.skip)(`rate limits shared by two web instances on ${engine.name}`, () => {
    let a: WebHarness;
    let b: WebHarness;
    let rows: (h: WebHarness) => Promise<number>;
    let drop: () => Promise<void>;
    const advance = (ms: number) => {
      a.clock.advance(ms);
      b.clock.advance(ms);
    };
    beforeAll(async () => {
      const s = await engine.setUp();
      rows = s.rows;
      drop = s.drop;
      [a, b] = await startPair(s.env, s.shareSqlite, 4);
    });
    afterAll(async () => {
      await b?.close();
      await a?.close();
      await drop?.();
    });

    it('POST /subscribe: 3 an hour per address, counted across both; the 429 is the same for every address', async () => {
      const answers = [await subscribe(a, 's1@example.org'), await subscribe(b, 's2@example.org'), await subscribe(a, 's3@example.org')];
      expect(answers.map((r) => r.status)).toEqual([202, 202, 202]);
      // The 4th, whichever instance gets it, and whether the address is new or already known.
      const known = await subscribe(b, 's1@example.org');
      const unknown = await subscribe(a, 'new@example.org');
      expect([known.status, unknown.status]).toEqual([429, 429]);
      expect(JSON.parse(known.body)).toEqual(JSON.parse(unknown.body));
      expect(JSON.parse(known.body)).toMatchObject({ ok: false, code: 'RATE_LIMITED' });
      // Another address is not affected.
      expect((await subscribe(b, 'other@example.org', OTHER_CLIENT)).status).toBe(202);
    });

    it('the subscribe window ends on the clock: still 429 a minute before the hour, 202 after it, on both', async () => {
      advance(59 * 60_000);
      expect((await subscribe(a, 's4@example.org')).status).toBe(429);
      advance(60_000);
      expect((await subscribe(b, 's4@example.org')).status).toBe(202);
      expect((await subscribe(a, 's5@example.org')).status).toBe(202);
    });

    it(`console login: ${LOGIN_RATE_LIMIT} attempts a minute per address across both, then 429 even for the right password`, async () => {
      const statuses: number[] = [];
      for (let i = 0; i < LOGIN_RATE_LIMIT; i++) statuses.push(await login(i % 2 ? b : a, 'wrong guess', CLIENT, i % 2 ? a : b));
      expect(statuses).toEqual(Array(LOGIN_RATE_LIMIT).fill(401));
      expect(await login(b, 'wrong guess')).toBe(429);
      expect(await login(a, PASSWORD)).toBe(429);
      expect(await login(b, PASSWORD)).toBe(429);
      expect(await login(a, PASSWORD, OTHER_CLIENT)).toBe(303);
      advance(60_000);
      expect(await login(b, PASSWORD)).toBe(303);
    });

    it('topic preview: the per-minute limit (4 here) holds across both', async () => {
      const statuses = [await preview(a), await preview(b), await preview(a), await preview(b), await preview(a), await preview(b)];
      expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
      advance(60_000);
      expect(await preview(b)).toBe(200);
    });

    it('rows whose window has ended are deleted: the table holds only live counters', async () => {
      for (const ip of ['192.0.2.1', '192.0.2.2', '192.0.2.3']) {
        await subscribe(b, `x@example.org`, ip);
        await login(b, 'wrong guess', ip);
        await preview(b, ip);
      }
      // (Rows of earlier tests may have been swept already: the first hit of a purpose in a minute sweeps.)
      expect(await rows(a)).toBeGreaterThanOrEqual(9);
      advance(2 * 3_600_000);
      // One hit per purpose sweeps that purpose's ended rows (at most once a minute per process).
      await subscribe(a, 'late@example.org');
      await login(a, 'wrong guess');
      await preview(a);
      expect(await rows(a)).toBe(3);
    });
  });
}

describe.each([
  { engine: 'SQLite (two connections to one file)', postgres: false },
  { engine: 'PostgreSQL (two pools on one schema)', postgres: true },
])('the store itself on $engine', ({ postgres }) => {
  const skip = postgres && !pg.reachable;
  let stores: SharedLimits[] = [];
  let cleanup: () => Promise<void> = async () => {};
  beforeAll(async () => {
    if (skip) return;
    if (postgres) {
      const s = await pg.schema();
      stores = [createPostgresLimits({ url: s.url, schema: s.name }), createPostgresLimits({ url: s.url, schema: s.name })];
      cleanup = () => s.drop();
    } else {
      const dir = tempDatabaseDir('digest-limits-');
      const dbs = [openDatabase(dir.path), openDatabase(dir.path)];
      stores = dbs.map((db) => createSqliteLimits(db, { lockWaitMs: 5_000 }));
      cleanup = async () => {
        for (const db of dbs) db.close();
        dir.remove();
      };
    }
  });
  afterAll(async () => {
    for (const s of stores) await s.close();
    await cleanup();
  });

  it.skipIf(skip)('200 hits at once from two stores: none lost, each sees its own count', async () => {
    const now = Date.parse('2025-11-25T09:00:00Z');
    const counts = await Promise.all(Array.from({ length: 200 }, (_, i) => stores[i % 2]!.hit('burst', '192.0.2.9', 60_000, now)));
    expect(counts.map((c) => c.hits).sort((x, y) => x - y)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect(new Set(counts.map((c) => c.resetAtMs))).toEqual(new Set([now + 60_000]));
  });

  it.skipIf(skip)('a spaced host: one holder at a time; free again at the release time, or when a lease lapses', async () => {
    const [a, b] = stores as [SharedLimits, SharedLimits];
    const t0 = Date.parse('2025-11-25T10:00:00Z');
    expect(await a.take('spacing', 'export.arxiv.org', 10_000, t0, 'a1')).toEqual({ taken: true, untilMs: t0 + 10_000 });
    expect(await b.take('spacing', 'export.arxiv.org', 10_000, t0 + 5, 'b1')).toEqual({ taken: false, untilMs: t0 + 10_000 });
    await a.release('spacing', 'export.arxiv.org', 'a1', t0 + 3_200); // ended at t0 + 200, interval 3 s
    expect((await b.take('spacing', 'export.arxiv.org', 10_000, t0 + 3_199, 'b1')).taken).toBe(false);
    expect(await b.take('spacing', 'export.arxiv.org', 10_000, t0 + 3_200, 'b1')).toEqual({ taken: true, untilMs: t0 + 13_200 });
    // b dies holding it: a waits out the lease; b's late release then changes nothing.
    expect((await a.take('spacing', 'export.arxiv.org', 10_000, t0 + 13_199, 'a2')).taken).toBe(false);
    expect((await a.take('spacing', 'export.arxiv.org', 10_000, t0 + 13_200, 'a2')).taken).toBe(true);
    await b.release('spacing', 'export.arxiv.org', 'b1', t0 + 13_300);
    expect(await b.take('spacing', 'export.arxiv.org', 10_000, t0 + 13_400, 'b2')).toEqual({ taken: false, untilMs: t0 + 23_200 });
  });
});

describe('when the SQLite file stays locked by another process', () => {
  it('the preview (it only reads) is served uncounted; subscribe and login answer 503 with Retry-After, never uncounted', async () => {
    const h = await startWebHarness({ ADMIN_PASSWORD_HASH: passwordHash, DB_BUSY_TIMEOUT_MS: '20', WEB_LOCK_WAIT_MS: '300' });
    try {
      const lock = await holdWriteLock(h.tmp.path, 20_000);
      try {
        expect(await preview(h)).toBe(200);
        const sub = await fetch(`${h.base}/subscribe`, jsonPost({ email: 'locked@example.org', topics: ['llm'] }));
        expect(sub.status).toBe(503);
        expect(sub.headers.get('retry-after')).toMatch(/^\d+$/);
        // A wrong password writes nothing: only the uncountable attempt makes this a 503 (not a 401).
        expect(await login(h, 'wrong guess')).toBe(503);
      } finally {
        lock.kill();
        await lock.released;
      }
      expect((await fetch(`${h.base}/subscribe`, jsonPost({ email: 'locked@example.org', topics: ['llm'] }))).status).toBe(202);
      expect(await login(h, PASSWORD)).toBe(303);
    } finally {
      await h.close();
    }
  }, 60_000);
});

describe('digest copy and the shared limits', () => {
  it('every SQLite table is copied to PostgreSQL, or deliberately left behind (FTS5 index, shared_limits)', () => {
    const db = openDatabase(':memory:');
    const tables = (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all() as { name: string }[]).map((r) => r.name);
    db.close();
    const fts = (t: string) => t === 'sqlite_sequence' || t.startsWith('papers_fts') || t === 'papers_vocab';
    const handled = new Set<string>([...COPIED_TABLES, ...NOT_COPIED_TABLES]);
    expect(tables.filter((t) => !fts(t) && !handled.has(t))).toEqual([]);
    expect(tables).toContain('shared_limits');
  });
});

describe.skipIf(!pg.reachable)('after every PostgreSQL story above', () => {
  afterAll(() => void process.off('warning', onWarning));
  // A setting sent as a query when a connection opens was queued beside the pool's first query on it:
  // the driver warned (once a process: "Calling client.query() when the client is already executing a
  // query is deprecated", an error from pg 9 on). The setting now rides in the connection's start-up.
  it('the PostgreSQL counters made the driver warn about nothing', () => {
    expect(warnings.filter((w) => w.includes('client.query()'))).toEqual([]);
  });
});
