// Planning the ledger on a real SQLite file, with the real topic parser and matcher.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import type { Db } from '../../src/db/open.ts';
import { planEdition } from '../../src/plan/planner.ts';
import { matchPending } from '../../src/topics/matcher.ts';
import type { DigestItem } from '../../src/types.ts';
import { digestRows, seedBatch, seedSubscriber, seedSubscribers, tempDatabase, type TempDb } from '../helpers/seed.ts';

let t: TempDb;
let db: Db;
beforeEach(() => {
  t = tempDatabase();
  db = t.db;
});
afterEach(() => t.cleanup());

const clock = new ManualClock('2025-11-25T12:00:00Z');
const items = (row: { papers: string }) => JSON.parse(row.papers) as DigestItem[];
const plan = (due = false, at?: string) => {
  if (at) clock.set(at);
  matchPending(db);
  return planEdition(db, { clock, due });
};
const rowsOf = (subscriberId: number) => digestRows(db).filter((r) => r.subscriber_id === subscriberId);
const markSent = (id: number) => {
  const r = db.prepare(`SELECT subscriber_id, to_paper FROM digests WHERE id = ?`).get(id) as { subscriber_id: number; to_paper: number };
  db.prepare(`UPDATE digests SET status = 'sent' WHERE id = ?`).run(id);
  db.prepare(`UPDATE subscribers SET watermark = max(watermark, ?) WHERE id = ?`).run(r.to_paper, r.subscriber_id);
};

describe('planEdition (ledger)', () => {
  it('plans one row per matching subscriber, none for the others, and papers in display order', async () => {
    const { paperIds: [bothLow, diffHigh, robotMid, diffTitle, diffAbstract, unrelated] } = seedBatch(db, '2025-11-25', [
      { title: 'Diffusion policies for robot arms', upvotes: 1 },
      { title: 'Scaling diffusion models', upvotes: 50 },
      { title: 'Robot grasping in clutter', upvotes: 20 },
      { title: 'Diffusion diffusion diffusion', abstract: 'Diffusion everywhere: a diffusion study.', upvotes: 5 },
      {
        title: 'Notes on sampling',
        abstract: `A long abstract ${'about many unrelated things '.repeat(30)} that mentions diffusion once.`,
        upvotes: 5,
      },
      { title: 'Protein folding at scale', upvotes: 99 },
    ]);
    const [ada, bob, cyd] = seedSubscribers(db, [
      { email: 'ada@example.com', topics: ['diffusion', 'robot'] },
      { email: 'bob@example.com', topics: ['quantum chromodynamics'] },
      { email: 'cyd@example.com', topics: ['protein'], status: 'pending' },
    ]);

    const result = plan();
    expect(result).toMatchObject({ edition: '2025-11-25', planned: 1 });
    expect(rowsOf(bob!.id)).toHaveLength(0); // nothing matched: no row, nothing will be sent
    expect(rowsOf(cyd!.id)).toHaveLength(0); // not confirmed
    const [row] = rowsOf(ada!.id);
    expect(row).toMatchObject({ edition: '2025-11-25', status: 'planned', from_paper: 0, paper_count: 5 });
    expect(row!.to_paper).toBe(unrelated);
    const list = items(row!);
    // More topics matched first, then upvotes, then relevance (the title match beats one word in a long abstract).
    expect(list.map((i) => i.p)).toEqual([bothLow, diffHigh, robotMid, diffTitle, diffAbstract]);
    expect(list[0]!.t).toEqual(ada!.topicIds); // both topics, in the subscriber's order
    expect(list[1]!.t).toEqual([ada!.topicIds[0]]);
    expect(list[3]!.s).toBeLessThan(list[4]!.s);
  });

  it('ignores muted topics', () => {
    seedBatch(db, '2025-11-25', [{ title: 'Graph neural networks' }, { title: 'Speech recognition' }]);
    const only = seedSubscriber(db, { email: 'mute@example.com', topics: [{ text: 'graph', muted: true }, 'speech'] });
    const allMuted = seedSubscriber(db, { email: 'quiet@example.com', topics: [{ text: 'graph', muted: true }] });
    plan();
    const [row] = rowsOf(only.id);
    expect(items(row!).map((i) => i.t)).toEqual([[only.topicIds[1]]]);
    expect(rowsOf(allMuted.id)).toHaveLength(0);
  });

  it('merges missed batch days into one digest named after the newest day, and never repeats a delivered paper', () => {
    const d1 = seedBatch(db, '2025-11-21', [{ key: '2511.00001', title: 'Transformers day one' }]);
    const d2 = seedBatch(db, '2025-11-24', [{ key: '2511.00002', title: 'Transformers day two' }]);
    const d3 = seedBatch(db, '2025-11-25', [{ key: '2511.00003', title: 'Transformers day three' }]);
    const sub = seedSubscriber(db, { email: 'away@example.com', topics: ['transformers'] });
    expect(plan().planned).toBe(1);
    const [row] = rowsOf(sub.id);
    expect(row!.edition).toBe('2025-11-25');
    expect(items(row!).map((i) => i.p).sort()).toEqual([...d1.paperIds, ...d2.paperIds, ...d3.paperIds].sort());
    markSent(row!.id);

    // Next day: one paper comes back (same arXiv id) with a new one. Only the new one is planned.
    const d4 = seedBatch(db, '2025-11-26', [
      { key: '2511.00002', title: 'Transformers day two' },
      { key: '2511.00004', title: 'Transformers day four' },
    ]);
    expect(plan().planned).toBe(1);
    const second = rowsOf(sub.id)[1]!;
    expect(second.edition).toBe('2025-11-26');
    expect(items(second).map((i) => i.p)).toEqual([d4.paperIds[1]]);
  });

  it('plans each subscriber once per edition and not while a row is open; failed papers ride in the next edition', () => {
    seedBatch(db, '2025-11-25', [{ title: 'Bandits and regret' }]);
    const sub = seedSubscriber(db, { email: 'once@example.com', topics: ['bandits'] });
    expect(plan().planned).toBe(1);
    expect(plan().planned).toBe(0); // same edition: UNIQUE(subscriber, edition)

    const first = rowsOf(sub.id)[0]!;
    db.prepare(`UPDATE digests SET status = 'retry' WHERE id = ?`).run(first.id);
    seedBatch(db, '2025-11-26', [{ title: 'Bandits with knapsacks' }]);
    expect(plan().planned).toBe(0); // an open row (retry) blocks a second one

    db.prepare(`UPDATE digests SET status = 'failed' WHERE id = ?`).run(first.id);
    expect(plan().planned).toBe(1);
    const next = rowsOf(sub.id)[1]!;
    expect(next.from_paper).toBe(0); // watermark did not move: the failed digest's paper is included
    expect(next.paper_count).toBe(2);
  });

  it('skips paused, unsubscribed and suppressed subscribers', () => {
    seedBatch(db, '2025-11-25', [{ title: 'Contrastive learning' }]);
    const [paused, gone, blocked, ok] = seedSubscribers(db, [
      { email: 'paused@example.com', topics: ['contrastive'] },
      { email: 'gone@example.com', topics: ['contrastive'], status: 'unsubscribed' },
      { email: 'blocked@example.com', topics: ['contrastive'], status: 'suppressed' },
      { email: 'ok@example.com', topics: ['contrastive'] },
    ]);
    db.prepare(`UPDATE subscribers SET paused_until = ? WHERE id = ?`).run('2025-12-01T00:00:00.000Z', paused!.id);
    expect(plan().planned).toBe(1);
    expect(rowsOf(ok!.id)).toHaveLength(1);
    for (const s of [paused, gone, blocked]) expect(rowsOf(s!.id)).toHaveLength(0);
    // Once the pause is over, the paused subscriber gets the edition.
    expect(plan(false, '2025-12-01T00:00:00Z').planned).toBe(1);
    expect(rowsOf(paused!.id)).toHaveLength(1);
  });

  it('gives the same result whatever the chunk size', () => {
    seedBatch(db, '2025-11-25', [{ title: 'Federated learning' }, { title: 'Federated optimisation', upvotes: 3 }]);
    seedSubscribers(db, Array.from({ length: 7 }, (_, i) => ({ email: `s${i}@example.com`, topics: ['federated'] })));
    matchPending(db);
    const r = planEdition(db, { clock, due: false, chunkSize: 2 });
    expect(r).toEqual({ edition: '2025-11-25', planned: 7, items: 14 });
    const paperLists = digestRows(db).map((x) => items(x).map((i) => i.p).join(','));
    expect(new Set(paperLists)).toEqual(new Set(['2,1'])); // more upvotes first, same for everyone
  });

  it('plans a single subscriber on request (preview, welcome digest)', () => {
    seedBatch(db, '2025-11-25', [{ title: 'Tokenizer-free language models' }]);
    const [first, second] = seedSubscribers(db, [
      { email: 'one@example.com', topics: ['tokenizer'] },
      { email: 'two@example.com', topics: ['tokenizer'] },
    ]);
    matchPending(db);
    expect(planEdition(db, { clock, due: false, onlySubscriber: second!.id }).planned).toBe(1);
    expect(rowsOf(second!.id)).toHaveLength(1);
    expect(rowsOf(first!.id)).toHaveLength(0);
  });

  it('never plans past what the matcher has seen', () => {
    seedBatch(db, '2025-11-25', [{ title: 'Sparse attention' }]);
    const sub = seedSubscriber(db, { email: 'early@example.com', topics: ['attention'] });
    matchPending(db);
    seedBatch(db, '2025-11-26', [{ title: 'Linear attention' }]); // ingested, not matched yet
    planEdition(db, { clock, due: false });
    const [row] = rowsOf(sub.id);
    expect(row!.paper_count).toBe(1);
    expect(row!.to_paper).toBe(1); // the unmatched paper stays above the watermark for the next edition
  });

  describe('due mode: each subscriber at their own local hour', () => {
    it('Asia/Tokyo and America/New_York receive the same edition at their own 07:00', () => {
      seedBatch(db, '2025-11-25', [{ title: 'World models' }]);
      const [tokyo, ny] = seedSubscribers(db, [
        { email: 'tokyo@example.com', topics: ['world models'], timezone: 'Asia/Tokyo', deliveryHour: 7 },
        // New York already had yesterday's digest on its local 2025-11-24.
        { email: 'ny@example.com', topics: ['world models'], timezone: 'America/New_York', deliveryHour: 7, lastDigestDate: '2025-11-24' },
      ]);
      expect(plan(true, '2025-11-24T21:00:00Z').planned).toBe(0); // Tokyo 06:00, New York 16:00 (done today)
      expect(plan(true, '2025-11-24T22:00:00Z').planned).toBe(1); // Tokyo 07:00 on the 25th
      expect(rowsOf(tokyo!.id)).toHaveLength(1);
      markSent(rowsOf(tokyo!.id)[0]!.id);
      expect(plan(true, '2025-11-25T11:00:00Z').planned).toBe(0); // New York 06:00 EST
      expect(plan(true, '2025-11-25T12:00:00Z').planned).toBe(1); // New York 07:00 EST
      expect(rowsOf(ny!.id)[0]!.edition).toBe(rowsOf(tokyo!.id)[0]!.edition);
      const dates = db.prepare(`SELECT email, last_digest_date FROM subscribers ORDER BY id`).all();
      expect(dates).toEqual([
        { email: 'tokyo@example.com', last_digest_date: '2025-11-25' },
        { email: 'ny@example.com', last_digest_date: '2025-11-25' },
      ]);
      // Later the same local day: nothing more, even with new papers.
      seedBatch(db, '2025-11-25', [{ title: 'World models again' }], 'other-source');
      expect(plan(true, '2025-11-25T20:00:00Z').planned).toBe(0);
    });

    it('follows daylight saving time (New York 07:00 is 11:00 UTC after the March change)', () => {
      seedBatch(db, '2026-03-09', [{ title: 'Reward models' }]);
      const ny = seedSubscriber(db, {
        email: 'dst@example.com',
        topics: ['reward'],
        timezone: 'America/New_York',
        deliveryHour: 7,
        lastDigestDate: '2026-03-08',
      });
      expect(plan(true, '2026-03-09T10:00:00Z').planned).toBe(0); // 06:00 EDT
      expect(plan(true, '2026-03-09T11:00:00Z').planned).toBe(1); // 07:00 EDT (would be 06:00 in winter)
      expect(rowsOf(ny.id)).toHaveLength(1);
    });

    it('sends weekly digests on the chosen weekday, or once the last one is 7+ days old', () => {
      seedBatch(db, '2025-11-23', [{ title: 'Retrieval augmented generation' }]);
      const [monday, late] = seedSubscribers(db, [
        { email: 'monday@example.com', topics: ['retrieval'], frequency: 'weekly', weeklyDay: 1, deliveryHour: 7 },
        {
          email: 'late@example.com',
          topics: ['retrieval'],
          frequency: 'weekly',
          weeklyDay: 1,
          deliveryHour: 7,
          lastDigestDate: '2025-11-14',
        },
      ]);
      // Sunday 2025-11-23: not Monday's day; the other one's last digest is 9 days old.
      expect(plan(true, '2025-11-23T09:00:00Z').planned).toBe(1);
      expect(rowsOf(late!.id)).toHaveLength(1);
      expect(rowsOf(monday!.id)).toHaveLength(0);
      expect(plan(true, '2025-11-24T06:00:00Z').planned).toBe(0); // Monday, before 07:00
      expect(plan(true, '2025-11-24T07:00:00Z').planned).toBe(1); // Monday 07:00
      expect(rowsOf(monday!.id)).toHaveLength(1);
      markSent(rowsOf(monday!.id)[0]!.id);
      markSent(rowsOf(late!.id)[0]!.id);
      seedBatch(db, '2025-11-25', [{ title: 'Retrieval at scale' }]);
      expect(plan(true, '2025-11-25T09:00:00Z').planned).toBe(0); // Tuesday: weekly readers wait
      expect(plan(true, '2025-12-01T07:00:00Z').planned).toBe(2); // next Monday: both
    });

    it('non-due mode plans everyone now, whatever the hour', () => {
      seedBatch(db, '2025-11-25', [{ title: 'Mixture of experts' }]);
      seedSubscribers(db, [
        { email: 'a@example.com', topics: ['experts'], timezone: 'Asia/Tokyo', deliveryHour: 23 },
        { email: 'b@example.com', topics: ['experts'], frequency: 'weekly', weeklyDay: 5, lastDigestDate: '2025-11-25' },
      ]);
      expect(plan(true, '2025-11-25T03:00:00Z').planned).toBe(0);
      expect(plan(false, '2025-11-25T03:00:00Z').planned).toBe(2);
    });
  });
});
