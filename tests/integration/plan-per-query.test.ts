// Planning once per query (src/plan/query-lists.ts, the ledger's reference rows in src/ledger/lists.ts)
// must send every reader the email the per-subscriber plan sends, byte for byte: on a diverse population
// (hundreds of readers, phrases drawn with a skew from the sample's own words, so a few are shared by many
// and most by one or two; muted topics, different watermarks, caps, readers with a model), over two days.
// And retention drops a query list once no ledger row refers to it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock, systemClock } from '../../src/clock.ts';
import { openDatabase, type Db } from '../../src/db/open.ts';
import { recordVote } from '../../src/feedback/profile.ts';
import { pruneLedger } from '../../src/ledger/index.ts';
import { Links } from '../../src/links.ts';
import { matchPending } from '../../src/match/matcher.ts';
import { planDigests, type PlanOptions } from '../../src/plan/planner.ts';
import { createRenderer, type Renderer } from '../../src/render/render.ts';
import { DigestLoader } from '../../src/render/view.ts';
import { Tokens } from '../../src/tokens.ts';
import { digestRows, rowItems, seedBatch, seedSubscribers, tempDatabase, type SeedSubscriber, type TempDb } from '../helpers/seed.ts';

const sample = (JSON.parse(readFileSync(new URL('../../samples/daily-papers-sample.json', import.meta.url), 'utf8')) as {
  papers: Array<{ title: string; abstract: string }>;
}).papers;

function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The sample's words of 6+ letters by how many papers use them: ~the phrases real readers type. */
function vocabulary(): string[] {
  const df = new Map<string, number>();
  for (const p of sample) for (const w of new Set(`${p.title} ${p.abstract}`.toLowerCase().match(/[a-z]{6,}/g) ?? [])) df.set(w, (df.get(w) ?? 0) + 1);
  return [...df].filter(([, n]) => n >= 2).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([w]) => w).slice(0, 400);
}

let t: TempDb;
let copies: Db[] = [];
let renderer: Renderer;
const clock = new ManualClock('2025-11-25T12:00:00Z');
beforeAll(async () => {
  renderer = await createRenderer();
});
afterAll(() => undefined);
beforeEach(() => {
  t = tempDatabase();
  clock.set('2025-11-25T12:00:00Z');
});
afterEach(() => {
  for (const c of copies) c.close();
  copies = [];
  t.cleanup();
});

function copyOf(db: Db, name: string): Db {
  const path = join(t.dir, `${name}.sqlite`);
  db.exec(`VACUUM INTO '${path}'`);
  const copy = openDatabase(path);
  copies.push(copy);
  return copy;
}

const day = (db: Db, date: string, from: number, to: number, upvotes: (i: number) => number) =>
  seedBatch(
    db,
    date,
    sample.slice(from, to).map((p, i) => ({ key: `2511.${String(from + i).padStart(5, '0')}`, title: p.title, abstract: p.abstract, upvotes: upvotes(from + i) })),
    'sample',
  ).paperIds;

/** 400 readers of 1-4 phrases drawn with a Zipf-like skew; every tenth votes (a model), some muted, caps. */
function seedWorld(db: Db): void {
  const random = seeded(41);
  const words = vocabulary();
  const day1 = day(db, '2025-11-24', 0, 25, (i) => (i % 4 === 0 ? 0 : Math.floor(random() * 6)));
  day(db, '2025-11-25', 25, 50, (i) => i % 3);
  const zipf = () => words[Math.min(words.length - 1, Math.floor(words.length ** random()) - 1)]!;
  const draws: SeedSubscriber[] = [];
  for (let i = 0; i < 400; i++) {
    const n = 1 + Math.floor(random() * 4);
    const chosen = [...new Set(Array.from({ length: n }, zipf))];
    draws.push({
      email: `d${i}@example.com`,
      topics: chosen.map((text) => ({ text, muted: random() < 0.15 })),
      timezone: i % 7 === 0 ? 'Asia/Tokyo' : 'UTC',
      watermark: i % 5 === 0 ? day1[10]! : i % 9 === 0 ? day1[24]! : 0,
    });
  }
  const subs = seedSubscribers(db, draws);
  db.prepare(`UPDATE subscribers SET max_papers = 3 WHERE id % 6 = 0`).run();
  db.prepare(`UPDATE subscribers SET suggestions = 0 WHERE id % 4 = 1`).run();
  subs.forEach((s, i) => {
    if (i % 10 !== 3) return;
    recordVote(db, s.id, day1[i % 25]!, 1, clock.now());
    recordVote(db, s.id, day1[(i + 7) % 25]!, 1, clock.now());
    recordVote(db, s.id, day1[(i * 3) % 25]!, -1, clock.now());
    // Half of them keep only what their model ranks high: the model pass rewrites their row.
    if (i % 20 === 3) db.prepare(`UPDATE subscribers SET model_only = 1 WHERE id = ?`).run(s.id);
  });
}

/** Every planned row's email as the sender renders it, by subscriber. */
function emails(db: Db): Map<number, { id: number; html: string; text: string; subject: string; count: number; items: unknown }> {
  const loader = new DigestLoader(db, new Links('https://digest.example.org', new Tokens('k'.repeat(40)), systemClock));
  const out = new Map<number, { id: number; html: string; text: string; subject: string; count: number; items: unknown }>();
  for (const r of digestRows(db).filter((x) => x.status === 'planned')) {
    const { view } = loader.load(r.id, { papers: renderer.emailPapers })!;
    const mail = renderer.digest(view);
    out.set(r.subscriber_id, { id: r.id, html: mail.html, text: mail.text, subject: mail.subject, count: r.paper_count, items: rowItems(r, db) });
    mail.release?.();
  }
  return out;
}

function deliverAll(db: Db): void {
  db.prepare(`UPDATE subscribers SET watermark = (SELECT max(d.to_paper) FROM digests d WHERE d.subscriber_id = subscribers.id AND d.status = 'planned')
              WHERE id IN (SELECT subscriber_id FROM digests WHERE status = 'planned')`).run();
  db.prepare(`UPDATE digests SET status = 'sent' WHERE status = 'planned'`).run();
}

describe('planning once per query', () => {
  it('sends every reader of a diverse population the email the per-subscriber plan sends, day after day', async () => {
    seedWorld(t.db);
    matchPending(t.db);
    const perQuery = copyOf(t.db, 'per-query');
    const alone = copyOf(t.db, 'alone');
    const plan = (db: Db, o: Partial<PlanOptions>) => planDigests(db, { clock, mode: 'now', chunkSize: 17, ...o });
    for (const [n, date] of ['2025-11-25T12:00:00Z', '2025-11-26T12:00:00Z'].entries()) {
      clock.set(date);
      expect(await plan(perQuery, { lists: 'per-query' })).toEqual(await plan(alone, { perSubscriber: true }));
      const got = emails(perQuery);
      const want = emails(alone);
      expect(got.size).toBeGreaterThan(n === 0 ? 250 : 100);
      expect([...got.keys()]).toEqual([...want.keys()]);
      for (const [sid, mail] of want) expect(got.get(sid), `subscriber ${sid}`).toEqual(mail);

      // The test means something: shared and unique phrases, references, rows a model rewrote, suggestions.
      const sets = perQuery.prepare(`SELECT count(DISTINCT q) FROM (SELECT group_concat(query_id) AS q FROM topics GROUP BY subscriber_id)`).pluck().get() as number;
      expect(sets).toBeGreaterThan(200);
      const refs = perQuery.prepare(`SELECT count(*) FROM digests WHERE status = 'planned' AND substr(items, 1, 1) = x'01'`).pluck().get() as number;
      expect(refs).toBeGreaterThan(got.size / 2);
      expect(refs).toBeLessThan(got.size); // readers with a model: their own order, a plain list
      expect(perQuery.prepare(`SELECT count(*) FROM digest_suggestions`).pluck().get()).toBeGreaterThan(0);
      expect(perQuery.prepare(`SELECT count(DISTINCT query_id) = count(*) FROM query_lists WHERE planned_at = ?`).pluck().get(date)).toBe(1);

      for (const db of [perQuery, alone]) {
        deliverAll(db);
        day(db, '2025-11-26', 50, 70, (i) => i % 3);
        matchPending(db);
      }
    }
  });

  it('a plan that fails while writing a chunk\'s suggestions leaves its readers without a row, and the next plan gives each one, as an uninterrupted plan does', async () => {
    seedWorld(t.db);
    matchPending(t.db);
    const clean = copyOf(t.db, 'clean');
    const plan = (db: Db) => planDigests(db, { clock, mode: 'now', chunkSize: 17, lists: 'per-query' });
    // The rows of readers with a model are written final, then their suggestions: a failure there (a full
    // disk, a crash) must take the chunk's rows with it, or its readers would keep a row without suggestions.
    // It fails once 20 suggestions are written: in a later chunk, the earlier ones committed.
    t.db.exec(`CREATE TEMP TRIGGER fail_suggestions BEFORE INSERT ON digest_suggestions
               WHEN (SELECT count(*) FROM digest_suggestions) >= 20 BEGIN SELECT RAISE(ABORT, 'disk full'); END`);
    await expect(plan(t.db)).rejects.toThrow(/disk full/);
    const rowsOf = (db: Db) => db.prepare(`SELECT subscriber_id, count(*) AS n FROM digests GROUP BY subscriber_id`).all() as Array<{ subscriber_id: number; n: number }>;
    const before = rowsOf(t.db);
    expect(before.length).toBeGreaterThan(0); // the chunks before the failure stand
    expect(t.db.prepare(`SELECT count(*) FROM digest_suggestions`).pluck().get()).toBeLessThanOrEqual(20);
    // No row of the failed chunk survived: every reader with a row had their slot run (the chunk committed).
    expect(t.db.prepare(`SELECT count(*) FROM digests d JOIN subscribers s ON s.id = d.subscriber_id WHERE s.last_slot IS NULL`).pluck().get()).toBe(0);
    t.db.exec(`DROP TRIGGER fail_suggestions`);

    await plan(t.db);
    await plan(clean);
    expect(rowsOf(t.db).every((r) => r.n === 1)).toBe(true);
    const got = emails(t.db);
    const want = emails(clean);
    expect(got.size).toBeGreaterThan(before.length);
    expect([...got.keys()]).toEqual([...want.keys()]);
    for (const [sid, mail] of want) expect(got.get(sid), `subscriber ${sid}`).toEqual({ ...mail, id: got.get(sid)!.id });
    expect(t.db.prepare(`SELECT count(*) FROM digest_suggestions`).pluck().get()).toBe(clean.prepare(`SELECT count(*) FROM digest_suggestions`).pluck().get());
  });

  it('sends a reader whose first papers were deleted since planning the email of a per-subscriber row: the next papers in their place, the rest counted', async () => {
    seedWorld(t.db);
    matchPending(t.db);
    const perQuery = copyOf(t.db, 'per-query');
    const alone = copyOf(t.db, 'alone');
    await planDigests(perQuery, { clock, mode: 'now', chunkSize: 17, lists: 'per-query' });
    await planDigests(alone, { clock, mode: 'now', chunkSize: 17, perSubscriber: true });
    // The loader sorts only the papers an email shows (ListReader.walk): rows longer than that, whose
    // shown papers include deleted ones, must still show the next papers in display order.
    const long = perQuery.prepare(`SELECT count(*) FROM digests WHERE substr(items, 1, 1) = x'01' AND paper_count > ?`).pluck().get(renderer.emailPapers) as number;
    expect(long).toBeGreaterThan(20);
    // The most upvoted papers come first in rows of one topic (display order: topics matched, then upvotes).
    const top = t.db.prepare(`SELECT id FROM papers ORDER BY upvotes DESC, id LIMIT 4`).pluck().all() as number[];
    for (const db of [perQuery, alone]) {
      db.pragma('foreign_keys = OFF');
      for (const id of top) db.prepare(`DELETE FROM papers WHERE id = ?`).run(id);
    }
    const got = emails(perQuery);
    const want = emails(alone);
    expect([...got.keys()]).toEqual([...want.keys()]);
    for (const [sid, mail] of want) expect(got.get(sid), `subscriber ${sid}`).toEqual(mail);
  });

  it('keeps a query list while a row refers to it, and prunes it with the last one', async () => {
    const { paperIds } = seedBatch(t.db, '2025-11-25', [{ title: 'Robot grasping' }, { title: 'Robot navigation' }, { title: 'Diffusion video' }]);
    seedSubscribers(t.db, [
      { email: 'a@example.com', topics: ['robot', 'diffusion'] },
      { email: 'b@example.com', topics: ['robot'] },
    ]);
    matchPending(t.db);
    await planDigests(t.db, { clock, mode: 'now', lists: 'per-query' });
    const lists = () => t.db.prepare(`SELECT count(*) FROM query_lists`).pluck().get() as number;
    expect(lists()).toBe(2);
    const [a, b] = digestRows(t.db);
    expect(rowItems(a!, t.db).map((i) => i.paperId).sort()).toEqual([...paperIds].sort());
    expect(rowItems(b!, t.db).map((i) => i.paperId).sort()).toEqual(paperIds.slice(0, 2).sort());

    // 40 days later: one row settled (its list pruned), the other still retrying (its items kept): lists stay.
    t.db.prepare(`UPDATE digests SET status = 'sent' WHERE id = ?`).run(a!.id);
    t.db.prepare(`UPDATE digests SET status = 'retry' WHERE id = ?`).run(b!.id);
    clock.set('2026-01-05T12:00:00Z');
    expect(await pruneLedger(t.db, clock, 30)).toBe(1);
    expect(lists()).toBe(2);
    expect(rowItems(digestRows(t.db)[1]!, t.db)).toHaveLength(2);
    t.db.prepare(`UPDATE digests SET status = 'failed' WHERE id = ?`).run(b!.id);
    expect(await pruneLedger(t.db, clock, 30)).toBe(1);
    expect(lists()).toBe(0);
  });
});
