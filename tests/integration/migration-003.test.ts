// Upgrading to 003 in place: the previous release's database (tests/fixtures/db/v1-digest.sqlite, see
// migration-002.test.ts) migrates through 002 and 003, keeps every row, and the new parts work on it:
// the console's overview and search read it, a bounce for one of its sent digests acts, and it backs up.
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { computeOverview } from '../../src/admin/overview.ts';
import { searchSubscribers } from '../../src/admin/subscribers.ts';
import { recordBounce } from '../../src/bounces/service.ts';
import { backupDatabase } from '../../src/db/backup.ts';
import { listMigrations, openDatabase, type Db } from '../../src/db/open.ts';
import { silentLogger } from '../../src/log.ts';
import { tempDatabaseDir } from '../helpers/seed.ts';

const FIXTURE = new URL('../fixtures/db/v1-digest.sqlite', import.meta.url);

describe('migration 003 on a database of the previous release', () => {
  let db: Db | undefined;
  let dir: ReturnType<typeof tempDatabaseDir> | undefined;
  afterEach(() => {
    db?.close();
    dir?.remove();
  });

  it('migrates, keeps every row, and the console, bounces and backup work on it', async () => {
    dir = tempDatabaseDir('digest-m003-');
    copyFileSync(FIXTURE, dir.path);
    const before = openDatabase(dir.path, { migrate: false });
    const counts = (d: Db) => d.prepare('SELECT (SELECT count(*) FROM subscribers) AS s, (SELECT count(*) FROM digests) AS d, (SELECT count(*) FROM papers) AS p').get();
    const old = counts(before);
    before.close();

    db = openDatabase(dir.path);
    expect(db.pragma('user_version', { simple: true })).toBe(listMigrations().at(-1)!.version); // every migration, 003 among them
    expect(counts(db)).toEqual(old);

    const clock = new ManualClock('2025-11-27T09:00:00Z');
    const o = computeOverview(db, clock.now());
    expect(o.sent.reduce((a, b) => a + b, 0)).toBe((db.prepare("SELECT count(*) AS n FROM digests WHERE status = 'sent'").get() as { n: number }).n);
    const all = searchSubscribers(db, { by: 'address', text: '' });
    expect(all.hits).toHaveLength((old as { s: number }).s);

    const sent = db.prepare("SELECT id, subscriber_id AS subscriberId FROM digests WHERE status = 'sent' LIMIT 1").get() as { id: number; subscriberId: number };
    const deps = { db, clock, logger: silentLogger, config: { SOFT_BOUNCES_TO_SUPPRESS: 3, SOFT_BOUNCE_WINDOW_DAYS: 7 } };
    expect(recordBounce(deps, { digestId: sent.id, kind: 'complaint', channel: 'smtp', status: null, detail: 'feedback-type abuse' })).toBe('unsubscribed');
    expect(db.prepare('SELECT status FROM subscribers WHERE id = ?').get(sent.subscriberId)).toEqual({ status: 'unsubscribed' });

    const r = await backupDatabase(db, join(dir.dir, 'copy.sqlite'));
    expect(r.integrity).toBe('ok');
    expect(r.counts).toMatchObject({ subscribers: (old as { s: number }).s, digests: (old as { d: number }).d, bounceEvents: 1 });
    expect(r.userVersion).toBe(listMigrations().at(-1)!.version);
  });
});
