// paper_terms: each paper's feature vector (features.ts: tf-idf words and bigrams, unit length),
// written once per paper when the matcher first sees it (once any reader has voted). Reader models are
// trained on these rows (feedback/training.ts) and score the day's papers from them (feedback/model-pass.ts).
//
// Stems are cached across papers and document-frequency lookups per run.
// Measured: BENCHMARKS.md § Why the code is shaped this way, paper-terms.ts.
import type Database from 'better-sqlite3';
import { statement } from '../db/statements.ts';
import type { Db } from '../db/open.ts';
import { readSetting, writeSetting } from '../db/settings-table.ts';
import { corpusStats, type CorpusStats } from './like/terms.ts';
import { paperFeatures } from './features.ts';
import type { Paper } from '../types.ts';

/** What the term index reads of a paper. */
type PaperText = Pick<Paper, 'id' | 'title' | 'abstract'>;

/** On a database that predates paper_terms, only this many of the newest papers are indexed at once. */
export const BACKFILL_PAPERS = 5_000;
const SQL_PAPERS = `SELECT id, title, abstract FROM papers WHERE id > ? AND id <= ? ORDER BY id`;
const SQL_INSERT = `INSERT OR REPLACE INTO paper_terms (paper_id, term, weight) VALUES (?, ?, ?)`;
const SQL_HAS_TERMS = `SELECT 1 FROM paper_terms WHERE paper_id = ? LIMIT 1`;
const SQL_PAPER = `SELECT id, title, abstract FROM papers WHERE id = ?`;
const SQL_ANY_VOTE = `SELECT 1 FROM feedback LIMIT 1`;

function writeTerms(insert: Statement, stats: CorpusStats, p: PaperText): void {
  for (const f of paperFeatures(p.title, p.abstract, stats)) insert.run(p.id, f.term, f.weight);
}

type Statement = Database.Statement<[number, string, number]>;

/** Indexes the papers up to `toId` not indexed yet (call inside the caller's transaction). Returns how many. */
export function indexPaperTerms(db: Db, toId: number): number {
  const through = readSetting(db, 'paper_terms.through');
  const from = through === undefined ? Math.max(0, toId - BACKFILL_PAPERS) : Number(through);
  if (from >= toId) return 0;
  // Nobody has voted yet: nothing reads paper vectors, so skip the work (about 0.3-1 s per 1,000 papers
  // on a busy machine) and move on; a vote indexes its own paper (ensurePaperTerms), later papers follow.
  if (!statement(db, SQL_ANY_VOTE).get()) {
    writeSetting(db, 'paper_terms.through', String(toId));
    return 0;
  }
  const stats = corpusStats(db);
  const papers = statement<[number, number], PaperText>(db, SQL_PAPERS).all(from, toId);
  const insert = statement<[number, string, number]>(db, SQL_INSERT);
  for (const p of papers) writeTerms(insert, stats, p);
  writeSetting(db, 'paper_terms.through', String(toId));
  return papers.length;
}

/** A paper's terms, written now if it has none (feedback on a paper older than the index). */
export function ensurePaperTerms(db: Db, paperId: number, stats?: CorpusStats): void {
  if (statement(db, SQL_HAS_TERMS).get(paperId)) return;
  const p = statement<[number], PaperText>(db, SQL_PAPER).get(paperId);
  if (p) writeTerms(statement<[number, string, number]>(db, SQL_INSERT), stats ?? corpusStats(db), p);
}
