// An edition's inputs for SQLite-vs-PostgreSQL tests and bench/plan.ts --engine postgres: subscribers
// written on SQLite (the same statements the app uses for queries) and copied to PostgreSQL, the fixture
// batches, and each engine's ledger rows decoded to (subscriber, edition, bounds, papers in order).
import { readFileSync } from 'node:fs';
import type pg from 'pg';
import type { Db } from '../../src/db/open.ts';
import { parseFeed } from '../../src/ingest/detect.ts';
import { decodeItems } from '../../src/ledger/items.ts';
import { decodeList, decodeRefs, isRefs, mergeLists, plainItems, type QueryList } from '../../src/ledger/lists.ts';
import { packItems } from '../../src/ledger/pack.ts';
import { ensureQuery } from '../../src/match/matcher.ts';
import { parseTopic } from '../../src/match/parse.ts';
import type { IncomingBatch } from '../../src/types.ts';

export const BATCH_DAY_1 = new URL('../fixtures/batches/2025-11-25.json', import.meta.url);
export const BATCH_DAY_2 = new URL('../fixtures/batches/2025-11-26.json', import.meta.url);
const SHARED_PAGE = '/work/shared/fixtures/daily-papers-page.json';

export function fixtureBatch(url: URL): IncomingBatch {
  return parseFeed(readFileSync(url, 'utf8'), 'batch');
}

/** The shared listing (71 papers) as an older day's batch: a backfill arriving after newer days. */
export function backfillBatch(date = '2025-11-20'): IncomingBatch {
  let page: Array<{ title: string; abstract: string; upvotes?: number }> = [];
  try {
    page = (JSON.parse(readFileSync(SHARED_PAGE, 'utf8')) as { papers: typeof page }).papers;
  } catch {
    page = [{ title: 'Backfilled reinforcement learning agents', abstract: 'Agents that navigate the web with language models.' }];
  }
  return {
    source: 'backfill',
    date,
    papers: page.map((p, i) => {
      const key = `2510.${String(20000 + i)}`;
      return { key, title: p.title, abstract: p.abstract, authors: ['A. Author'], url: `https://arxiv.org/abs/${key}`, publishedAt: date, upvotes: p.upvotes ?? 0, categories: ['cs.LG'] };
    }),
  };
}

export interface EditionSubscriber {
  email: string;
  topics: Array<string | { text: string; muted: boolean }>;
  timezone?: string;
  deliveryHour?: number;
  frequency?: 'daily' | 'weekly';
  weeklyDay?: number;
  maxPapers?: number | null;
  status?: string;
  pausedUntil?: string | null;
}

const SQL_SUBSCRIBER = `
  INSERT INTO subscribers (email, status, token_salt, timezone, delivery_hour, frequency, weekly_day, max_papers,
                           paused_until, created_at, confirmed_at)
  VALUES (@email, @status, 'salt', @timezone, @deliveryHour, @frequency, @weeklyDay, @maxPapers, @pausedUntil,
          '2025-11-01T00:00:00.000Z', '2025-11-01T00:00:00.000Z')`;
const SQL_TOPIC = `INSERT INTO topics (subscriber_id, query_id, text, muted, position) VALUES (?, ?, ?, ?, ?)`;

/** Subscribers and their topics on SQLite; queries registered as the app does (ensureQuery of the parsed topic). */
export function addSubscribers(db: Db, subs: readonly EditionSubscriber[]): void {
  const sub = db.prepare(SQL_SUBSCRIBER);
  const topic = db.prepare(SQL_TOPIC);
  db.transaction(() => {
    for (const s of subs) {
      const id = Number(
        sub.run({
          email: s.email,
          status: s.status ?? 'confirmed',
          timezone: s.timezone ?? 'UTC',
          deliveryHour: s.deliveryHour ?? 7,
          frequency: s.frequency ?? 'daily',
          weeklyDay: s.weeklyDay ?? 1,
          maxPapers: s.maxPapers ?? null,
          pausedUntil: s.pausedUntil ?? null,
        }).lastInsertRowid,
      );
      s.topics.forEach((t, position) => {
        const { text, muted } = typeof t === 'string' ? { text: t, muted: false } : t;
        topic.run(id, ensureQuery(db, parseTopic(text)), text, muted ? 1 : 0, position);
      });
    }
  })();
}

/** A planned row as a reader sees it: its bounds and its papers in display order with the topics that matched. */
export interface DecodedRow {
  subscriber: number;
  edition: string;
  from: number;
  to: number;
  count: number;
  papers: Array<{ paperId: number; topicIds: number[] }>;
}

interface LedgerRow {
  subscriber_id: number;
  edition: string;
  from_paper: number;
  to_paper: number;
  paper_count: number;
  topic_ids: string;
  items: Buffer;
}

const SQL_ROWS = `SELECT subscriber_id, edition, from_paper, to_paper, paper_count, topic_ids, items FROM digests WHERE edition = ? ORDER BY subscriber_id`;

export function sqliteRows(db: Db, edition: string): DecodedRow[] {
  return (db.prepare(SQL_ROWS).all(edition) as LedgerRow[]).map((r) => decoded(r, plainItems(db, r.items, r.from_paper, r.to_paper)));
}

export async function postgresRows(pool: pg.Pool, edition: string): Promise<DecodedRow[]> {
  const rows = (await pool.query<LedgerRow>(SQL_ROWS.replace('?', '$1'), [edition])).rows;
  const lists = new Map<number, QueryList>();
  for (const r of rows) {
    if (!isRefs(r.items)) continue;
    for (const ref of decodeRefs(r.items)) {
      if (lists.has(ref.listId)) continue;
      const l = (await pool.query<{ items: Buffer }>('SELECT items FROM query_lists WHERE id = $1', [ref.listId])).rows[0];
      if (!l) throw new Error(`query list ${ref.listId} is missing`);
      lists.set(ref.listId, decodeList(l.items));
    }
  }
  return rows.map((r) => {
    if (!isRefs(r.items)) return decoded(r, r.items);
    const merged = mergeLists(decodeRefs(r.items).map((ref) => ({ bit: ref.bit, list: lists.get(ref.listId)! })), r.from_paper, r.to_paper);
    return decoded(r, packItems(merged.ids, merged.masks, r.from_paper));
  });
}

function decoded(r: LedgerRow, plain: Uint8Array): DecodedRow {
  return {
    subscriber: r.subscriber_id,
    edition: r.edition,
    from: r.from_paper,
    to: r.to_paper,
    count: r.paper_count,
    papers: decodeItems(plain, r.from_paper, r.topic_ids),
  };
}

/** What a delivery records (ledger/states.ts): the rows sent, each subscriber's watermark at its row's to_paper. */
export const SQL_DELIVER_ALL = [
  `UPDATE digests SET status = 'sent' WHERE status = 'planned'`,
  `UPDATE subscribers SET watermark = (SELECT max(d.to_paper) FROM digests d WHERE d.subscriber_id = subscribers.id AND d.status = 'sent')
   WHERE EXISTS (SELECT 1 FROM digests d WHERE d.subscriber_id = subscribers.id AND d.status = 'sent')`,
];
/** What a delivery records on PostgreSQL (ledger/postgres/ledger-sql.ts): the rows sent, nothing else (migration 020). */
export const SQL_DELIVER_ALL_PG = [SQL_DELIVER_ALL[0]!];
