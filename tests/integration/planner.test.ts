// Planning the ledger on a real SQLite file, with the real topic parser and matcher: one row per
// subscriber per slot (their own local delivery date), whatever the batches' dates say.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import type { Db } from '../../src/db/open.ts';
import { planDigests } from '../../src/plan/planner.ts';
import { matchPending } from '../../src/match/matcher.ts';
import { digestRows, rowItems, seedBatch, seedSubscriber, seedSubscribers, tempDatabase, type TempDb } from '../helpers/seed.ts';

let t: TempDb;
let db: Db;
beforeEach(() => {
  t = tempDatabase();
  db = t.db;
  clock.set('2025-11-25T12:00:00Z');
});
afterEach(() => t.cleanup());

const clock = new ManualClock('2025-11-25T12:00:00Z');
const plan = async (due = false, at?: string, chunkSize?: number) => {
  if (at) clock.set(at);
  matchPending(db);
  return planDigests(db, { clock, mode: due ? 'due' : 'now', chunkSize });
};
const rowsOf = (subscriberId: number) => digestRows(db).filter((r) => r.subscriber_id === subscriberId);
const papersOf = (row: Parameters<typeof rowItems>[0]) => rowItems(row, db).map((i) => i.paperId);
const lastSlot = (id: number) => (db.prepare(`SELECT last_slot FROM subscribers WHERE id = ?`).get(id) as { last_slot: string | null }).last_slot;
const markSent = (id: number) => {
  const r = db.prepare(`SELECT subscriber_id, to_paper FROM digests WHERE id = ?`).get(id) as { subscriber_id: number; to_paper: number };
  db.prepare(`UPDATE digests SET status = 'sent' WHERE id = ?`).run(id);
  db.prepare(`UPDATE subscribers SET watermark = max(watermark, ?) WHERE id = ?`).run(r.to_paper, r.subscriber_id);
};

describe('planDigests (ledger)', () => {
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

    const result = await plan();
    expect(result).toMatchObject({ slots: 2, planned: 1 }); // ada and bob had their slot; cyd is not confirmed
    expect(rowsOf(bob!.id)).toHaveLength(0); // nothing matched: no row, nothing will be sent
    expect(lastSlot(bob!.id)).toBe('2025-11-25'); // ...but today's slot has run for bob too
    expect(rowsOf(cyd!.id)).toHaveLength(0);
    const [row] = rowsOf(ada!.id);
    // The edition is ada's own delivery date (UTC subscriber, planned at 12:00 UTC on the 25th).
    expect(row).toMatchObject({ edition: '2025-11-25', status: 'planned', from_paper: 0, paper_count: 5 });
    expect(row!.to_paper).toBe(unrelated);
    const list = rowItems(row!, db);
    // More topics matched first, then upvotes, then relevance (the title match beats one word in a long abstract).
    expect(list.map((i) => i.paperId)).toEqual([bothLow, diffHigh, robotMid, diffTitle, diffAbstract]);
    expect(list[0]!.topicIds).toEqual(ada!.topicIds); // both topics, in the subscriber's order
    expect(list[1]!.topicIds).toEqual([ada!.topicIds[0]]);
    expect(list[2]!.topicIds).toEqual([ada!.topicIds[1]]);
  });

  it('ignores muted topics (and keeps the other topics named right)', async () => {
    seedBatch(db, '2025-11-25', [{ title: 'Graph neural networks' }, { title: 'Speech recognition' }]);
    const only = seedSubscriber(db, { email: 'mute@example.com', topics: [{ text: 'graph', muted: true }, 'speech'] });
    const allMuted = seedSubscriber(db, { email: 'quiet@example.com', topics: [{ text: 'graph', muted: true }] });
    await plan();
    const [row] = rowsOf(only.id);
    expect(rowItems(row!, db).map((i) => i.topicIds)).toEqual([[only.topicIds[1]]]);
    expect(rowsOf(allMuted.id)).toHaveLength(0);
  });

  it('merges missed days into one digest named after the slot, and never repeats a delivered paper', async () => {
    const d1 = seedBatch(db, '2025-11-21', [{ key: '2511.00001', title: 'Transformers day one' }]);
    const d2 = seedBatch(db, '2025-11-24', [{ key: '2511.00002', title: 'Transformers day two' }]);
    const d3 = seedBatch(db, '2025-11-25', [{ key: '2511.00003', title: 'Transformers day three' }]);
    const sub = seedSubscriber(db, { email: 'away@example.com', topics: ['transformers'] });
    expect((await plan()).planned).toBe(1);
    const [row] = rowsOf(sub.id);
    expect(row!.edition).toBe('2025-11-25');
    expect(papersOf(row!).sort()).toEqual([...d1.paperIds, ...d2.paperIds, ...d3.paperIds].sort());
    markSent(row!.id);

    // Next day: one paper comes back (same arXiv id) with a new one. Only the new one is planned.
    const d4 = seedBatch(db, '2025-11-26', [
      { key: '2511.00002', title: 'Transformers day two' },
      { key: '2511.00004', title: 'Transformers day four' },
    ]);
    expect((await plan(false, '2025-11-26T12:00:00Z')).planned).toBe(1);
    const second = rowsOf(sub.id)[1]!;
    expect(second.edition).toBe('2025-11-26');
    expect(papersOf(second)).toEqual([d4.paperIds[1]]);
  });

  it('runs each slot once: later papers the same day wait for the next slot, whatever their batch date', async () => {
    seedBatch(db, '2025-11-25', [{ title: 'Bandits and regret' }]);
    const sub = seedSubscriber(db, { email: 'once@example.com', topics: ['bandits'] });
    expect((await plan()).planned).toBe(1);
    markSent(rowsOf(sub.id)[0]!.id);
    // The listing grows after the morning email (same batch day), and an older day is backfilled.
    const grown = seedBatch(db, '2025-11-25', [{ title: 'Bandits with knapsacks' }], 'grown');
    const backfill = seedBatch(db, '2025-11-18', [{ title: 'Bandits revisited' }], 'backfill');
    expect((await plan(false, '2025-11-25T20:00:00Z')).planned).toBe(0); // same local day: the slot has run
    // Next day's slot brings both, once.
    expect((await plan(false, '2025-11-26T08:00:00Z')).planned).toBe(1);
    const next = rowsOf(sub.id)[1]!;
    expect(next.edition).toBe('2025-11-26');
    expect(papersOf(next).sort()).toEqual([...grown.paperIds, ...backfill.paperIds].sort());
  });

  it('a batch dated years ahead changes nothing: the next days still plan', async () => {
    // Written straight into the table (ingest refuses such a date): the planner must not care either way.
    seedBatch(db, '2030-01-01', [{ title: 'Causal discovery from the future' }], 'wrong-clock');
    const sub = seedSubscriber(db, { email: 'future@example.com', topics: ['causal'] });
    expect((await plan(false, '2025-11-25T12:00:00Z')).planned).toBe(1);
    markSent(rowsOf(sub.id)[0]!.id);
    const later = seedBatch(db, '2025-11-26', [{ title: 'Causal inference with text' }]);
    expect((await plan(false, '2025-11-26T12:00:00Z')).planned).toBe(1);
    expect(papersOf(rowsOf(sub.id)[1]!)).toEqual(later.paperIds);
  });

  it('does not plan over an open row (its papers would show twice); failed papers ride in the next slot', async () => {
    seedBatch(db, '2025-11-25', [{ title: 'Bandits and regret' }]);
    const sub = seedSubscriber(db, { email: 'open@example.com', topics: ['bandits'] });
    expect((await plan()).planned).toBe(1);
    const first = rowsOf(sub.id)[0]!;
    db.prepare(`UPDATE digests SET status = 'retry' WHERE id = ?`).run(first.id);
    seedBatch(db, '2025-11-26', [{ title: 'Bandits with knapsacks' }]);
    expect((await plan(false, '2025-11-26T12:00:00Z')).planned).toBe(0); // the retrying row is this slot's delivery
    expect(lastSlot(sub.id)).toBe('2025-11-26');

    db.prepare(`UPDATE digests SET status = 'failed' WHERE id = ?`).run(first.id);
    expect((await plan(false, '2025-11-27T12:00:00Z')).planned).toBe(1);
    const next = rowsOf(sub.id)[1]!;
    expect(next.from_paper).toBe(0); // watermark did not move: the failed digest's paper is included
    expect(next.paper_count).toBe(2);
  });

  it('skips paused, unsubscribed and suppressed subscribers; a pause does not use up the slot', async () => {
    seedBatch(db, '2025-11-25', [{ title: 'Contrastive learning' }]);
    const [paused, gone, blocked, ok] = seedSubscribers(db, [
      { email: 'paused@example.com', topics: ['contrastive'] },
      { email: 'gone@example.com', topics: ['contrastive'], status: 'unsubscribed' },
      { email: 'blocked@example.com', topics: ['contrastive'], status: 'suppressed' },
      { email: 'ok@example.com', topics: ['contrastive'] },
    ]);
    db.prepare(`UPDATE subscribers SET paused_until = ? WHERE id = ?`).run('2025-11-25T18:00:00.000Z', paused!.id);
    expect((await plan()).planned).toBe(1);
    expect(rowsOf(ok!.id)).toHaveLength(1);
    for (const s of [paused, gone, blocked]) expect(rowsOf(s!.id)).toHaveLength(0);
    // Once the pause is over (the same day), the paused subscriber gets today's slot.
    expect((await plan(false, '2025-11-25T18:00:00Z')).planned).toBe(1);
    expect(rowsOf(paused!.id)).toHaveLength(1);
  });

  it('gives the same result whatever the chunk size', async () => {
    seedBatch(db, '2025-11-25', [{ title: 'Federated learning' }, { title: 'Federated optimisation', upvotes: 3 }]);
    seedSubscribers(db, Array.from({ length: 7 }, (_, i) => ({ email: `s${i}@example.com`, topics: ['federated'] })));
    const r = await plan(false, undefined, 2);
    expect(r).toEqual({ slots: 7, planned: 7, items: 14 });
    const paperLists = digestRows(db).map((x) => papersOf(x).join(','));
    expect(new Set(paperLists)).toEqual(new Set(['2,1'])); // more upvotes first, same for everyone
    expect((await plan(false, undefined, 3)).planned).toBe(0); // idempotent: every slot has run
  });

  it('plans a single subscriber on request (preview, welcome digest)', async () => {
    seedBatch(db, '2025-11-25', [{ title: 'Tokenizer-free language models' }]);
    const [first, second] = seedSubscribers(db, [
      { email: 'one@example.com', topics: ['tokenizer'] },
      { email: 'two@example.com', topics: ['tokenizer'] },
    ]);
    matchPending(db);
    expect((await planDigests(db, { clock, mode: 'now', onlySubscriber: second!.id })).planned).toBe(1);
    expect(rowsOf(second!.id)).toHaveLength(1);
    expect(rowsOf(first!.id)).toHaveLength(0);
    expect(lastSlot(first!.id)).toBeNull();
  });

  it('never plans past what the matcher has seen', async () => {
    seedBatch(db, '2025-11-25', [{ title: 'Sparse attention' }]);
    const sub = seedSubscriber(db, { email: 'early@example.com', topics: ['attention'] });
    matchPending(db);
    seedBatch(db, '2025-11-26', [{ title: 'Linear attention' }]); // ingested, not matched yet
    await planDigests(db, { clock, mode: 'now' });
    const [row] = rowsOf(sub.id);
    expect(row!.paper_count).toBe(1);
    expect(row!.to_paper).toBe(1); // the unmatched paper stays above the watermark for the next slot
  });

  it('packs a long digest in about 2 bytes per paper', async () => {
    const many = seedBatch(
      db,
      '2025-11-25',
      Array.from({ length: 180 }, (_, i) => ({ title: `Reinforcement learning study ${i}`, upvotes: i % 7 })),
    );
    seedBatch(db, '2025-11-25', Array.from({ length: 300 }, (_, i) => ({ title: `Unrelated paper ${i}` })), 'other');
    const sub = seedSubscriber(db, { email: 'broad@example.com', topics: ['reinforcement learning', 'study', 'robots'] });
    await plan();
    const [row] = rowsOf(sub.id);
    expect(row!.paper_count).toBe(180);
    expect(row!.items!.length).toBeLessThanOrEqual(1 + 180 * 2);
    expect(new Set(papersOf(row!))).toEqual(new Set(many.paperIds));
    expect(rowItems(row!, db)[0]!.topicIds).toEqual(sub.topicIds.slice(0, 2));
  });

  it('leaves no temp pages behind on its connection (each later transaction there would walk them)', async () => {
    seedBatch(db, '2025-11-25', Array.from({ length: 120 }, (_, i) => ({ title: `Reinforcement learning study ${i}` })));
    seedSubscribers(db, Array.from({ length: 400 }, (_, i) => ({ email: `rl${i}@example.com`, topics: ['reinforcement learning', `study ${i}`] })));
    const tempPages = () => db.pragma('temp.page_count', { simple: true }) as number;
    let highest = 0;
    matchPending(db);
    // Lists per topic set: the path whose run-long temp table (plan_groups) grows with the topic sets.
    const r = await planDigests(db, { clock, mode: 'now', lists: 'per-topic-set', chunkSize: 400, onChunk: () => (highest = Math.max(highest, tempPages())) });
    expect(r.planned).toBe(400);
    expect(highest).toBeGreaterThan(40); // the chunk's temp tables did grow (400 topic sets' lists)
    expect(tempPages()).toBeLessThanOrEqual(8); // and gave their pages back: root pages, the pointer map
  });

  describe("due mode: each subscriber's own slot", () => {
    it('Asia/Tokyo and America/New_York get their digest at their own 07:00, dated their own day', async () => {
      seedBatch(db, '2025-11-25', [{ title: 'World models' }]);
      const [tokyo, ny] = seedSubscribers(db, [
        { email: 'tokyo@example.com', topics: ['world models'], timezone: 'Asia/Tokyo', deliveryHour: 7 },
        // New York already had its slot on its local 2025-11-24.
        { email: 'ny@example.com', topics: ['world models'], timezone: 'America/New_York', deliveryHour: 7, lastSlot: '2025-11-24' },
      ]);
      expect((await plan(true, '2025-11-24T21:00:00Z')).planned).toBe(0); // Tokyo 06:00, New York 16:00 (done today)
      expect((await plan(true, '2025-11-24T22:00:00Z')).planned).toBe(1); // Tokyo 07:00 on the 25th
      expect(rowsOf(tokyo!.id)[0]!.edition).toBe('2025-11-25');
      markSent(rowsOf(tokyo!.id)[0]!.id);
      expect((await plan(true, '2025-11-25T11:00:00Z')).planned).toBe(0); // New York 06:00 EST
      expect((await plan(true, '2025-11-25T12:00:00Z')).planned).toBe(1); // New York 07:00 EST
      expect(rowsOf(ny!.id)[0]!.edition).toBe('2025-11-25');
      expect(db.prepare(`SELECT email, last_slot FROM subscribers ORDER BY id`).all()).toEqual([
        { email: 'tokyo@example.com', last_slot: '2025-11-25' },
        { email: 'ny@example.com', last_slot: '2025-11-25' },
      ]);
      // Later the same local day: nothing more, even with new papers.
      seedBatch(db, '2025-11-25', [{ title: 'World models again' }], 'other-source');
      expect((await plan(true, '2025-11-25T20:00:00Z')).planned).toBe(0);
      // Tokyo's next morning brings them.
      expect((await plan(true, '2025-11-25T22:00:00Z')).planned).toBe(1);
      expect(rowsOf(tokyo!.id)[1]!.edition).toBe('2025-11-26');
    });

    it('catches up later the same day when the hour was missed; a day with no tick merges into the next', async () => {
      seedBatch(db, '2025-11-25', [{ title: 'Speculative decoding' }]);
      const sub = seedSubscriber(db, { email: 'late@example.com', topics: ['speculative decoding'], deliveryHour: 7 });
      expect((await plan(true, '2025-11-25T15:30:00Z')).planned).toBe(1); // no tick at 07:00: 15:30 catches up
      expect(rowsOf(sub.id)[0]!.edition).toBe('2025-11-25');
      markSent(rowsOf(sub.id)[0]!.id);
      seedBatch(db, '2025-11-26', [{ title: 'Speculative decoding with drafts' }]);
      seedBatch(db, '2025-11-27', [{ title: 'Speculative decoding at scale' }]);
      // Nothing ran on the 26th at all: the 27th's slot holds both days.
      expect((await plan(true, '2025-11-27T07:05:00Z')).planned).toBe(1);
      expect(rowsOf(sub.id)[1]).toMatchObject({ edition: '2025-11-27', paper_count: 2 });
    });

    it('follows daylight saving time (New York 07:00 is 11:00 UTC after the March change)', async () => {
      seedBatch(db, '2026-03-09', [{ title: 'Reward models' }]);
      const ny = seedSubscriber(db, {
        email: 'dst@example.com',
        topics: ['reward'],
        timezone: 'America/New_York',
        deliveryHour: 7,
        lastSlot: '2026-03-08',
      });
      expect((await plan(true, '2026-03-09T10:00:00Z')).planned).toBe(0); // 06:00 EDT
      expect((await plan(true, '2026-03-09T11:00:00Z')).planned).toBe(1); // 07:00 EDT (would be 06:00 in winter)
      expect(rowsOf(ny.id)).toHaveLength(1);
    });

    it('sends weekly digests on the chosen weekday only; the rest of the week waits', async () => {
      seedBatch(db, '2025-11-23', [{ title: 'Retrieval augmented generation' }]);
      const monday = seedSubscriber(db, { email: 'monday@example.com', topics: ['retrieval'], frequency: 'weekly', weeklyDay: 1, deliveryHour: 7 });
      expect((await plan(true, '2025-11-23T09:00:00Z')).planned).toBe(0); // Sunday
      expect((await plan(true, '2025-11-24T06:00:00Z')).planned).toBe(0); // Monday, before 07:00
      expect((await plan(true, '2025-11-24T07:00:00Z')).planned).toBe(1); // Monday 07:00
      expect(rowsOf(monday.id)[0]!.edition).toBe('2025-11-24');
      markSent(rowsOf(monday.id)[0]!.id);
      seedBatch(db, '2025-11-25', [{ title: 'Retrieval at scale' }]);
      expect((await plan(true, '2025-11-25T09:00:00Z')).planned).toBe(0); // Tuesday: weekly readers wait
      expect((await plan(true, '2025-12-01T07:00:00Z')).planned).toBe(1); // next Monday
      expect(rowsOf(monday.id)[1]!.edition).toBe('2025-12-01');
    });

    it("'now' mode treats now as everyone's delivery time, still once per slot", async () => {
      seedBatch(db, '2025-11-25', [{ title: 'Mixture of experts' }]);
      seedSubscribers(db, [
        { email: 'a@example.com', topics: ['experts'], timezone: 'Asia/Tokyo', deliveryHour: 23 },
        { email: 'b@example.com', topics: ['experts'], frequency: 'weekly', weeklyDay: 5 },
      ]);
      expect((await plan(true, '2025-11-25T03:00:00Z')).planned).toBe(0);
      expect((await plan(false, '2025-11-25T03:00:00Z')).planned).toBe(2);
      seedBatch(db, '2025-11-25', [{ title: 'Mixture of experts, sparse' }], 'later');
      expect((await plan(false, '2025-11-25T04:00:00Z')).planned).toBe(0); // a second manual run: same slots
      expect((await plan(true, '2025-11-25T14:00:00Z')).planned).toBe(0); // Tokyo 23:00 on the 25th: slot used
    });
  });
});
