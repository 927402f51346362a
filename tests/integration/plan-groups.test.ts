// Planning once per topic set (src/plan/groups.ts) must give every subscriber exactly the digest the
// per-subscriber plan gives: the same rows, the same papers in the same order, each paper with the same
// topics named in the subscriber's own order, and the same suggestions. Checked on one real SQLite file
// copied twice (VACUUM INTO), planned both ways, over two days (the second with watermarks that differ
// between subscribers), with muted topics, topics typed in different orders, tied upvotes, caps, paused
// readers, open rows, time zones and feedback profiles; and against the DESIGN.md order computed in plain
// JavaScript from the matches.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { openDatabase, type Db } from '../../src/db/open.ts';
import { recordVote } from '../../src/feedback/profile.ts';
import { planDigests, type PlanOptions } from '../../src/plan/planner.ts';
import { matchPending } from '../../src/match/matcher.ts';
import { digestRows, rowItems, seedBatch, seedSubscribers, tempDatabase, type SeedSubscriber, type TempDb } from '../helpers/seed.ts';

const sample = (JSON.parse(readFileSync(new URL('../../samples/daily-papers-sample.json', import.meta.url), 'utf8')) as {
  papers: Array<{ title: string; abstract: string }>;
}).papers;

/** Topics that each match several of the sample papers (and overlap: a paper often matches two or three). */
const POOL = ['agents', 'reward', 'reasoning', 'policy', 'game', 'human', 'data', 'multi-agent', 'optimization', 'llms OR language', '"reinforcement learning"', 'benchmark'];

function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let t: TempDb;
let copies: TempDb[] = [];
const clock = new ManualClock('2025-11-25T12:00:00Z');
beforeEach(() => {
  t = tempDatabase();
  clock.set('2025-11-25T12:00:00Z');
});
afterEach(() => {
  for (const c of copies) c.db.close();
  copies = [];
  t.cleanup();
});

/** The same database as `t.db`, in a second file. */
function copyOf(db: Db, name: string): Db {
  const path = join(t.dir, `${name}.sqlite`);
  db.exec(`VACUUM INTO '${path}'`);
  const copy = openDatabase(path);
  copies.push({ db: copy, path, dir: t.dir, cleanup: () => copy.close() });
  return copy;
}

interface Planned {
  edition: string;
  status: string;
  from: number;
  to: number;
  count: number;
  items: Array<{ paperId: number; topicIds: number[] }>;
  suggestions: number[];
}

/** Every subscriber's ledger rows and slot, as a reader would get them. */
function ledger(db: Db): Map<number, { lastSlot: string | null; rows: Planned[] }> {
  const out = new Map<number, { lastSlot: string | null; rows: Planned[] }>();
  for (const s of db.prepare(`SELECT id, last_slot FROM subscribers ORDER BY id`).all() as { id: number; last_slot: string | null }[]) {
    out.set(s.id, { lastSlot: s.last_slot, rows: [] });
  }
  const suggestions = db.prepare(`SELECT paper_id FROM digest_suggestions WHERE digest_id = ? ORDER BY score DESC, paper_id`).pluck();
  for (const r of digestRows(db)) {
    out.get(r.subscriber_id)!.rows.push({
      edition: r.edition,
      status: r.status,
      from: r.from_paper,
      to: r.to_paper,
      count: r.paper_count,
      items: rowItems(r, db),
      suggestions: suggestions.all(r.id) as number[],
    });
  }
  return out;
}

/** DESIGN.md's order from the matches, for a subscriber without a profile: their unmuted topics' papers above the watermark. */
function expectedItems(db: Db, subscriberId: number, from: number, to: number): Array<{ paperId: number; topicIds: number[] }> {
  const topics = db.prepare(`SELECT id, query_id, muted FROM topics WHERE subscriber_id = ? ORDER BY position, id`).all(subscriberId) as {
    id: number;
    query_id: number;
    muted: number;
  }[];
  const byPaper = new Map<number, { topicIds: number[]; best: number }>();
  for (const topic of topics) {
    if (topic.muted) continue;
    const matches = db.prepare(`SELECT paper_id, score FROM query_matches WHERE query_id = ? AND paper_id > ? AND paper_id <= ?`).all(topic.query_id, from, to) as {
      paper_id: number;
      score: number;
    }[];
    for (const m of matches) {
      const item = byPaper.get(m.paper_id) ?? { topicIds: [], best: Infinity };
      item.topicIds.push(topic.id);
      item.best = Math.min(item.best, m.score);
      byPaper.set(m.paper_id, item);
    }
  }
  const upvotes = db.prepare(`SELECT upvotes FROM papers WHERE id = ?`).pluck();
  return [...byPaper]
    .map(([paperId, i]) => ({ paperId, topicIds: i.topicIds, best: i.best, n: i.topicIds.length, up: upvotes.get(paperId) as number }))
    .sort((a, b) => b.n - a.n || b.up - a.up || a.best - b.best || a.paperId - b.paperId)
    .map(({ paperId, topicIds }) => ({ paperId, topicIds }));
}

/** 70 sample papers over three days, upvotes with many ties; 260 subscribers drawn from POOL. */
function seedWorld(db: Db): Array<{ id: number; profiled: boolean }> {
  const random = seeded(7);
  const day = (date: string, from: number, to: number) =>
    seedBatch(
      db,
      date,
      sample.slice(from, to).map((p, i) => ({
        key: `2511.${String(from + i).padStart(5, '0')}`,
        title: p.title,
        abstract: p.abstract,
        upvotes: (from + i) % 4 === 0 ? 0 : Math.floor(random() * 6),
      })),
      'sample',
    ).paperIds;
  const day1 = day('2025-11-24', 0, 25);
  day('2025-11-25', 25, 50);
  const draws: SeedSubscriber[] = [];
  for (let i = 0; i < 260; i++) {
    // Readers who vote (every eighth, below) have one topic: room for suggestions outside it.
    const n = i % 8 === 3 ? 1 : 1 + Math.floor(random() * 4);
    // Few distinct topic sets, typed in different orders: many subscribers share a group.
    const start = Math.floor(random() * 5);
    const chosen = [...new Set(Array.from({ length: n }, (_, k) => POOL[(start + k * 3) % POOL.length]!))].sort(() => random() - 0.5);
    draws.push({
      email: `r${i}@example.com`,
      topics: chosen.map((text) => ({ text, muted: random() < 0.15 })),
      timezone: i % 7 === 0 ? 'Asia/Tokyo' : i % 11 === 0 ? 'America/New_York' : 'UTC',
      watermark: i % 5 === 0 ? day1[10]! : i % 9 === 0 ? day1[24]! : 0,
      status: i % 37 === 0 ? 'pending' : 'confirmed',
    });
  }
  const subs = seedSubscribers(db, draws);
  db.prepare(`UPDATE subscribers SET max_papers = 3 WHERE id % 6 = 0`).run();
  db.prepare(`UPDATE subscribers SET suggestions = 0 WHERE id % 4 = 1`).run();
  db.prepare(`UPDATE subscribers SET paused_until = '2025-12-31T00:00:00Z' WHERE id % 23 = 0`).run();
  // Votes from the email, for reader models: every eighth subscriber liked two of day one's game papers and
  // disliked another paper; their one topic leaves other game papers to suggest.
  const games = day1.filter((_, k) => /\bgames?\b/i.test(`${sample[k]!.title} ${sample[k]!.abstract}`));
  const profiled = new Set<number>();
  subs.forEach((s, i) => {
    if (i % 8 !== 3) return;
    profiled.add(s.id);
    recordVote(db, s.id, games[i % games.length]!, 1, clock.now());
    recordVote(db, s.id, games[(i + 1) % games.length]!, 1, clock.now());
    recordVote(db, s.id, day1[(i * 5) % day1.length]!, -1, clock.now());
  });
  // An open row from an earlier run: that subscriber gets no new row.
  db.prepare(
    `INSERT INTO digests (subscriber_id, edition, status, from_paper, to_paper, topic_ids, items, paper_count, planned_at)
     VALUES (?, '2025-11-24', 'retry', 0, 0, '', unhex(''), 0, '2025-11-24T07:00:00Z')`,
  ).run(subs[2]!.id);
  return subs.map((s) => ({ id: s.id, profiled: profiled.has(s.id) }));
}

/** What the sender does after delivering: the row is sent and the watermark moves to its end. */
function deliverAll(db: Db): void {
  db.prepare(`UPDATE subscribers SET watermark = (SELECT max(d.to_paper) FROM digests d WHERE d.subscriber_id = subscribers.id AND d.status = 'planned')
              WHERE id IN (SELECT subscriber_id FROM digests WHERE status = 'planned')`).run();
  db.prepare(`UPDATE digests SET status = 'sent' WHERE status = 'planned'`).run();
}

describe('planning once per topic set', () => {
  it('gives every subscriber the digest the per-subscriber plan gives, day after day', async () => {
    const subscribers = seedWorld(t.db);
    matchPending(t.db);
    const grouped = copyOf(t.db, 'grouped');
    const alone = copyOf(t.db, 'alone');
    const perQuery = copyOf(t.db, 'per-query');
    // Small chunks and a tiny group table: groups are reused across chunks and the table is emptied mid-run.
    const plan = (db: Db, o: Partial<PlanOptions>) => planDigests(db, { clock, mode: 'now', chunkSize: 13, ...o });

    for (const date of ['2025-11-25T12:00:00Z', '2025-11-26T12:00:00Z']) {
      clock.set(date);
      const a = await plan(grouped, { groupCacheMax: 9, lists: 'per-topic-set' });
      const b = await plan(alone, { perSubscriber: true });
      const c = await plan(perQuery, { lists: 'per-query' });
      expect(a).toEqual(b);
      expect(c).toEqual(b);
      const got = ledger(grouped);
      expect(got).toEqual(ledger(alone));
      expect(ledger(perQuery)).toEqual(got);
      expect(perQuery.prepare(`SELECT count(*) FROM digests WHERE status = 'planned' AND substr(items, 1, 1) = x'01'`).pluck().get()).toBeGreaterThan(100);

      // The test means something: most subscribers got papers, through shared groups and on their own.
      const planned = [...got.values()].filter((s) => s.rows.some((r) => r.status === 'planned'));
      expect(planned.length).toBeGreaterThan(150);
      expect(planned.some((s) => s.rows.some((r) => r.suggestions.length > 0))).toBe(true);
      // Shared lists whose bits are mapped to the reader's own (a set typed in another order, muted topics).
      const mapped = `SELECT count(*) FROM digests WHERE status = 'planned' AND substr(items, 1, 1) = x'00'`;
      expect(grouped.prepare(mapped).pluck().get()).toBeGreaterThan(20);
      expect(alone.prepare(mapped).pluck().get()).toBe(0);

      // And it is DESIGN.md's order: more topics matched, then upvotes, then relevance (no profile).
      for (const s of subscribers.filter((x) => !x.profiled)) {
        for (const row of got.get(s.id)!.rows.filter((r) => r.status === 'planned')) {
          expect(row.items).toEqual(expectedItems(grouped, s.id, row.from, row.to));
          expect(row.count).toBe(row.items.length);
        }
      }
      // Delivered; day three's papers arrive in both files alike (same ids) and are matched.
      for (const db of [grouped, alone, perQuery]) {
        deliverAll(db);
        seedBatch(
          db,
          '2025-11-26',
          sample.slice(50, 70).map((p, i) => ({ key: `2511.${String(50 + i).padStart(5, '0')}`, title: p.title, abstract: p.abstract, upvotes: i % 3 })),
          'sample',
        );
        matchPending(db);
      }
    }
  });

  it('names the matched topics in the subscriber\'s order when they typed a shared set in another order', async () => {
    const { paperIds } = seedBatch(t.db, '2025-11-25', [
      { title: 'Robot grasping with diffusion policies', upvotes: 3 },
      { title: 'Diffusion for video', upvotes: 9 },
      { title: 'Robot navigation', upvotes: 1 },
    ]);
    const [first, second, third] = seedSubscribers(t.db, [
      { email: 'a@example.com', topics: ['diffusion', 'robot'] },
      { email: 'b@example.com', topics: ['robot', 'diffusion'] },
      { email: 'c@example.com', topics: [{ text: 'quantum', muted: true }, 'robot', { text: 'speech', muted: true }, 'diffusion'] },
    ]);
    matchPending(t.db);
    await planDigests(t.db, { clock, mode: 'now', lists: 'per-topic-set' });
    const rows = digestRows(t.db);
    expect(rows).toHaveLength(3);
    const [a, b, c] = [first, second, third].map((s) => rowItems(rows.find((r) => r.subscriber_id === s!.id)!));
    const order = [paperIds[0], paperIds[1], paperIds[2]];
    expect(a!.map((i) => i.paperId)).toEqual(order);
    expect(b!.map((i) => i.paperId)).toEqual(order);
    expect(c!.map((i) => i.paperId)).toEqual(order);
    expect(a![0]!.topicIds).toEqual(first!.topicIds);
    expect(b![0]!.topicIds).toEqual(second!.topicIds);
    expect(c![0]!.topicIds).toEqual([third!.topicIds[1], third!.topicIds[3]]);
    expect(c![1]!.topicIds).toEqual([third!.topicIds[3]]);
    // One list, three rows: the first subscriber's bits are the group's, so their bytes are the plain list.
    expect(rows.find((r) => r.subscriber_id === first!.id)!.items![0]).not.toBe(0);
    expect(rows.find((r) => r.subscriber_id === second!.id)!.items![0]).toBe(0);
  });
});
