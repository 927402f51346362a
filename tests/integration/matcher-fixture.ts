// The Daily Papers fixture loaded straight into `papers` of a real SQLite file (tempDatabase() in
// tests/helpers/seed.ts; the FTS5 triggers index them), and helpers to add subscribers and topics.
// Used by matcher*.test.ts.
import { readFileSync } from 'node:fs';
import type { Db } from '../../src/db/open.ts';
import { ensureQuery } from '../../src/match/matcher.ts';
import { parseTopic } from '../../src/match/parse.ts';

export interface FixturePaper {
  title: string;
  abstract: string;
  upvotes?: number;
}

/** The real Daily Papers listing (71 papers), as the repo's sample batch. Tests refer to papers by index. */
const FIXTURE_PATH = new URL('../../samples/daily-papers-sample.json', import.meta.url);

export const FIXTURE: FixturePaper[] = (JSON.parse(readFileSync(FIXTURE_PATH, 'utf8')) as { papers: FixturePaper[] }).papers;

/** The sample has no authors or categories: these are made up so field prefixes have something to find. */
export function authorsOf(i: number): string[] {
  if (i === 52) return ['Yann LeCun', 'Ada Lovelace']; // ChessQA
  if (i === 31) return ['Bob LeCun', 'Yann Dauphin']; // PokerGPT
  return [`Author ${i}`, 'Grace Hopper'];
}

export function categoriesOf(i: number): string[] {
  return [['cs.LG'], ['cs.CL', 'cs.AI'], ['cs.AI', 'cs.LG']][i % 3]!;
}

/** A batch row (papers need one for first_batch_id). */
export function addBatch(db: Db, date: string, source = 'test'): number {
  return Number(
    db
      .prepare(
        `INSERT INTO batches (source, date, content_hash, paper_count, new_paper_count, ingested_at)
         VALUES (?, ?, ?, 0, 0, ?)`,
      )
      .run(source, date, `hash-${source}-${date}-${Math.random()}`, `${date}T06:00:00.000Z`).lastInsertRowid,
  );
}

export interface PaperInput {
  key: string;
  title: string;
  abstract: string;
  authors?: string[];
  categories?: string[];
  upvotes?: number;
}

export function addPaper(db: Db, batchId: number, p: PaperInput): number {
  const id = Number(
    db
      .prepare(
        `INSERT INTO papers (paper_key, title, abstract, authors, url, published_at, upvotes, categories,
                             first_batch_id, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, NULL, ?, ?, ?, '2025-11-25T06:00:00.000Z', '2025-11-25T06:00:00.000Z')`,
      )
      .run(
        p.key,
        p.title,
        p.abstract,
        JSON.stringify(p.authors ?? []),
        `https://example.org/${p.key}`,
        p.upvotes ?? 0,
        JSON.stringify(p.categories ?? []),
        batchId,
      ).lastInsertRowid,
  );
  db.prepare(`INSERT INTO batch_papers (batch_id, paper_id) VALUES (?, ?)`).run(batchId, id);
  return id;
}

/** Loads the 71 fixture papers as keys fx-0 … fx-70 (papers.id = index + 1 on a fresh database). */
export function loadFixture(db: Db, batchId: number): void {
  db.transaction(() => {
    FIXTURE.forEach((p, i) =>
      addPaper(db, batchId, {
        key: `fx-${i}`,
        title: p.title,
        abstract: p.abstract,
        authors: authorsOf(i),
        categories: categoriesOf(i),
        upvotes: p.upvotes ?? 0,
      }),
    );
  })();
}

export function addSubscriber(db: Db, email: string, status = 'confirmed'): number {
  return Number(
    db
      .prepare(
        `INSERT INTO subscribers (email, status, token_salt, timezone, created_at)
         VALUES (?, ?, 'salt', 'UTC', '2025-11-01T00:00:00.000Z')`,
      )
      .run(email, status).lastInsertRowid,
  );
}

/** Parses a topic, registers its distinct query and gives it to the subscriber (once). Returns the query id. */
export function addTopic(db: Db, subscriberId: number, text: string): number {
  const parsed = parseTopic(text);
  const queryId = ensureQuery(db, parsed.fts);
  const { n } = db.prepare<[number], { n: number }>(`SELECT count(*) AS n FROM topics WHERE subscriber_id = ?`).get(subscriberId)!;
  db.prepare(`INSERT OR IGNORE INTO topics (subscriber_id, query_id, text, position) VALUES (?, ?, ?, ?)`).run(
    subscriberId,
    queryId,
    parsed.text,
    n,
  );
  return queryId;
}

/** Fixture indices (fx-N) a query matched, ascending. */
export function matchedIndices(db: Db, queryId: number): number[] {
  return db
    .prepare<[number], { key: string }>(
      `SELECT p.paper_key AS key FROM query_matches m JOIN papers p ON p.id = m.paper_id WHERE m.query_id = ?`,
    )
    .all(queryId)
    .map((r) => Number(r.key.replace('fx-', '')))
    .sort((a, b) => a - b);
}

/** Fixture indices whose title or abstract matches a regex: an oracle independent of FTS5. */
export function grep(re: RegExp): number[] {
  return FIXTURE.flatMap((p, i) => (re.test(`${p.title}\n${p.abstract}`) ? [i] : []));
}
