// `digest migrate` and `digest copy --to postgres://…` through the built CLI: a seeded SQLite deployment
// moves into an empty schema with every count checked; a non-empty target is refused.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.ts';
import { REPO_ROOT } from '../helpers/delivery-setup.ts';
import { postgresForTests, type TestSchema } from '../helpers/postgres.ts';
import { runNodeChild } from '../helpers/run-child.ts';
import { seedBatch, seedSubscribers, tempDatabase, type TempDb } from '../helpers/seed.ts';

const pg = await postgresForTests();
const digest = (args: string[], env: Record<string, string>) => runNodeChild([join(REPO_ROOT, 'bin', 'digest.js'), ...args], env, REPO_ROOT);

/** A small deployment: papers, subscribers with topics, ledger rows with items, a bounce, opt-out history. */
function seed(t: TempDb): void {
  const { paperIds } = seedBatch(t.db, '2026-11-20', [{ title: 'Sparse attention' }, { title: 'Graph networks' }]);
  const subs = seedSubscribers(t.db, [
    { email: 'Ada@example.org', topics: ['attention', 'graph'], status: 'confirmed' },
    { email: 'bob@example.org', topics: ['graph'], status: 'confirmed' },
    { email: 'cy@example.org', topics: ['vision'], status: 'confirmed' },
  ]);
  const digestRow = t.db.prepare(
    `INSERT INTO digests (subscriber_id, edition, status, from_paper, to_paper, paper_count, planned_at, items, verp_nonce)
     VALUES (?, '2026-11-20', ?, 0, ?, 2, '2026-11-20T07:00:00.000Z', ?, ?)`,
  );
  const d1 = Number(digestRow.run(subs[0]!.id, 'sent', paperIds[1], Buffer.from([0x21, 0x01, 0x03]), -4503599627370495).lastInsertRowid);
  digestRow.run(subs[1]!.id, 'unknown', paperIds[1], Buffer.from([0x11, 0x02]), 12345);
  t.db.prepare(
    `INSERT INTO bounce_events (digest_id, subscriber_id, kind, channel, status, detail, outcome, received_at)
     VALUES (?, ?, 'hard', 'smtp', '5.1.1', 'no such user', 'suppressed', '2026-11-21T00:00:00.000Z')`,
  ).run(d1, subs[0]!.id);
  t.db.prepare(`UPDATE subscribers SET status = 'suppressed', suppressed_at = '2026-11-21T00:00:00.000Z' WHERE id = ?`).run(subs[0]!.id);
  t.db.prepare(`UPDATE subscribers SET status = 'unsubscribed', unsubscribed_at = '2026-11-22T00:00:00.000Z' WHERE id = ?`).run(subs[2]!.id);
}

describe.skipIf(!pg.reachable)('digest migrate and digest copy on PostgreSQL', () => {
  let s: TestSchema;
  let t: TempDb;
  beforeAll(async () => {
    ensureBuilt();
    s = await pg.schema();
    t = tempDatabase();
    seed(t);
  });
  afterAll(async () => {
    t?.cleanup();
    await s?.drop();
  });

  it('digest migrate with DATABASE_URL=postgres:// migrates that schema, then says it is up to date', async () => {
    const env = { DATABASE_URL: s.url, DATABASE_SCHEMA: s.name };
    const first = await digest(['migrate'], env);
    expect(first.stderr).toBe('');
    expect(first.stdout).toMatch(/applied 014_init\.sql, 015_query_lists\.sql, 016_shared_limits\.sql, 017_ledger_indexes\.sql, 018_search_prefix\.sql, 019_digests_fillfactor\.sql, 020_record_without_subscriber\.sql \(PostgreSQL, version 20\)/);
    expect((await digest(['migrate'], env)).stdout).toMatch(/database is up to date \(PostgreSQL, version 20\)/);
  });

  it('copies every table with counts checked, keeps ids, bytes and history, and moves the sequences', async () => {
    const r = await digest(['copy', '--to', s.url, '--schema', s.name], { DATABASE_PATH: t.path });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^subscribers +3 +3  ok$/m);
    expect(r.stdout).toMatch(/^consent_events +2 +2  ok$/m);
    expect(r.stdout).toMatch(/copied: every table has the same rows on both sides/);
    expect(r.stdout).not.toMatch(/MISMATCH/);
    const d = await s.pool.query(`SELECT items, verp_nonce, status FROM digests ORDER BY id`);
    expect(d.rows).toEqual([
      { items: Buffer.from([0x21, 0x01, 0x03]), verp_nonce: -4503599627370495, status: 'sent' },
      { items: Buffer.from([0x11, 0x02]), verp_nonce: 12345, status: 'unknown' },
    ]);
    const ev = await s.pool.query(`SELECT email, kind, status, detail FROM consent_events ORDER BY id`);
    expect(ev.rows).toEqual([
      { email: 'Ada@example.org', kind: 'hard-bounce', status: 'suppressed', detail: '5.1.1 no such user' },
      { email: 'cy@example.org', kind: 'unsubscribe', status: 'unsubscribed', detail: '' },
    ]);
    const next = await s.pool.query(
      `INSERT INTO subscribers (email, token_salt, timezone, created_at) VALUES ('new@example.org', 's', 'UTC', 'x') RETURNING id`,
    );
    expect(next.rows[0].id).toBe(4);
  });

  it('refuses a target that has rows already, and exits non-zero', async () => {
    const r = await digest(['copy', '--to', s.url, '--schema', s.name], { DATABASE_PATH: t.path });
    expect(r.code).not.toBe(0);
    expect(r.stderr + r.stdout).toMatch(/already has rows in settings|already has rows/);
  });
});
