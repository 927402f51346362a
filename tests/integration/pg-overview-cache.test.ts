// The console overview's "digests sent" series on PostgreSQL, from two real `digest serve` instances on one
// schema: today and yesterday are counted at every view (a digest sent now shows at once, on either
// instance); the days before are counted once an hour per instance, as on SQLite (admin/overview.ts), so a
// late change to a closed day shows on an instance that has not counted it yet, and on the others within
// the hour. Skipped, said once, when PostgreSQL is unreachable.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copySqliteToPostgres } from '../../src/db/postgres/copy.ts';
import { adminHash, consoleCookie } from '../helpers/admin-setup.ts';
import { ensureBuilt } from '../helpers/build.ts';
import { childDir, startServe, type Serve } from '../helpers/pg-story.ts';
import { freePort } from '../helpers/ports.ts';
import { postgresForTests, type TestSchema } from '../helpers/postgres.ts';
import { seedSubscribers, tempDatabase, type TempDb } from '../helpers/seed.ts';

const pg = await postgresForTests();
const DAY_MS = 86_400_000;

describe.skipIf(!pg.reachable)('the overview of the ledger on PostgreSQL, two digest serve instances', () => {
  let s: TestSchema;
  let sqlite: TempDb;
  let dir: ReturnType<typeof childDir>;
  const serves: Serve[] = [];
  const at = new Date().toISOString();
  const dayBefore = (n: number) => new Date(Date.parse(at) - n * DAY_MS).toISOString().slice(0, 10);
  const [today, yesterday, closed] = [dayBefore(0), dayBefore(1), dayBefore(5)];
  let ids: number[];
  let env: Record<string, string>;

  /** One sent digest for subscriber `i` on `edition`, written straight into PostgreSQL's ledger. */
  const sent = (i: number, edition: string) =>
    s.pool.query(
      `INSERT INTO digests (subscriber_id, edition, status, from_paper, to_paper, paper_count, planned_at, sent_at, smtp_code, smtp_response)
       VALUES ($1, $2, 'sent', 0, 1, 1, $3, $3, 250, '250 ok')`,
      [ids[i], edition, at],
    );

  /** The overview's "sent" bars of the three days, as one instance shows them. */
  async function sentBars(serve: Serve): Promise<Record<string, number>> {
    const html = await (await fetch(`${serve.base}/admin`, { headers: { cookie: await consoleCookie(serve.base) } })).text();
    const bars = new Map([...html.matchAll(/<title>(\d{4}-\d{2}-\d{2}): (\d+) sent<\/title>/g)].map((m) => [m[1]!, Number(m[2])]));
    return { closed: bars.get(closed) ?? 0, yesterday: bars.get(yesterday) ?? 0, today: bars.get(today) ?? 0 };
  }

  beforeAll(async () => {
    ensureBuilt();
    dir = childDir();
    s = await pg.schema();
    sqlite = tempDatabase();
    ids = seedSubscribers(
      sqlite.db,
      Array.from({ length: 6 }, (_, i) => ({ email: `r${i}@example.org`, topics: ['graphs'] })),
    ).map((r) => r.id);
    expect((await copySqliteToPostgres(sqlite.db, s.pool)).ok).toBe(true);
    sqlite.db.close();
    env = { DATABASE_URL: s.url, DATABASE_SCHEMA: s.name, DIGEST_TZ: 'UTC', SOURCES: '', ADMIN_PASSWORD_HASH: await adminHash() };
    await sent(0, closed);
    await sent(1, yesterday);
    await sent(2, today);
    for (let i = 0; i < 2; i++) serves.push(await startServe(at, { ...env, MAIL_CATCHER_PORT: String(await freePort()) }, dir.cwd));
  }, 180_000);
  afterAll(async () => {
    for (const serve of serves) await serve.stop();
    await s?.drop();
    sqlite?.cleanup();
    dir?.cleanup();
  });

  it('counts today and yesterday at every view on both instances; a closed day once an hour per instance', async () => {
    const [a, b] = serves as [Serve, Serve];
    expect(await sentBars(a)).toEqual({ closed: 1, yesterday: 1, today: 1 });
    expect(await sentBars(b)).toEqual({ closed: 1, yesterday: 1, today: 1 });
    await sent(3, closed);
    await sent(4, yesterday);
    await sent(5, today);
    // Yesterday and today as PostgreSQL holds them now; the closed day as each instance counted it.
    expect(await sentBars(a)).toEqual({ closed: 1, yesterday: 2, today: 2 });
    expect(await sentBars(b)).toEqual({ closed: 1, yesterday: 2, today: 2 });
    // An instance started now counts the closed day afresh.
    const c = await startServe(at, { ...env, MAIL_CATCHER_PORT: String(await freePort()) }, dir.cwd);
    serves.push(c);
    expect(await sentBars(c)).toEqual({ closed: 2, yesterday: 2, today: 2 });
  }, 120_000);
});
