// The ingest service against a real SQLite file in a temp directory.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { openDatabase, type Db } from '../../src/db/open.ts';
import { parseFeed } from '../../src/ingest/detect.ts';
import { ingestBatch } from '../../src/ingest/ingest.ts';
import type { IncomingBatch, IncomingPaper } from '../../src/types.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const FEEDS = join(ROOT, 'tests', 'fixtures', 'feeds');

let dir: string;
let db: Db;
const clock = new ManualClock('2025-11-25T08:00:00Z');

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ingest-'));
  db = openDatabase(join(dir, 'digest.sqlite'));
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const paper = (key: string, over: Partial<IncomingPaper> = {}): IncomingPaper => ({
  key,
  title: `Paper ${key}`,
  abstract: `Abstract of ${key}.`,
  authors: ['Ada Lovelace'],
  url: `https://arxiv.org/abs/${key}`,
  publishedAt: '2025-11-24',
  upvotes: 0,
  categories: [],
  ...over,
});

/** Everything ingest writes, to compare before and after. */
function snapshot(db: Db) {
  return {
    batches: db.prepare('SELECT * FROM batches ORDER BY id').all(),
    papers: db.prepare('SELECT * FROM papers ORDER BY id').all(),
    batchPapers: db.prepare('SELECT * FROM batch_papers ORDER BY batch_id, paper_id').all(),
    fts: db.prepare("SELECT rowid, title FROM papers_fts WHERE papers_fts MATCH 'paper OR flow' ORDER BY rowid").all(),
  };
}

function stored(key: string) {
  const row = db.prepare('SELECT * FROM papers WHERE paper_key = ?').get(key) as Record<string, unknown> | undefined;
  if (!row) return undefined;
  return { ...row, authors: JSON.parse(row.authors as string), categories: JSON.parse(row.categories as string) } as Record<string, unknown>;
}

describe('ingestBatch', () => {
  it('writes the batch, its papers and the full-text index, and re-ingesting changes nothing', () => {
    const batch: IncomingBatch = { source: 'hf', date: '2025-11-24', papers: [paper('2511.00001'), paper('2501.00010')] };
    const r = ingestBatch(db, batch, clock);
    expect(r).toMatchObject({ papers: 2, newPapers: 2, updatedPapers: 0, duplicate: false });
    expect(stored('2501.00010')).toMatchObject({ paper_key: '2501.00010', first_batch_id: r.batchId, authors: ['Ada Lovelace'] });
    const ftsHit = db.prepare("SELECT rowid FROM papers_fts WHERE papers_fts MATCH '\"Lovelace\"'").all();
    expect(ftsHit).toHaveLength(2);

    const before = snapshot(db);
    clock.advance(3_600_000);
    const again = ingestBatch(db, { ...batch, papers: [...batch.papers].reverse() }, clock);
    expect(again).toEqual({ batchId: r.batchId, papers: 2, newPapers: 0, updatedPapers: 0, duplicate: true });
    expect(snapshot(db)).toEqual(before);
  });

  it('refuses a bad batch whole: nothing of it is written', () => {
    ingestBatch(db, { source: 'hf', date: '2025-11-24', papers: [paper('2511.00001')] }, clock);
    const before = snapshot(db);
    const bad = { source: 'hf', date: '2025-11-25', papers: [paper('2511.00002'), paper('2511.00003', { url: 'javascript:alert(1)' })] };
    expect(() => ingestBatch(db, bad, clock)).toThrow('Invalid batch: papers[1].url: must be an http(s) URL');
    const dup = { source: 'hf', date: '2025-11-25', papers: [paper('2511.00002'), paper('arXiv:2511.00002v2')] };
    expect(() => ingestBatch(db, dup, clock)).toThrow('Invalid batch: papers[1].id: 2511.00002 is already papers[0]');
    expect(() => ingestBatch(db, { source: 'hf', date: '2025-11-25', papers: [] }, clock)).toThrow(
      expect.objectContaining({ code: 'BATCH_EMPTY' }),
    );
    expect(snapshot(db)).toEqual(before);
  });

  it('refuses a bad file read from disk before anything is written', () => {
    const text = readFileSync(join(ROOT, 'samples', 'daily-papers-sample.json'), 'utf8');
    const broken = JSON.parse(text) as { papers: Record<string, unknown>[] };
    delete broken.papers[3]!.title;
    expect(() => parseFeed(JSON.stringify(broken), 'auto')).toThrow('Invalid batch: papers[3].title: required');
    expect(snapshot(db).batches).toEqual([]);
  });

  it('keeps one row per paper across days and sources, keeping its first id and merging metadata', () => {
    const hf24 = parseFeed(readFileSync(join(FEEDS, 'hf-2025-11-24.json'), 'utf8'), 'hf', { date: '2025-11-24' });
    const first = ingestBatch(db, hf24, clock);
    const idOf = (key: string) => stored(key)!.id as number;
    const selfPlayId = idOf('2511.17001');
    const flowId = idOf('2511.17003');

    // The same paper on the next day, with more upvotes: same row, same id, upvotes updated.
    clock.advance(86_400_000);
    const hf25 = parseFeed(readFileSync(join(FEEDS, 'hf-2025-11-25.json'), 'utf8'), 'hf', { date: '2025-11-25' });
    const second = ingestBatch(db, hf25, clock);
    expect(second).toMatchObject({ papers: 2, newPapers: 1, updatedPapers: 1, duplicate: false });
    expect(stored('2511.17001')).toMatchObject({ id: selfPlayId, upvotes: 57, first_batch_id: first.batchId });
    expect(idOf('2511.18004')).toBeGreaterThan(Math.max(selfPlayId, flowId));

    // The same paper from arXiv: categories and the longer abstract and author list arrive; upvotes stay.
    const rss = parseFeed(readFileSync(join(FEEDS, 'arxiv-rss-cs.LG+cs.CL.xml'), 'utf8'), 'arxiv');
    const third = ingestBatch(db, rss, clock);
    expect(third).toMatchObject({ papers: 2, newPapers: 1, updatedPapers: 1 });
    const flow = stored('2511.17003')!;
    expect(flow).toMatchObject({
      id: flowId,
      upvotes: 17,
      categories: ['cs.LG', 'cs.RO'],
      authors: ['Lena Fischer', 'Kenji Watanabe', 'Rosa Delgado'],
      url: 'https://huggingface.co/papers/2511.17003',
      title: 'Diffusion Policies with Flow Matching for Dexterous Manipulation',
    });
    expect(flow.abstract).toMatch(/^We replace the denoising objective .* remains as stable\.$/);
    expect(db.prepare('SELECT COUNT(*) AS n FROM papers WHERE paper_key = ?').get('2511.17003')).toEqual({ n: 1 });
    // The merged text is searchable: categories and the longer abstract are in the full-text index.
    const hits = db.prepare("SELECT rowid FROM papers_fts WHERE papers_fts MATCH 'categories:\"cs.RO\" AND abstract:\"integration steps\"'").all();
    expect(hits).toEqual([{ rowid: flowId }]);
    // Each batch lists its own papers, including the known ones.
    const listed = db.prepare('SELECT paper_id FROM batch_papers WHERE batch_id = ? ORDER BY paper_id').all(third.batchId);
    expect(listed.map((r) => (r as { paper_id: number }).paper_id)).toContain(flowId);

    // arXiv again, then Hugging Face again: nothing is lost in either order.
    const hfAgain = ingestBatch(db, { ...hf24, source: 'hf-replay' }, clock);
    expect(hfAgain).toMatchObject({ newPapers: 0, updatedPapers: 0 });
    expect(stored('2511.17003')).toMatchObject({ upvotes: 17, categories: ['cs.LG', 'cs.RO'] });
  });

  it('records the new-paper count of each batch', () => {
    const a = ingestBatch(db, { source: 's', date: '2025-11-24', papers: [paper('2511.00001'), paper('2511.00002')] }, clock);
    const b = ingestBatch(db, { source: 's', date: '2025-11-25', papers: [paper('2511.00002'), paper('2511.00003')] }, clock);
    const rows = db.prepare('SELECT id, paper_count, new_paper_count FROM batches ORDER BY id').all();
    expect(rows).toEqual([
      { id: a.batchId, paper_count: 2, new_paper_count: 2 },
      { id: b.batchId, paper_count: 2, new_paper_count: 1 },
    ]);
  });

  it('ingests the bundled sample: 71 papers with their upvotes', () => {
    const sample = parseFeed(readFileSync(join(ROOT, 'samples', 'daily-papers-sample.json'), 'utf8'), 'auto');
    expect(sample).toMatchObject({ source: 'hf-daily', date: '2025-11-25' });
    const r = ingestBatch(db, sample, clock);
    expect(r).toMatchObject({ papers: 71, newPapers: 71 });
    expect(db.prepare('SELECT MAX(upvotes) AS top FROM papers').get()).toEqual({ top: 5 });
    expect(ingestBatch(db, sample, clock).duplicate).toBe(true);
  });
});
