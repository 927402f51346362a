// A new kind of paper source is one definition (src/ingest/source-kinds/): this test declares one the
// service does not ship (a lab's own JSON endpoint, one file per day) and hands it to the poller beside
// the built-in kinds. SOURCES accepts it, the poller asks it for each missing day with its own setting,
// what it returns is ingested, and `digest sources`' listing shows it; nothing else had to change.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import { openDatabase, type Db } from '../../src/db/open.ts';
import { fetchText } from '../../src/ingest/fetch.ts';
import { defineSourceKind } from '../../src/ingest/source-kinds/kind.ts';
import { SOURCE_KINDS } from '../../src/ingest/source-kinds/registry.ts';
import { createSourcePoller, listSources, parseSources } from '../../src/ingest/sources.ts';
import { silentLogger } from '../../src/log.ts';
import { json, startFeedServer, type FeedServer } from '../helpers/feed-server.ts';

let dir: string;
let db: Db;
let server: FeedServer;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'source-kinds-'));
  db = openDatabase(join(dir, 'digest.sqlite'));
  server = await startFeedServer();
});
afterEach(async () => {
  await server.close();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

// The whole of a new source: its name, its setting, when it is asked, how it fetches a day.
const labFeed = defineSourceKind({
  name: 'lab',
  title: 'Our lab reading list',
  categories: false,
  settings: { LAB_FEED_URL: z.string().url().default('https://lab.example.org/papers') },
  schedule: { kind: 'dated', lastDay: 0, settleMs: 0, refreshMs: 0 },
  async fetchDay({ settings, fetch }, day) {
    const r = await fetchText(`${settings.LAB_FEED_URL}/${day}.json`, fetch);
    if (r.status === 404) return { outcome: 'empty', day, detail: 'no list that day' };
    const papers = z.array(z.object({ id: z.string(), title: z.string(), abstract: z.string() })).parse(JSON.parse(r.text));
    return { outcome: 'papers', day, papers: papers.map((p) => ({ key: p.id, title: p.title, abstract: p.abstract, authors: [], url: `https://arxiv.org/abs/${p.id}`, publishedAt: day, upvotes: 0, categories: [] })) };
  },
});
const KINDS = [...SOURCE_KINDS, labFeed];

describe('a source kind declared in one place', () => {
  it('is accepted by SOURCES, polled day by day with its own setting, ingested and listed', async () => {
    server.route('/lab/2025-11-25.json', json([{ id: '2511.00001', title: 'Draft trees for speculative decoding', abstract: 'Faster inference.' }]));
    server.route('/lab/2025-11-26.json', { status: 404, body: 'not found' });
    const config = { ...loadConfig({ SOURCES: 'lab', SOURCE_LOOKBACK_DAYS: '1', FETCH_RETRIES: '0' }), LAB_FEED_URL: `${server.url}/lab` };
    expect(() => parseSources('lab')).toThrow('unknown source "lab"; known: hf, arxiv:<categories>, arxiv-api:<categories>');
    expect(parseSources('hf,lab', KINDS)).toEqual([
      { name: 'hf', kind: 'hf', categories: [] },
      { name: 'lab', kind: 'lab', categories: [] },
    ]);
    expect(() => parseSources('lab:cs.LG', KINDS)).toThrow('lab takes no categories');

    const poller = createSourcePoller({ db, config, clock: new ManualClock('2025-11-26T09:00:00Z'), logger: silentLogger, kinds: KINDS });
    const reports = await poller.poll();
    expect(reports.map((r) => [r.day, r.status])).toEqual([
      ['2025-11-25', 'ingested'],
      ['2025-11-26', 'empty'],
    ]);
    expect(reports[0]!.detail).toBe('1 paper, 1 new, 0 updated'); // as `digest run` prints it
    expect(db.prepare('SELECT source, date FROM batches').all()).toEqual([{ source: 'lab', date: '2025-11-25' }]);
    expect(db.prepare('SELECT title FROM papers').all()).toEqual([{ title: 'Draft trees for speculative decoding' }]);
    expect(listSources(db, poller.specs)).toMatchObject([{ source: 'lab', kind: 'lab', lastDay: '2025-11-25', lastError: null }]);
  });
});
