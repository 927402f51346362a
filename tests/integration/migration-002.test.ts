// Upgrading in place: a database made by the previous version (batch-dated editions, JSON paper
// lists) moves to slots and packed lists with nothing resent and nothing lost.
//
// tests/fixtures/db/v1-digest.sqlite was made by the previous release (commit 73cc9e4) through its CLI:
// `digest ingest` of tests/fixtures/batches/2025-11-25.json, five confirmed subscribers and a pending
// one, `digest run` (4 digests sent), `digest ingest` of 2025-11-26.json and a `digest run` against a
// relay that was down (4 rows left to retry); then, by SQL, the states a crash, a 5xx and a suppression
// leave: one row 'unknown', one 'failed' (its address at one hard failure), one back to 'planned',
// and eve@ suppressed with her row still 'retry'.
import { copyFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import { openDatabase, type Db } from '../../src/db/open.ts';
import { silentLogger } from '../../src/log.ts';
import { createTestApp, type AppWithDb } from '../helpers/test-app.ts';
import { runPipeline } from '../../src/pipeline.ts';
import { deliveryEnvVars } from '../helpers/delivery-setup.ts';
import { digestRows, rowItems, tempDatabaseDir, withDatabase, type DigestRowForTest, type TempDb } from '../helpers/seed.ts';
import { SmtpSink } from '../helpers/smtp-sink.ts';

const FIXTURE = new URL('../fixtures/db/v1-digest.sqlite', import.meta.url);

/** A ledger row as the previous version stored it: the JSON paper list instead of the packed one. */
interface OldDigest extends Omit<DigestRowForTest, 'items' | 'topic_ids'> {
  papers: string;
}
interface OldSubscriber {
  id: number;
  email: string;
  status: string;
  token_salt: string;
  watermark: number;
  last_digest_date: string | null;
  hard_failures: number;
  suppressed_at: string | null;
}

let t: TempDb;
let old: { digests: OldDigest[]; subscribers: OldSubscriber[] };

beforeEach(() => {
  const dir = tempDatabaseDir('digest-upgrade-');
  copyFileSync(FIXTURE, dir.path);
  // Read the old rows as the previous version left them, before anything migrates.
  const before: Db = openDatabase(dir.path, { migrate: false });
  expect(before.pragma('user_version', { simple: true })).toBe(1);
  old = {
    digests: before.prepare(`SELECT * FROM digests ORDER BY id`).all() as OldDigest[],
    subscribers: before.prepare(`SELECT * FROM subscribers ORDER BY id`).all() as OldSubscriber[],
  };
  before.close();
  t = withDatabase(dir, openDatabase(dir.path));
});
afterEach(() => t.cleanup());

describe('migration 002 on a database made by the previous version', () => {
  it('keeps every row, status, watermark, suppression and token salt, and packs each paper list exactly', () => {
    expect(t.db.pragma('user_version', { simple: true })).toBeGreaterThanOrEqual(2);
    const subs = t.db.prepare(`SELECT * FROM subscribers ORDER BY id`).all() as Array<Record<string, unknown>>;
    expect(subs).toHaveLength(old.subscribers.length);
    subs.forEach((s, i) => {
      const o = old.subscribers[i]!;
      expect(s).toMatchObject({
        email: o.email,
        status: o.status,
        token_salt: o.token_salt,
        watermark: o.watermark,
        hard_failures: o.hard_failures,
        suppressed_at: o.suppressed_at,
        last_slot: o.last_digest_date, // the local date of the last slot that ran
      });
      expect(s).not.toHaveProperty('last_digest_date');
    });

    const rows = digestRows(t.db);
    expect(rows.map((r) => [r.id, r.subscriber_id, r.edition, r.status, r.from_paper, r.to_paper, r.paper_count])).toEqual(
      old.digests.map((o) => [o.id, o.subscriber_id, o.edition, o.status, o.from_paper, o.to_paper, o.paper_count]),
    );
    expect(new Set(rows.map((r) => r.status))).toEqual(new Set(['sent', 'unknown', 'failed', 'planned', 'retry']));
    for (const [i, r] of rows.entries()) {
      const want = (JSON.parse(old.digests[i]!.papers) as Array<{ p: number; t: number[] }>).map((x) => ({ paperId: x.p, topicIds: x.t }));
      expect(want.length).toBeGreaterThan(0);
      expect(rowItems(r, t.db)).toEqual(want); // same papers, same display order, same matched topics
      expect(r.items!.length).toBeLessThan(old.digests[i]!.papers.length / 5);
    }
  });

  it('then sends the open rows once, resends nothing, and carries the unknown and failed papers to the next slot', async () => {
    const sink = await SmtpSink.start();
    const clock = new ManualClock('2026-11-24T09:00:00Z'); // the day after the previous version's last run
    let app: AppWithDb | undefined;
    try {
      app = await createTestApp(loadConfig(deliveryEnvVars(t, sink)), { clock, logger: silentLogger });
      const report = await runPipeline(app, { mode: 'due' });
      expect(report.send).toMatchObject({ sent: 3, failed: 0, suppressed: 1 });

      const byEmail = (email: string) => old.subscribers.find((s) => s.email === email)!.id;
      const rowsOf = (email: string) => digestRows(t.db).filter((r) => r.subscriber_id === byEmail(email));
      const counts = sink.countsByAddress();
      // cyd's row was still planned: it goes out now, as it was planned (and it is her slot today).
      expect(counts.get('cyd@example.org')).toBe(1);
      expect(rowsOf('cyd@example.org')).toHaveLength(2);
      // ada's send was in flight at a crash (unknown): never resent, its papers ride in today's slot.
      const ada = rowsOf('ada@example.org');
      expect(ada.map((r) => r.status)).toEqual(['sent', 'unknown', 'sent']);
      expect(ada[2]).toMatchObject({ edition: '2026-11-24', from_paper: 25, to_paper: 41, paper_count: 15 });
      // bob's 5xx: his papers come again today (the watermark never moved past them), one email.
      const bob = rowsOf('bob@example.org');
      expect(bob.map((r) => r.status)).toEqual(['sent', 'failed', 'sent']);
      expect(rowItems(bob[2]!, t.db).map((i) => i.paperId)).toEqual(rowItems(bob[1]!, t.db).map((i) => i.paperId));
      // eve was suppressed: her retrying row is skipped, nothing reaches her.
      expect(counts.get('eve@example.org')).toBeUndefined();
      expect(rowsOf('eve@example.org').map((r) => r.status)).toEqual(['sent', 'suppressed']);
      expect([...counts.values()].every((n) => n === 1)).toBe(true);

      // Another run the same day sends nothing more.
      const again = await runPipeline(app, { mode: 'now' });
      expect(again.plan.planned).toBe(0);
      expect(again.send?.sent).toBe(0);
      expect(sink.messages).toHaveLength(3);
    } finally {
      await app?.close();
      await sink.close();
    }
  });
});
