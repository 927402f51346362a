// paper_terms on PostgreSQL (match/paper-terms.ts's indexPaperTerms): each new paper's tf-idf vector, the
// reader models' input, computed by matchPendingPg from the in-memory FTS5 index of the whole corpus it
// has just built (the same document frequencies as SQLite's own index, so the same weights to the bit),
// written in a few set INSERTs. Unlike SQLite it does not wait for a first vote: votes reach PostgreSQL
// without this process seeing them (`digest copy`, another instance), and the model pass trains on the
// papers readers were shown, which must have their vectors by then.
import type pg from 'pg';
import type { Db } from '../../db/open.ts';
import { paperFeatures } from '../features.ts';
import { corpusStats } from '../like/terms.ts';
import { BACKFILL_PAPERS } from '../paper-terms.ts';

const SQL_THROUGH = `SELECT value FROM settings WHERE key = 'paper_terms.through'`;
const SQL_SET_THROUGH = `
  INSERT INTO settings (key, value) VALUES ('paper_terms.through', $1)
  ON CONFLICT (key) DO UPDATE SET value = excluded.value`;
/** Voted papers without a vector (older than the indexed window): SQLite writes them at vote time. */
const SQL_VOTED_WITHOUT_TERMS = `
  SELECT DISTINCT f.paper_id AS id FROM feedback f
  WHERE NOT EXISTS (SELECT 1 FROM paper_terms t WHERE t.paper_id = f.paper_id)`;
const SQL_INSERT_TERMS = `
  INSERT INTO paper_terms (paper_id, term, weight)
  SELECT * FROM unnest($1::bigint[], $2::text[], $3::double precision[])
  ON CONFLICT (paper_id, term) DO UPDATE SET weight = excluded.weight`;
/** Rows per INSERT. */
const TERMS_CHUNK = 20_000;

/** In the in-memory index (match-in-memory.ts's papers table). */
const SQL_INDEX_PAPERS = `SELECT id, title, abstract FROM papers WHERE id > ? AND id <= ? ORDER BY id`;
const SQL_INDEX_PAPER = `SELECT id, title, abstract FROM papers WHERE id = ?`;

/** The papers (from, to] whose vectors are missing: where indexing starts, or null when it is done. */
export async function paperTermsFrom(c: pg.PoolClient, to: number): Promise<number | null> {
  const through = (await c.query<{ value: string }>(SQL_THROUGH)).rows[0]?.value;
  const from = through === undefined ? Math.max(0, to - BACKFILL_PAPERS) : Number(through);
  if (from < to) return from;
  return (await c.query(SQL_VOTED_WITHOUT_TERMS)).rows.length > 0 ? to : null;
}

/**
 * Writes the vectors of papers (from, to] and of voted papers without one, from `index` (an in-memory
 * index holding the whole corpus up to `to`); inside the caller's transaction. Returns papers indexed.
 */
export async function indexPaperTermsPg(c: pg.PoolClient, index: Db, from: number, to: number): Promise<number> {
  const stats = corpusStats(index);
  type Text = { id: number; title: string; abstract: string };
  const papers = index.prepare(SQL_INDEX_PAPERS).all(from, to) as Text[];
  const one = index.prepare(SQL_INDEX_PAPER);
  for (const { id } of (await c.query<{ id: number }>(SQL_VOTED_WITHOUT_TERMS)).rows) {
    const p = one.get(id) as Text | undefined;
    if (p && (p.id <= from || p.id > to)) papers.push(p);
  }
  const rows = { ids: [] as number[], terms: [] as string[], weights: [] as number[] };
  const flush = async () => {
    if (rows.ids.length > 0) await c.query(SQL_INSERT_TERMS, [rows.ids, rows.terms, rows.weights]);
    rows.ids = [];
    rows.terms = [];
    rows.weights = [];
  };
  for (const p of papers) {
    for (const f of paperFeatures(p.title, p.abstract, stats)) {
      rows.ids.push(p.id);
      rows.terms.push(f.term);
      rows.weights.push(f.weight);
    }
    if (rows.ids.length >= TERMS_CHUNK) await flush();
  }
  await flush();
  await c.query(SQL_SET_THROUGH, [String(to)]);
  return papers.length;
}
