// Migration 007 (the ledger's indexes laid out for fewer pages per delivered digest): a ledger of the
// previous schema upgrades in place and every part that reads it still works on it, and every query of
// src/ that touches digests still reads it through an index (the partial indexes are used only by
// queries that repeat their WHERE: bench/ledger-plans.ts reads the SQL from the sources).
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { digestsQueryPlans } from '../../bench/ledger-plans.ts';
import { deliveries } from '../../src/admin/deliveries.ts';
import { ManualClock } from '../../src/clock.ts';
import { listMigrations, MIGRATIONS_DIR, migrate, openDatabase, type Db } from '../../src/db/open.ts';
import { editionStatus } from '../../src/report/status.ts';
import { SqliteLedger, recoverStale } from '../../src/ledger/index.ts';
import { SUBSCRIBER_MARKS } from '../../src/send/send-ledger.ts';
import { tempDatabaseDir } from '../helpers/seed.ts';

const RESPONSE = '250 2.0.0 Ok: queued as 4dK3xY0abcZ';

describe('migration 007: the ledger indexes', () => {
  let db: Db | undefined;
  let dir: ReturnType<typeof tempDatabaseDir> | undefined;
  let migrations: string | undefined;
  afterEach(() => {
    db?.close();
    db = undefined;
    dir?.remove();
    if (migrations) rmSync(migrations, { recursive: true, force: true });
  });

  it('upgrades a ledger of the previous schema in place: claims, records, recovery and reports work on it', () => {
    // A database at version 6 (every migration before 007), with rows in each state.
    migrations = mkdtempSync(join(tmpdir(), 'digest-m007-'));
    for (const m of listMigrations().filter((m) => m.version < 7)) copyFileSync(join(MIGRATIONS_DIR, m.name), join(migrations, m.name));
    dir = tempDatabaseDir('digest-m007-db-');
    const old = openDatabase(dir.path, { migrate: false });
    migrate(old, migrations);
    expect(old.pragma('user_version', { simple: true })).toBe(6);
    old.exec(`
      INSERT INTO subscribers (id, email, status, token_salt, timezone, created_at, confirmed_at)
      SELECT value, 's' || value || '@example.com', 'confirmed', 'salt', 'UTC', '2025-11-01T00:00:00.000Z', '2025-11-01T00:00:00.000Z'
      FROM json_each('[1,2,3,4,5,6,7]');`);
    const add = old.prepare(`
      INSERT INTO digests (id, subscriber_id, edition, status, from_paper, to_paper, topic_ids, items, paper_count, planned_at,
                           next_attempt_at, claimed_by, claimed_at, smtp_response)
      VALUES (?, ?, ?, ?, 0, 10, '', x'', 1, '2025-11-24T07:00:00.000Z', ?, ?, ?, ?)`);
    add.run(1, 1, '2025-11-24', 'sent', null, null, null, RESPONSE);
    add.run(2, 2, '2025-11-24', 'failed', null, null, null, '550 5.1.1 user unknown');
    add.run(3, 3, '2025-11-25', 'planned', null, null, null, null);
    add.run(4, 4, '2025-11-25', 'planned', null, null, null, null);
    add.run(5, 5, '2025-11-25', 'retry', '2025-11-25T09:00:00.000Z', null, null, '451 4.7.1 try later');
    add.run(6, 6, '2025-11-25', 'sending', null, `${hostname()}:999999:1`, '2025-11-25T08:00:00.000Z', null);
    // Planned by a release before 002, which gave planned rows a next_attempt_at: claimed after the others.
    add.run(7, 7, '2025-11-24', 'planned', '2025-11-24T07:00:00.000Z', null, null, null);
    old.close();

    db = openDatabase(dir.path);
    expect(db.pragma('user_version', { simple: true })).toBe(listMigrations().at(-1)!.version);
    const indexes = (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'digests' AND sql IS NOT NULL ORDER BY name`).all() as { name: string }[]).map((r) => r.name);
    expect(indexes).toEqual(['digests_edition', 'digests_prunable', 'digests_queue', 'digests_subscriber_open', 'digests_trouble']);
    expect((db.prepare('SELECT count(*) AS n FROM digests').get() as { n: number }).n).toBe(7);

    const now = new Date('2025-11-25T10:00:00.000Z');
    // The console: planned rows in claim order (lowest id first), then retries, then the rows in flight.
    const view = deliveries(db, now);
    expect(view.waiting.map((r) => [r.id, r.status])).toEqual([[3, 'planned'], [4, 'planned'], [7, 'planned'], [5, 'retry'], [6, 'sending']]);
    expect(view.waitingCounts).toEqual({ planned: 3, retry: 1, sending: 1 });
    expect(view.lastErrors.map((r) => r.id)).toEqual([5, 2]);
    expect(view.editions).toEqual([
      { edition: '2025-11-25', counts: { planned: 2, sending: 1, retry: 1, sent: 0, failed: 0, unknown: 0, suppressed: 0 }, total: 4 },
      { edition: '2025-11-24', counts: { planned: 1, sending: 0, retry: 0, sent: 1, failed: 1, unknown: 0, suppressed: 0 }, total: 3 },
    ]);

    // The claim left in flight by a dead process becomes unknown.
    expect(recoverStale(db, new ManualClock(now))).toBe(1);

    // A due retry first, then the planned rows, lowest id first (the old one with a time last); each
    // delivery recorded with the next claim.
    const ledger = new SqliteLedger(db, SUBSCRIBER_MARKS, `${hostname()}:1:1`);
    expect(ledger.openCount()).toBe(4);
    expect(ledger.claimNext(now)).toBe(5);
    const sent = (id: number) => ({ id, subscriberId: id, toPaper: 10, messageId: `digest-${id}@example.com`, response: RESPONSE, at: now });
    expect(ledger.recordSentThenClaim(sent(5), now)).toEqual({ recorded: true, next: 3 });
    expect(ledger.recordSentThenClaim(sent(3), now)).toEqual({ recorded: true, next: 4 });
    expect(ledger.recordSentThenClaim(sent(4), now)).toEqual({ recorded: true, next: 7 });
    expect(ledger.recordSentThenClaim(sent(7), now)).toEqual({ recorded: true, next: undefined });
    expect(ledger.openCount()).toBe(0);
    expect(db.prepare('SELECT id, watermark FROM subscribers WHERE id IN (3, 4, 5, 6, 7) ORDER BY id').all()).toEqual([
      { id: 3, watermark: 10 },
      { id: 4, watermark: 10 },
      { id: 5, watermark: 10 },
      { id: 6, watermark: 0 },
      { id: 7, watermark: 10 },
    ]);
    expect(editionStatus(db, { limit: 2 }).map(({ topFailures: _, ...counts }) => counts)).toEqual([
      { edition: '2025-11-25', planned: 4, sent: 3, pending: 0, failed: 0, suppressed: 0, unknown: 1 },
      { edition: '2025-11-24', planned: 3, sent: 2, pending: 0, failed: 1, suppressed: 0, unknown: 0 },
    ]);
  });

  it('every query of src/ on digests reads it through an index', () => {
    db = openDatabase(':memory:');
    const plans = digestsQueryPlans(db);
    const byName = new Map(plans.map((p) => [p.name, p]));
    // Each one resolved and prepared, but the planner's rows statement (assembled at run time).
    expect(plans.filter((p) => p.error).map((p) => p.name)).toEqual(['SQL_COPY_GROUP_ROWS']);
    // The only passes over a whole index: the metrics' totals, and the newest editions' DISTINCT walk.
    expect(plans.filter((p) => p.scans.length > 0).map((p) => [p.name, p.scans])).toEqual(
      expect.arrayContaining([
        ['SQL_EDITION_COUNTS', ['SCAN digests USING COVERING INDEX digests_edition']],
        ['SQL_EDITION_FAILURES', ['SCAN digests USING COVERING INDEX digests_edition']],
        ['SQL_LEDGER_TOTALS', ['SCAN digests USING COVERING INDEX digests_edition']],
      ]),
    );
    expect(plans.filter((p) => p.scans.length > 0)).toHaveLength(3);
    const uses = (name: string, index: string) => expect(byName.get(name)?.plan?.join('\n'), name).toContain(`INDEX ${index} `);
    for (const name of ['SQL_CLAIM_NEXT', 'SQL_SENDING_ROWS', 'SQL_NEXT_RETRY_AT', 'SQL_OPEN_COUNT', 'SQL_WAITING', 'SQL_WAITING_COUNT']) uses(name, 'digests_queue');
    expect(byName.get('SQL_CLAIM_NEXT')!.plan!.filter((l) => l.includes('INDEX digests_queue'))).toHaveLength(3);
    for (const name of ['SQL_BY_STATE', 'SQL_DIGEST_DAYS', 'SQL_SENT_SINCE']) uses(name, 'digests_edition');
    for (const name of ['SQL_LAST_ERRORS', 'SQL_EDITION_FAILURES']) uses(name, 'digests_trouble');
    uses('SQL_FIND_SLOTS', 'digests_subscriber_open');
  });
});
