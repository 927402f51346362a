// Upgrading to 011 in place: the previous release's database (tests/fixtures/db/v1-digest.sqlite) gets an
// opt-out history for the addresses that had already left, and from then on the triggers record every
// opt-out whichever code makes it: the bounce service, which knows nothing of the history, included.
import { copyFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { recordBounce } from '../../src/bounces/service.ts';
import { activeOptOuts, personMayReverse } from '../../src/consent/history.ts';
import { openDatabase, type Db } from '../../src/db/open.ts';
import { silentLogger } from '../../src/log.ts';
import { tempDatabaseDir } from '../helpers/seed.ts';

const FIXTURE = new URL('../fixtures/db/v1-digest.sqlite', import.meta.url);

describe('migration 011 on a database of the previous release', () => {
  let db: Db | undefined;
  let dir: ReturnType<typeof tempDatabaseDir> | undefined;
  afterEach(() => {
    db?.close();
    dir?.remove();
  });

  it('records the addresses that had left, then every complaint and bounce as it comes', () => {
    dir = tempDatabaseDir('digest-m011-');
    copyFileSync(FIXTURE, dir.path);
    db = openDatabase(dir.path);
    const suppressed = db.prepare(`SELECT email FROM subscribers WHERE status = 'suppressed'`).get() as { email: string };
    expect(activeOptOuts(db, suppressed.email).map((e) => [e.kind, e.status, e.detail])).toEqual([
      ['hard-bounce', 'suppressed', 'recorded before the opt-out history existed'],
    ]);

    const clock = new ManualClock('2025-11-27T09:00:00Z');
    const deps = { db, clock, logger: silentLogger, config: { SOFT_BOUNCES_TO_SUPPRESS: 3, SOFT_BOUNCE_WINDOW_DAYS: 7 } };
    const [first, second] = db
      .prepare(`SELECT d.id, s.email FROM digests d JOIN subscribers s ON s.id = d.subscriber_id WHERE d.status = 'sent' AND s.status = 'confirmed' GROUP BY s.id ORDER BY s.id LIMIT 2`)
      .all() as Array<{ id: number; email: string }>;
    // A complaint: the bounce service unsubscribes; the trigger records it as a complaint, with its detail.
    expect(recordBounce(deps, { digestId: first!.id, kind: 'complaint', channel: 'smtp', status: null, detail: 'feedback-type abuse' })).toBe('unsubscribed');
    expect(activeOptOuts(db, first!.email).map((e) => [e.kind, e.status, e.detail, e.at])).toEqual([['complaint', 'unsubscribed', 'feedback-type abuse', '2025-11-27T09:00:00.000Z']]);
    expect(personMayReverse(activeOptOuts(db, first!.email))).toBe(false);

    // The reader unsubscribes, then a complaint about an earlier digest arrives: no status changes, still recorded.
    db.prepare(`UPDATE subscribers SET status = 'unsubscribed', unsubscribed_at = '2025-11-27T09:30:00.000Z' WHERE email = ?`).run(second!.email);
    clock.set('2025-11-27T10:00:00Z');
    expect(recordBounce(deps, { digestId: second!.id, kind: 'complaint', channel: 'mailgun', status: null, detail: 'mailgun complained' })).toBe('none');
    expect(activeOptOuts(db, second!.email).map((e) => e.kind)).toEqual(['unsubscribe', 'complaint']);
    expect(personMayReverse(activeOptOuts(db, second!.email))).toBe(false);
  });
});
