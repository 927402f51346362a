// One Paper type: what ingest stores is what every reader of the papers table gets back, through the one
// mapper (db/paper-row.ts), whatever the text holds.
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { paperFromRow, type PaperRow } from '../../src/db/paper-row.ts';
import { ingestBatch } from '../../src/ingest/ingest.ts';
import type { IncomingPaper, Paper } from '../../src/types.ts';
import { tempDatabase, type TempDb } from '../helpers/seed.ts';

const SELECT_PAPER = `
  SELECT id, paper_key AS key, title, abstract, authors, url, published_at AS publishedAt, upvotes, categories,
         code_url AS codeUrl
  FROM papers WHERE paper_key = ?`;

let t: TempDb | undefined;
afterEach(() => t?.cleanup());

describe('Paper rows', () => {
  it('reads back every field ingest stored, arrays included, and an unreadable array as empty', () => {
    t = tempDatabase('paper-row-');
    const incoming: IncomingPaper = {
      key: '2511.04242',
      title: 'Quotes "inside", <tags> & ünïcödé 🚀',
      abstract: 'Line one.\nLine two, with a backslash \\ and a tab\t.',
      authors: ['Ada "Countess" Lovelace', 'Émilie du Châtelet', '李白'],
      url: 'https://arxiv.org/abs/2511.04242',
      publishedAt: '2025-11-24',
      upvotes: 17,
      categories: ['cs.LG', 'cs.CL'],
      codeUrl: 'https://github.com/example/repo',
    };
    ingestBatch(t.db, { source: 'hf', date: '2025-11-24', papers: [incoming] }, new ManualClock('2025-11-25T08:00:00Z'));

    const row = t.db.prepare<[string], PaperRow<keyof Paper>>(SELECT_PAPER).get(incoming.key)!;
    expect(typeof row.authors).toBe('string');
    const paper: Paper = paperFromRow(row);
    expect(paper).toEqual({ ...incoming, id: row.id });

    t.db.prepare(`UPDATE papers SET authors = 'not json', categories = '{"a":1}' WHERE id = ?`).run(row.id);
    const damaged = paperFromRow(t.db.prepare<[string], PaperRow<keyof Paper>>(SELECT_PAPER).get(incoming.key)!);
    expect(damaged.authors).toEqual([]);
    expect(damaged.categories).toEqual([]);
    expect(damaged.title).toBe(incoming.title);
  });
});
