// An email looks at its first papers only (25 in full, then compact lines: Renderer.emailPapers); the loader
// makes only those (DigestLoader LoadOptions.papers) and counts the rest. The email must read exactly as
// when every paper is made: same subject (the topics of papers past the limit named too), counts, button.
// Real SQLite file, real renderer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.ts';
import { Links } from '../../src/links.ts';
import { encodeItems } from '../../src/plan/items.ts';
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
    expect(limit).toBe(50);
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
        expect(b.text).toContain('350 more papers in this digest');
      }
      a.release?.();
      b.release?.();
    }
  });
});
