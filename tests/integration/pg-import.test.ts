// `digest import` on PostgreSQL (set-based, src/operator/postgres/import-chunk.ts) against SQLite's: the same
// files, after the same opt-outs, lifts and mutes, leave the same rows on both engines (statuses,
// confirmations, topics in place with their mute state, like: and upvotes>= topics) and report the same
// lines. On PostgreSQL a one-click unsubscribe racing the import stays unsubscribed, whether it lands
// before the chunk locks the address or while the chunk holds it; like: topics are saved for the next
// matching run to choose their terms, and one naming an example PostgreSQL lacks refuses the file.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migratePostgres } from '../../src/db/postgres/migrate.ts';
import { ingestBatch } from '../../src/ingest/ingest.ts';
import { ingestBatchPg } from '../../src/ingest/postgres/ingest.ts';
import { openPostgresDoor, type PostgresDoorHandle } from '../../src/main.ts';
import { matchPendingPg } from '../../src/match/postgres/match.ts';
import type { OperatorRoster } from '../../src/operator/roster.ts';
import type { ImportResult } from '../../src/subscribers/import.ts';
import { buildServer } from '../../src/web/server.ts';
import { BATCH_DAY_1, fixtureBatch } from '../helpers/pg-edition.ts';
import { postgresForTests, type TestSchema } from '../helpers/postgres.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

const pg = await postgresForTests();

const TOPICS = [
  'diffusion models',
  'graph networks',
  'reinforcement learning',
  '"multi-agent"',
  'web agents upvotes>=5',
  'like:2511.10001',
  'protein folding',
  'speculative decoding',
];
const LIKE_TWO = 'like:2511.10004,2511.10001';
/** A CSV field, quoted when it holds a comma or a quote. */
const field = (v: string) => (/[",]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v);

/** One engine's roster and SQL on its own store (`?` placeholders). */
interface Side {
  roster: OperatorRoster;
  all<R>(sql: string, ...p: unknown[]): Promise<R[]>;
}

describe.skipIf(!pg.reachable)('digest import on PostgreSQL, set-based, against SQLite', () => {
  let lite: TestApp;
  let t: TestApp;
  let s: TestSchema;
  let handle: PostgresDoorHandle;
  let web: FastifyInstance;
  let base: string;
  let onLite: Side;
  let onPg: Side;

  beforeAll(async () => {
    const batch = fixtureBatch(BATCH_DAY_1);
    lite = await startTestApp();
    ingestBatch(lite.app.db, batch, lite.clock);
    s = await pg.schema();
    await migratePostgres(s.pool);
    t = await startTestApp({ DATABASE_URL: s.url, DATABASE_SCHEMA: s.name });
    await ingestBatchPg(s.pool, batch, t.clock);
    handle = (await openPostgresDoor(t.app))!;
    web = buildServer({ ...t.app, door: handle.served });
    await web.listen({ port: 0, host: '127.0.0.1' });
    const a = web.server.address();
    base = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
    onLite = { roster: lite.app.roster, all: async <R,>(sql: string, ...p: unknown[]) => lite.app.db.prepare(sql).all(...p) as R[] };
    let n = 0;
    const dollar = (sql: string) => ((n = 0), sql.replace(/\?/g, () => `$${++n}`));
    onPg = { roster: handle.roster, all: async <R,>(sql: string, ...p: unknown[]) => (await s.pool.query(dollar(sql), p)).rows as R[] };
  }, 60_000);
  afterAll(async () => {
    await web?.close();
    await handle?.close();
    await t?.close();
    await lite?.close();
    await s?.drop();
  });

  const file = (name: string, lines: string[]) => {
    const path = join(lite.tmp.dir, name);
    writeFileSync(path, ['email,topics,confirmed', ...lines].join('\n') + '\n');
    return path;
  };
  const idOf = async (side: Side, email: string) => Number((await side.all<{ id: number }>('SELECT id FROM subscribers WHERE lower(email) = lower(?)', email))[0]!.id);
  const statusOf = async (side: Side, email: string) => (await side.all<{ status: string }>('SELECT status FROM subscribers WHERE lower(email) = lower(?)', email))[0]?.status;

  /** Every subscriber's row and topics, as a reader of either engine sees them. */
  async function dump(side: Side): Promise<string[]> {
    const rows = await side.all<Record<string, unknown>>(
      `SELECT lower(s.email) AS key, s.email, s.status, s.created_at AS created, s.confirmed_at AS confirmed, s.watermark,
              s.timezone, s.delivery_hour AS hour, s.frequency, t.text, t.muted, t.position, q.fts, q.min_upvotes AS up
       FROM subscribers s LEFT JOIN topics t ON t.subscriber_id = s.id LEFT JOIN queries q ON q.id = t.query_id
       ORDER BY lower(s.email), t.position`,
    );
    return rows.map((r) => Object.values({ ...r, muted: Number(r.muted), watermark: Number(r.watermark) }).join(' | '));
  }

  it('a few thousand rows, twice, after opt-outs, a lift and a mute: the same rows and the same report as SQLite', async () => {
    const first = file(
      'first.csv',
      Array.from({ length: 2000 }, (_, i) => `${i % 7 === 0 ? 'User' : 'user'}${i}@example.org,${field(`${TOPICS[i % 8]};${TOPICS[(i + 3) % 8]}`)},${i % 3 === 0 ? 'yes' : 'no'}`),
    );
    // The second file: the same addresses in lower case with other topics (a like: of two papers on some),
    // other confirmations, a thousand new ones, and an address only the opt-out history knows.
    const second = file('second.csv', [
      ...Array.from({ length: 3000 }, (_, i) => `user${i}@example.org,${field(`${TOPICS[(i + 1) % 8]};${TOPICS[(i + 3) % 8]}${i % 5 === 0 ? `;${LIKE_TWO}` : ''}`)},${i % 2 === 0 ? 'yes' : 'no'}`),
      'angry@example.org,graph networks,yes',
    ]);
    const results: ImportResult[][] = [];
    for (const side of [onLite, onPg]) {
      const r1 = await side.roster.importCsv(first);
      for (const n of [10, 11]) await side.roster.unsubscribe(await idOf(side, `user${n}@example.org`));
      for (const n of [20, 21]) await side.roster.suppress(await idOf(side, `user${n}@example.org`));
      await side.roster.remove(await idOf(side, 'user21@example.org'));
      await side.roster.lift('user10@example.org', 'asked to come back');
      for (const email of ['user32@example.org', 'angry@example.org']) {
        await side.all(`INSERT INTO consent_events (email, kind, status, detail, at) VALUES (?, 'complaint', 'unsubscribed', 'feedback loop', '2025-11-20T10:00:00.000Z') RETURNING id`, email);
      }
      // User0's second topic ("multi-agent", kept by the second file) muted: it stays muted, in place.
      await side.all(`UPDATE topics SET muted = 1 WHERE subscriber_id = ? AND position = 1 RETURNING id`, await idOf(side, 'user0@example.org'));
      results.push([r1, await side.roster.importCsv(second)]);
    }
    const [lr, pr] = results as [ImportResult[], ImportResult[]];
    expect(pr).toEqual(lr);
    expect(lr[1]).toMatchObject({ created: 1000, updated: 1999, keptOptedOut: 5 });
    expect(lr[1]!.notes.map((n) => n.message.replace(/ on .*\)/, ')'))).toEqual([
      'user11@example.org: opted out (unsubscribe): not confirmed',
      'user20@example.org: opted out (operator): not confirmed',
      'user21@example.org: opted out (operator): not confirmed',
      'user32@example.org: opted out (complaint): not confirmed',
      'angry@example.org: opted out (complaint): not confirmed',
    ]);
    const [liteRows, pgRows] = [await dump(onLite), await dump(onPg)];
    expect(pgRows).toHaveLength(liteRows.length);
    expect(pgRows).toEqual(liteRows);
    expect(pgRows.filter((r) => r.startsWith('user0@example.org'))).toEqual([
      expect.stringMatching(/^user0@example\.org \| User0@example\.org \| confirmed \| .* \| graph networks \| 0 \| 0 \|/),
      expect.stringMatching(/ \| "multi-agent" \| 1 \| 1 \|/),
      expect.stringMatching(/ \| like:2511\.10004,2511\.10001 \| 0 \| 2 \| like:2511\.10001,2511\.10004 \| 0$/),
    ]);
    for (const [email, status] of [['user10@example.org', 'confirmed'], ['user11@example.org', 'unsubscribed'], ['user20@example.org', 'suppressed'], ['user21@example.org', undefined], ['user32@example.org', 'pending'], ['angry@example.org', undefined]] as const) {
      expect(await statusOf(onPg, email), email).toBe(status);
    }
    expect(lite.smtp.messages).toHaveLength(0);
    expect(t.smtp.messages).toHaveLength(0);
  }, 120_000);

  it('like: topics are saved for the next matching run, which chooses their terms on the whole corpus', async () => {
    const like = async () => (await s.pool.query('SELECT match_expr, like_self, like_corpus FROM queries WHERE fts = $1', ['like:2511.10001'])).rows[0];
    expect(await like()).toEqual({ match_expr: null, like_self: 0, like_corpus: null });
    await matchPendingPg(s.pool);
    expect(await like()).toMatchObject({ match_expr: expect.stringContaining('{title abstract}'), like_corpus: 25 });
  });

  it('a like: topic naming a paper PostgreSQL lacks refuses the file by line, nothing written', async () => {
    const bad = file('unknown.csv', ['later@example.org,graph networks,yes', 'like@example.org,like:2511.99999,yes']);
    await expect(handle.roster.importCsv(bad)).rejects.toMatchObject({
      code: 'IMPORT_INVALID',
      message: expect.stringMatching(/line 3: topics: "like:2511\.99999": like:2511\.99999: paper 2511\.99999 is not in this digest's database/),
    });
    expect(await statusOf(onPg, 'later@example.org')).toBeUndefined();
  });

  /** A pid blocked by `pid` (pg_blocking_pids), once there is one; or undefined once `done` settled first. */
  async function blockedBy(pid: number, done?: Promise<unknown>): Promise<number | undefined> {
    let settled = false;
    void done?.finally(() => (settled = true));
    for (;;) {
      const r = await s.pool.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid))', [pid]);
      if (r.rows[0]) return r.rows[0].pid;
      if (settled) return undefined;
      await new Promise((ok) => setTimeout(ok, 20));
    }
  }

  const oneClick = async (email: string) => {
    const [sub] = await onPg.all<{ id: number; tokenSalt: string }>('SELECT id, token_salt AS "tokenSalt" FROM subscribers WHERE email = ?', email);
    return fetch(`${base}/unsubscribe/${t.app.links.manageToken(sub!)}`, { method: 'POST', body: 'List-Unsubscribe=One-Click' });
  };

  it.each([
    ['while the chunk holds the address: the unsubscribe waits for the chunk, then wins', 'held', 'SELECT id FROM topics WHERE subscriber_id = (SELECT id FROM subscribers WHERE email = $1) FOR UPDATE'],
    ['before the chunk locks the address: the chunk reads it and keeps it opted out', 'early', 'SELECT pg_advisory_xact_lock(hashtextextended(lower($1), 0))'],
  ])('a one-click unsubscribe racing the import stays unsubscribed, %s', async (_name, tag, hold) => {
    const email = `race-${tag}@example.org`;
    await handle.roster.importCsv(file(`${tag}-1.csv`, [`${email},graph networks,no`]));
    const rows = [`${email},graph networks,yes`, ...Array.from({ length: 50 }, (_, i) => `${tag}${i}@example.org,graph networks,yes`)];
    // The test's transaction stops the import inside the chunk: at its topics (after it locked and read the
    // address's row), or at the address's lock (before it read anything).
    const holder = await s.pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(hold, [email]);
      const holderPid = (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      const importing = handle.roster.importCsv(file(`${tag}-2.csv`, rows));
      const importPid = (await blockedBy(holderPid))!;
      const unsubscribing = oneClick(email);
      // Held: the unsubscribe waits on the chunk's row lock; early: it is done before the chunk goes on.
      const waiting = await blockedBy(importPid, unsubscribing);
      expect(waiting !== undefined).toBe(tag === 'held');
      await holder.query('ROLLBACK');
      const r = await importing;
      expect((await unsubscribing).status).toBe(200);
      expect(r.keptOptedOut).toBe(tag === 'early' ? 1 : 0);
    } finally {
      holder.release();
    }
    expect(await statusOf(onPg, email)).toBe('unsubscribed');
    expect(await statusOf(onPg, `${tag}7@example.org`)).toBe('confirmed');
    expect((await onPg.all<{ kind: string }>('SELECT kind FROM consent_events WHERE email = ?', email)).map((e) => e.kind)).toEqual(['unsubscribe']);
  });
});
