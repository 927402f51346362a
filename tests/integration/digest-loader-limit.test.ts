// An email looks at its first papers only (5 in full, then 20 compact lines: Renderer.emailPapers); the loader
// makes only those (DigestLoader LoadOptions.papers) and counts the rest. The email must read exactly as
// when every paper is made: same subject (the topics of papers past the limit named too), counts, button.
// Real SQLite file, real renderer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.ts';
import { Links } from '../../src/links.ts';
import { encodeItems } from '../../src/ledger/items.ts';
import { createRenderer, type Renderer } from '../../src/render/render.ts';
import { DigestLoader } from '../../src/render/view.ts';
import { Tokens } from '../../src/tokens.ts';
import { seedBatch, seedSubscriber, tempDatabase, type TempDb } from '../helpers/seed.ts';

let t: TempDb;
let renderer: Renderer;
const digests: Record<string, number> = {};

beforeAll(async () => {
  t = tempDatabase();
  renderer = await createRenderer();
  const { paperIds } = seedBatch(
    t.db,
    '2025-11-25',
    Array.from({ length: 400 }, (_, i) => ({ title: `Paper ${i} on agents`, authors: [`Author ${i}`] })),
  );
  const s = seedSubscriber(t.db, { email: 'reader@example.org', topics: ['agents', 'robots', 'graphs'] });
  const insert = (count: number, edition: string) => {
    // Topic 0 on every paper; topic 1 only on papers past the first 100; topic 2 only on the very last.
    const items = encodeItems(
      paperIds.slice(0, count).map((paperId, i) => ({ paperId, topicBits: i === count - 1 ? [0, 2] : i >= 100 ? [0, 1] : [0] })),
      0,
    );
    return Number(
      t.db
        .prepare(
          `INSERT INTO digests (subscriber_id, edition, status, from_paper, to_paper, topic_ids, items, paper_count, planned_at)
           VALUES (?, ?, 'planned', 0, ?, ?, ?, ?, ?)`,
        )
        .run(s.id, edition, paperIds.at(-1), s.topicIds.join(','), items, count, new Date().toISOString()).lastInsertRowid,
    );
  };
  for (const [k, n] of [10, 60, 400].entries()) digests[n] = insert(n, `2025-11-2${k + 3}`);
});
afterAll(() => t.cleanup());

describe('the loader makes only the papers an email can show', () => {
  it('reads the same as with every paper made, for digests under, around and far over the limit', () => {
    const loader = new DigestLoader(t.db, new Links('https://digest.example.org', new Tokens('x'.repeat(40)), systemClock));
    const limit = renderer.emailPapers!;
    expect(limit).toBe(25);
    for (const n of [10, 60, 400]) {
      const all = loader.load(digests[n]!)!.view;
      const cut = loader.load(digests[n]!, { papers: limit })!.view;
      expect(all.papers).toHaveLength(n);
      expect(cut.papers).toHaveLength(Math.min(n, limit));
      expect(cut.paperCount ?? cut.papers.length).toBe(n);
      const a = renderer.digest(all);
      const b = renderer.digest(cut);
      expect(b.subject).toBe(a.subject);
      expect(b.html).toBe(a.html);
      expect(b.text).toBe(a.text);
      expect(b.shownPapers).toBe(a.shownPapers);
      if (n === 400) {
        // The count and the topics of papers never made: "400 new papers on agents, robots and more".
        expect(b.subject).toMatch(/^400 new papers on agents, robots and more/);
        expect(b.text).toContain('375 more papers in this digest');
      }
      a.release?.();
      b.release?.();
    }
  });
});

describe('papers past the email’s, counted by their days', () => {
  it('the intro names the same days whether a paper was read before or not, a day that is no date included', () => {
    // 120 papers over four batches; the earliest and the latest days only on papers past the email's 25,
    // and one batch whose day is not a date (stored as given: the loader must not drop or misorder it).
    const batches = [
      { date: '2025-12-03', n: 60 },
      { date: '2025-11-30', n: 30 },
      { date: '2025-12-05', n: 20 },
      { date: '2025-12-0x', n: 10 },
    ];
    const ids: number[] = [];
    for (const b of batches) ids.push(...seedBatch(t.db, b.date, Array.from({ length: b.n }, (_, i) => ({ title: `Day ${b.date} paper ${i} on agents` }))).paperIds);
    const s = seedSubscriber(t.db, { email: 'days@example.org', topics: ['agents'] });
    const from = Math.min(...ids) - 1;
    const id = Number(
      t.db
        .prepare(
          `INSERT INTO digests (subscriber_id, edition, status, from_paper, to_paper, topic_ids, items, paper_count, planned_at)
           VALUES (?, '2025-12-06', 'planned', ?, ?, ?, ?, ?, ?)`,
        )
        .run(s.id, from, Math.max(...ids), s.topicIds.join(','), encodeItems(ids.map((paperId) => ({ paperId, topicBits: [0] })), from), ids.length, new Date().toISOString())
        .lastInsertRowid,
    );
    const links = new Links('https://digest.example.org', new Tokens('x'.repeat(40)), systemClock);
    const every = new DigestLoader(t.db, links, { paperCache: 0 }).load(id)!.view;
    expect(every.paperDays).toEqual({ first: '2025-11-30', last: '2025-12-0x' });
    // One loader, as in a send run: the first load reads every paper, the second finds the 70 past the
    // email's in its day index; a third, with the index only (the cache holds 10 papers), the same.
    const run = new DigestLoader(t.db, links);
    const small = new DigestLoader(t.db, links, { paperCache: 10 });
    for (const loader of [run, run, small, small]) {
      const cut = loader.load(id, { papers: renderer.emailPapers })!.view;
      expect(cut.papers).toHaveLength(renderer.emailPapers!);
      expect([cut.paperCount, cut.paperDays]).toEqual([120, every.paperDays]);
    }
    const mail = renderer.digest(run.load(id, { papers: renderer.emailPapers })!.view);
    const whole = renderer.digest(every);
    expect(mail.text).toBe(whole.text);
    mail.release?.();
    whole.release?.();
  });
});

describe("each paper names its own matched topics, papers of one digest sharing one list per topic set", () => {
  it('names per card exactly the topics that matched it, and not a topic deleted since planning', () => {
    const { paperIds } = seedBatch(t.db, '2025-11-26', [
      { title: 'Alpha card', authors: ['Ada One'] },
      { title: 'Beta card', authors: ['Bo Two'] },
      { title: 'Gamma card', authors: ['Cy Three'] },
      { title: 'Delta card', authors: ['Di Four'] },
    ]);
    const s = seedSubscriber(t.db, { email: 'masks@example.org', topics: ['diffusion', 'agents'] });
    const bits = [[0], [0, 1], [0], [1]];
    const from = paperIds[0]! - 1;
    const id = Number(
      t.db
        .prepare(
          `INSERT INTO digests (subscriber_id, edition, status, from_paper, to_paper, topic_ids, items, paper_count, planned_at)
           VALUES (?, '2025-11-26', 'planned', ?, ?, ?, ?, 4, ?)`,
        )
        .run(s.id, from, paperIds.at(-1), s.topicIds.join(','), encodeItems(paperIds.map((paperId, i) => ({ paperId, topicBits: bits[i]! })), from), new Date().toISOString())
        .lastInsertRowid,
    );
    const loader = new DigestLoader(t.db, new Links('https://digest.example.org', new Tokens('x'.repeat(40)), systemClock));
    const view = loader.load(id, { papers: renderer.emailPapers })!.view;
    expect(view.papers.map((p) => p.matchedTopics.map((m) => m.text))).toEqual([['diffusion'], ['diffusion', 'agents'], ['diffusion'], ['agents']]);
    expect(view.papers[0]!.matchedTopics).toBe(view.papers[2]!.matchedTopics);
    // Each card's "Matched:" line in the text part, between its title and the next card.
    const cards = (text: string) => ['Alpha', 'Beta', 'Gamma', 'Delta'].map((t) => text.slice(text.indexOf(`${t} card`)).split(/\n\d+\. /)[0]!);
    const mail = renderer.digest(view);
    expect(cards(mail.text).map((c) => /Matched: ([^\n]*)/.exec(c)?.[1])).toEqual(['diffusion', 'diffusion; agents', 'diffusion', 'agents']);
    mail.release?.();

    // The subscriber deletes "agents" after planning: no card names it, and a paper only it matched stays, unnamed.
    t.db.prepare('DELETE FROM topics WHERE id = ?').run(s.topicIds[1]);
    const after = new DigestLoader(t.db, new Links('https://digest.example.org', new Tokens('x'.repeat(40)), systemClock)).load(id, { papers: renderer.emailPapers })!.view;
    expect(after.papers.map((p) => p.matchedTopics.map((m) => m.text))).toEqual([['diffusion'], ['diffusion'], ['diffusion'], []]);
    const again = renderer.digest(after);
    expect(again.text).not.toContain('agents');
    expect(again.html).not.toContain('agents');
    again.release?.();
  });
});
