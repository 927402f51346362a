// Upgrading to 010 in place: the previous release's database, migrated up to 007 and holding bounce reports,
// migrates on. bounce_events is rebuilt (new kinds) with every row, id and index; ledger rows keep a NULL
// VERP nonce, so the id-only tags of mail sent before still map to their own row; new rows get a nonce.
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { taggedDigest } from '../../src/bounces/digest-tag.ts';
import { Verp } from '../../src/bounces/verp.ts';
import { listMigrations, migrate, MIGRATIONS_DIR, openDatabase, type Db } from '../../src/db/open.ts';
import { Tokens } from '../../src/tokens.ts';
import { tempDatabaseDir } from '../helpers/seed.ts';

const FIXTURE = new URL('../fixtures/db/v1-digest.sqlite', import.meta.url);

describe('migration 010 on an existing database', () => {
  let db: Db | undefined;
  let dir: ReturnType<typeof tempDatabaseDir> | undefined;
  afterEach(() => {
    db?.close();
    dir?.remove();
  });

  it('keeps every bounce report and index, and old tags keep mapping to their own rows', () => {
    dir = tempDatabaseDir('digest-m010-');
    copyFileSync(FIXTURE, dir.path);
    const before = join(dir.dir, 'before-010');
    mkdirSync(before);
    for (const m of listMigrations().filter((m) => m.version < 10)) copyFileSync(join(MIGRATIONS_DIR, m.name), join(before, m.name));
    db = openDatabase(dir.path, { migrate: false });
    migrate(db, before);
    const sent = db.prepare("SELECT id, subscriber_id AS s FROM digests WHERE status = 'sent' ORDER BY id LIMIT 2").all() as Array<{ id: number; s: number }>;
    expect(sent).toHaveLength(2);
    const insert = db.prepare(`INSERT INTO bounce_events (digest_id, subscriber_id, kind, channel, status, detail, outcome, received_at) VALUES (?, ?, ?, 'smtp', ?, ?, ?, '2025-11-20T10:00:00.000Z')`);
    insert.run(sent[0]!.id, sent[0]!.s, 'soft', '4.2.2', 'over quota', 'counted');
    insert.run(sent[1]!.id, sent[1]!.s, 'complaint', null, 'feedback-type abuse', 'unsubscribed');
    const reports = () => db!.prepare('SELECT * FROM bounce_events ORDER BY id').all();
    const old = reports();

    migrate(db);
    expect(db.pragma('user_version', { simple: true })).toBe(listMigrations().at(-1)!.version);
    expect(reports()).toEqual(old);
    const indexes = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'bounce_events' AND sql IS NOT NULL ORDER BY name").all() as Array<{ name: string }>).map((r) => r.name);
    expect(indexes).toEqual(['bounce_events_received', 'bounce_events_subscriber']);
    expect(db.pragma('foreign_key_check')).toEqual([]);
    // The new kind and channel are accepted; a digest's delete still takes its reports along.
    insert.run(sent[0]!.id, sent[0]!.s, 'policy', '5.7.1', 'likely unsolicited mail', 'alerted');
    db.prepare("UPDATE bounce_events SET channel = 'send' WHERE kind = 'policy'").run();
    db.prepare('DELETE FROM digests WHERE id = ?').run(sent[0]!.id);
    expect(reports()).toHaveLength(1);

    // Mail sent before 010 carries id-only tags: they map to their row (whose nonce is NULL), and only to it.
    const verp = new Verp('bounces@bounces.example.org', new Tokens('any-secret-0123456789abcdef0123456789ab'));
    expect(db.prepare('SELECT count(*) AS n FROM digests WHERE verp_nonce IS NOT NULL').get()).toEqual({ n: 0 });
    expect(taggedDigest(db, verp, verp.envelopeFor(sent[1]!.id, null))).toEqual({ digestId: sent[1]!.id });
    expect(taggedDigest(db, verp, verp.envelopeFor(sent[0]!.id, null))).toBeNull(); // its row is gone
  });
});
