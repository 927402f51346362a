// The three match statements as SELECTs of (paperId, score), shared by the store's matcher (which inserts
// them into query_matches) and the in-memory index (src/match/match-in-memory.ts), so both score alike.

/**
 * bm25 column weights for papers_fts (title, abstract, authors, categories): a word in the title
 * counts more than the same word in the abstract. Scores are negative; lower is better.
 */
export const BM25 = 'bm25(papers_fts, 3.0, 1.0, 1.0, 1.0)';

/** A query's papers in (@from, @to]. */
export const SQL_MATCH = `
  SELECT rowid AS paperId, ${BM25} AS score FROM papers_fts
  WHERE papers_fts MATCH @fts AND rowid > @from AND rowid <= @to`;

/** The same with upvotes>=N: papers with fewer upvotes when matched are left out. */
export const SQL_MATCH_UPVOTES = `
  SELECT papers_fts.rowid AS paperId, ${BM25} AS score
  FROM papers_fts JOIN papers p ON p.id = papers_fts.rowid
  WHERE papers_fts MATCH @fts AND papers_fts.rowid > @from AND papers_fts.rowid <= @to AND p.upvotes >= @minUpvotes`;

/**
 * A like: query: its OR of the examples' terms, keeping the papers that score at least @threshold
 * (LIKE_THRESHOLD x the examples' own score; bm25 is negative, lower is better). The examples
 * themselves (@examples, a JSON array of their ids) are never their own match.
 */
export const SQL_MATCH_LIKE = `
  SELECT c.id AS paperId, c.score
  FROM (SELECT rowid AS id, ${BM25} AS score FROM papers_fts
        WHERE papers_fts MATCH @fts AND rowid > @from AND rowid <= @to) c
  JOIN papers p ON p.id = c.id
  WHERE c.score <= @threshold AND p.upvotes >= @minUpvotes
    AND p.paper_key NOT IN (SELECT value FROM json_each(@examples))`;
