// Test data with plain SQL: batches + papers, subscribers + topics. Query ids come from the real
// topic parser and ensureQuery, so matchPending() fills query_matches exactly as in production.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Db } from '../../src/db/open.ts';
import { decodeItems, type LedgerItem } from '../../src/ledger/items.ts';
import { plainItems } from '../../src/ledger/lists.ts';
import { newSalt } from '../../src/tokens.ts';
import { ensureQuery } from '../../src/match/matcher.ts';
import { parseTopic } from '../../src/match/parse.ts';

export interface TempDb {
  db: Db;
  path: string;
  dir: string;
  cleanup(): void;
}

/** A fresh temp directory and the path of a database file in it (not created: createApp() opens it). */
export interface TempDatabaseDir {
  path: string;
  dir: string;
  /** Deletes the directory and everything in it. */
  remove(): void;
}

export function tempDatabaseDir(prefix = 'digest-test-'): TempDatabaseDir {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { path: join(dir, 'digest.sqlite'), dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The database opened on a temp directory's file; cleanup() closes it (if still open) and deletes the directory. */
export function withDatabase(t: TempDatabaseDir, db: Db): TempDb {
  return {
    db,
    path: t.path,
    dir: t.dir,
    cleanup() {
      try {
        db.close();
      } catch {
        // already closed
      }
      t.remove();
    },
  };
}

/** A real SQLite file (WAL, migrated) in a fresh temp directory. */
export function tempDatabase(prefix = 'digest-test-'): TempDb {
  const t = tempDatabaseDir(prefix);
  return withDatabase(t, openDatabase(t.path));
}

export interface SeedPaper {
  key?: string;
  title: string;
  abstract?: string;
  authors?: string[];
  url?: string;
  upvotes?: number;
  categories?: string[];
  publishedAt?: string | null;
}

const INSERT_BATCH = `
  INSERT INTO batches (source, date, content_hash, paper_count, new_paper_count, ingested_at)
  VALUES (?, ?, ?, ?, ?, ?)`;
/** Same paper key again: the existing row is reused (like ingest does). */
const UPSERT_PAPER = `
  INSERT INTO papers (paper_key, title, abstract, authors, url, published_at, upvotes, categories,
                      first_batch_id, created_at, updated_at)
  VALUES (@key, @title, @abstract, @authors, @url, @publishedAt, @upvotes, @categories, @batchId, @now, @now)
  ON CONFLICT (paper_key) DO UPDATE SET upvotes = excluded.upvotes, updated_at = excluded.updated_at
  RETURNING id`;
const INSERT_BATCH_PAPER = `INSERT OR IGNORE INTO batch_papers (batch_id, paper_id) VALUES (?, ?)`;

let keySeq = 0;

/**
 * One batch for `date` with its papers; returns the papers' ids in the given order. `ingestedAt` is
 * when it arrived (papers.created_at; default: the real now): the first digest after confirming holds
 * the last day of ingest, whatever the batch dates.
 */
export function seedBatch(
  db: Db,
  date: string,
  papers: SeedPaper[],
  source = 'test',
  ingestedAt?: string,
): { batchId: number; paperIds: number[] } {
  return db.transaction(() => {
    const now = ingestedAt ?? new Date().toISOString();
    const batchId = Number(
      db.prepare(INSERT_BATCH).run(source, date, `hash-${date}-${keySeq++}`, papers.length, papers.length, now).lastInsertRowid,
    );
    const upsert = db.prepare(UPSERT_PAPER);
    const link = db.prepare(INSERT_BATCH_PAPER);
    const paperIds = papers.map((p) => {
      const key = p.key ?? `test.${String(++keySeq).padStart(5, '0')}`;
      const { id } = upsert.get({
        key,
        title: p.title,
        abstract: p.abstract ?? `${p.title}. An abstract about ${p.title.toLowerCase()}.`,
        authors: JSON.stringify(p.authors ?? ['Ada Lovelace', 'Alan Turing']),
        url: p.url ?? `https://arxiv.org/abs/${key}`,
        publishedAt: p.publishedAt ?? date,
        upvotes: p.upvotes ?? 0,
        categories: JSON.stringify(p.categories ?? ['cs.LG']),
        batchId,
        now,
      }) as { id: number };
      link.run(batchId, id);
      return id;
    });
    return { batchId, paperIds };
  })();
}

export interface SeedSubscriber {
  email: string;
  topics: Array<string | { text: string; muted?: boolean }>;
  status?: 'pending' | 'confirmed' | 'unsubscribed' | 'suppressed';
  timezone?: string;
  deliveryHour?: number;
  frequency?: 'daily' | 'weekly';
  weeklyDay?: number;
  watermark?: number;
  /** Subscriber-local date of the last slot that ran. */
  lastSlot?: string | null;
}

const INSERT_SUBSCRIBER = `
  INSERT INTO subscribers (email, status, token_salt, timezone, delivery_hour, frequency, weekly_day,
                           watermark, last_slot, created_at, confirmed_at)
  VALUES (@email, @status, @salt, @timezone, @deliveryHour, @frequency, @weeklyDay, @watermark,
          @lastSlot, @now, CASE WHEN @status = 'confirmed' THEN @now END)`;
const INSERT_TOPIC = `INSERT INTO topics (subscriber_id, query_id, text, muted, position) VALUES (?, ?, ?, ?, ?)`;

/** Subscribers with their topics, in one transaction. Returns ids and topic ids in input order. */
export function seedSubscribers(db: Db, subs: SeedSubscriber[]): Array<{ id: number; email: string; topicIds: number[] }> {
  const queryIds = new Map<string, number>();
  const queryId = (text: string) => {
    const fts = parseTopic(text).fts;
    let id = queryIds.get(fts);
    if (id === undefined) {
      id = ensureQuery(db, fts);
      queryIds.set(fts, id);
    }
    return id;
  };
  return db.transaction(() => {
    const now = new Date().toISOString();
    const insertSub = db.prepare(INSERT_SUBSCRIBER);
    const insertTopic = db.prepare(INSERT_TOPIC);
    return subs.map((s) => {
      const id = Number(
        insertSub.run({
          email: s.email,
          status: s.status ?? 'confirmed',
          salt: newSalt(),
          timezone: s.timezone ?? 'UTC',
          deliveryHour: s.deliveryHour ?? 7,
          frequency: s.frequency ?? 'daily',
          weeklyDay: s.weeklyDay ?? 1,
          watermark: s.watermark ?? 0,
          lastSlot: s.lastSlot ?? null,
          now,
        }).lastInsertRowid,
      );
      const topicIds = s.topics.map((t, position) => {
        const topic = typeof t === 'string' ? { text: t, muted: false } : t;
        return Number(insertTopic.run(id, queryId(topic.text), topic.text, topic.muted ? 1 : 0, position).lastInsertRowid);
      });
      return { id, email: s.email, topicIds };
    });
  })();
}

export function seedSubscriber(db: Db, sub: SeedSubscriber): { id: number; email: string; topicIds: number[] } {
  return seedSubscribers(db, [sub])[0]!;
}

/** Digest rows of the ledger, for assertions. */
export interface DigestRowForTest {
  id: number;
  subscriber_id: number;
  edition: string;
  status: string;
  from_paper: number;
  to_paper: number;
  /** Packed paper list: read it with rowItems(). */
  items: Buffer | null;
  topic_ids: string;
  paper_count: number;
  attempts: number;
  smtp_code: number | null;
  smtp_response: string | null;
  message_id: string | null;
}

export function digestRows(db: Db): DigestRowForTest[] {
  return db.prepare(`SELECT * FROM digests ORDER BY id`).all() as DigestRowForTest[];
}

/**
 * A row's papers in display order, with the topic ids that matched each (src/ledger/items.ts). A row that
 * refers to query lists (src/ledger/lists.ts) needs its database and its to_paper.
 */
export function rowItems(row: Pick<DigestRowForTest, 'items' | 'from_paper' | 'topic_ids'> & { to_paper?: number }, db?: Db): LedgerItem[] {
  if (row.items === null) return [];
  const items = db && row.to_paper !== undefined ? plainItems(db, row.items, row.from_paper, row.to_paper) : row.items;
  return decodeItems(items, row.from_paper, row.topic_ids);
}

export function countByStatus(db: Db): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of db.prepare(`SELECT status, count(*) AS n FROM digests GROUP BY status`).all() as { status: string; n: number }[]) {
    out[r.status] = r.n;
  }
  return out;
}
