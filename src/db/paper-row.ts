// The papers table read and written under Paper's own field names (types.ts): every stage describes a
// paper with that one type (or a Pick of it), and this is the one place that knows which of its fields
// SQLite keeps as JSON text. A statement selects `published_at AS publishedAt`, `code_url AS codeUrl`, …,
// and paperFromRow() turns the row into the Paper fields it selected.
import type { Paper } from '../types.ts';
import { parseStringArray } from './json-columns.ts';

/** Paper fields stored as a JSON array of strings. */
type JsonField = 'authors' | 'categories';

/** Some of a paper's fields as a statement selects them (under Paper's names): the arrays still JSON text. */
export type PaperRow<K extends keyof Paper> = { [F in K]: F extends JsonField ? string : Paper[F] };

/** The selected fields as a Paper view; an unreadable JSON array reads as empty (parseStringArray). */
export function paperFromRow<K extends keyof Paper>(row: PaperRow<K>): Pick<Paper, K> {
  const out: Record<string, unknown> = { ...row };
  if ('authors' in row) out.authors = parseStringArray(row.authors as string);
  if ('categories' in row) out.categories = parseStringArray(row.categories as string);
  return out as Pick<Paper, K>;
}

/** A Paper view in its stored form (the arrays as JSON text), for statements' named parameters. */
export function rowFromPaper<K extends keyof Paper>(paper: Pick<Paper, K>): PaperRow<K> {
  const out: Record<string, unknown> = { ...paper };
  if ('authors' in paper) out.authors = JSON.stringify(paper.authors);
  if ('categories' in paper) out.categories = JSON.stringify(paper.categories);
  return out as PaperRow<K>;
}
