// `digest ingest` and `digest plan` through the built CLI on a PostgreSQL schema: a batch goes into
// PostgreSQL (again: nothing changes; a bad one: exit 1, nothing written), and two `digest plan --now`
// at once plan each subscriber's slot once. Without a postgres:// URL `digest plan` stops naming DATABASE_URL.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copySqliteToPostgres } from '../../src/db/postgres/copy.ts';
import { ensureBuilt } from '../helpers/build.ts';
import { startDigest } from '../helpers/digest-cli.ts';
import { addSubscribers, BATCH_DAY_1 } from '../helpers/pg-edition.ts';
import { postgresForTests, type TestSchema } from '../helpers/postgres.ts';
import { tempDatabase } from '../helpers/seed.ts';

const pg = await postgresForTests();

async function digest(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string; err: string }> {
  const run = startDigest(args, env, 'digest-plan-');
  const code = await run.code;
  return { code, out: run.out(), err: run.err() };
}

describe('digest plan without PostgreSQL', () => {
  beforeAll(() => ensureBuilt());
  it('stops with a message naming DATABASE_URL', async () => {
    const r = await digest(['plan'], {});
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/DATABASE_URL is not a postgres:\/\/ URL: `digest plan` is for PostgreSQL/);
  });
});

describe.skipIf(!pg.reachable)('digest ingest and digest plan on PostgreSQL', () => {
  let s: TestSchema;
  let env: Record<string, string>;
  beforeAll(async () => {
    ensureBuilt();
    s = await pg.schema();
    env = { DATABASE_URL: s.url, DATABASE_SCHEMA: s.name };
    const t = tempDatabase('pg-plan-cli-');
    addSubscribers(t.db, [
      { email: 'a@example.org', topics: ['reinforcement learning'] },
      { email: 'b@example.org', timezone: 'America/New_York', topics: ['agents', { text: 'web', muted: true }] },
      { email: 'c@example.org', topics: ['nothing-matches-this-xyzzy'] },
    ]);
    expect((await copySqliteToPostgres(t.db, s.pool)).ok).toBe(true);
    t.cleanup();
  });
  afterAll(async () => s?.drop());

  it('ingests into PostgreSQL once, refuses a bad batch whole, and two planners at once plan each slot once', async () => {
    const file = fileURLToPath(BATCH_DAY_1);
    const first = await digest(['ingest', file], env);
    expect(first.out.trim()).toBe('batch 1 (hf-daily 2025-11-25): 25 papers, 25 new, 0 updated');
    expect((await digest(['ingest', file], env)).out.trim()).toBe('batch 1 (hf-daily 2025-11-25) already ingested: nothing changed');
    const bad = join(mkdtempSync(join(tmpdir(), 'bad-batch-')), 'bad.json');
    writeFileSync(bad, JSON.stringify({ source: 'x', date: '2025-11-26', papers: [{ id: '2511.1', title: 'T', abstract: 'A', url: 'ftp://no' }] }));
    const refused = await digest(['ingest', bad], env);
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/papers\[0\]\.url/);
    expect((await s.pool.query('SELECT count(*)::int AS n FROM papers')).rows[0].n).toBe(25);

    const runs = await Promise.all([digest(['plan', '--now'], env), digest(['plan', '--now'], env)]);
    for (const r of runs) expect(r.code, r.err).toBe(0);
    const planned = runs.map((r) => Number(/planned (\d+)/.exec(r.out)?.[1] ?? 0));
    expect(planned.reduce((a, b) => a + b, 0)).toBe(2);
    // Either planner may match and either may plan (the one that matched can find the other planning): the
    // papers are matched once in all, and the three slots are planned by one of them.
    const out = runs.map((r) => r.out).join('\n');
    expect(out).toMatch(/matched 4 queries: [1-9]\d* new matches/);
    expect(out).toMatch(/slots 3: planned 2 \(\d+ papers\)/);
    const newMatches = runs.reduce((n, r) => n + Number(/(\d+) new matches/.exec(r.out)?.[1] ?? 0), 0);
    expect(newMatches).toBe((await s.pool.query('SELECT count(*)::int AS n FROM query_matches')).rows[0].n);
    const rows = await s.pool.query(`SELECT s.email, d.paper_count FROM digests d JOIN subscribers s ON s.id = d.subscriber_id ORDER BY s.email`);
    expect(rows.rows.map((r) => r.email)).toEqual(['a@example.org', 'b@example.org']);
    expect(rows.rows.every((r) => r.paper_count > 0)).toBe(true);
    const again = await digest(['plan', '--now'], env);
    expect(again.out.trim()).toBe('matched 0 queries: 0 new matches; slots 0: planned 0 (0 papers); `digest worker` sends them');
  });
});
