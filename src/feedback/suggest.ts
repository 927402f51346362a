// What the planner adds for subscribers with a feedback profile (profile.ts), in SQL, per chunk:
//  * PROFILE_SCORE: a paper's score for the row's subscriber (dot product of the paper's and the
//    profile's term vectors), a key of the digest order after "topics matched" (planner.ts);
//  * suggestions: up to three papers of the row's range that no topic of theirs matched and that
//    their profile ranks high: "you may also like" (unless they turned it off).
import type { Db } from '../db/open.ts';
import { statement } from '../db/statements.ts';

/** Suggested papers per digest. */
export const MAX_SUGGESTIONS = 3;
/**
 * Suggestions are found through the profile's strongest positive terms only: each term reaches every
 * paper of the range that has it, so this bounds the join (with all of a 64-term profile: 11.8 s for
 * 3,333 profiled subscribers on a loaded machine; 20 of 40 terms: 5.4 s).
 */
export const SUGGESTION_TERMS = 16;
/**
 * A paper reaches the candidates only through terms that weigh at least this much in its own vector
 * (unit length, 48 terms: 0.14 on average): a word common to most papers of the day is weak in each
 * of them, and joining through it reached nearly every paper of the range.
 */
export const MIN_TERM_WEIGHT = 0.1;
/** Best-scoring papers per row looked at before "no topic matched it" is checked. */
export const SUGGESTION_CANDIDATES = 40;
/** Least profile score a suggestion needs (paper and profile vectors are about unit length). */
export const MIN_SUGGESTION_SCORE = 0.05;

/**
 * The planner's `scores` CTE: the profile score of every (subscriber, paper) item of the chunk whose
 * subscriber has a profile (`profiled`), in one join: profile terms (by primary key) into paper_terms'
 * primary key. As a correlated subquery per item inside the planner's aggregate, planning 10,000
 * subscribers (a third profiled, loaded machine) took 22.8 s; with this join, 8.8 s.
 */
export const PROFILE_SCORES_SQL = `
    SELECT i.sid, i.paper_id, sum(pt.weight * pr.weight) AS score
    FROM profiled f
    JOIN items i ON i.sid = f.id
    JOIN profile_terms pr ON pr.subscriber_id = i.sid
    JOIN paper_terms pt ON pt.paper_id = i.paper_id AND pt.term = pr.term
    GROUP BY i.sid, i.paper_id`;

/**
 * Score of paper `paperCol` for subscriber `subscriberCol`. Only evaluated for subscribers in the
 * planner's `profiled` set, so a subscriber without votes costs nothing.
 */
export function profileScoreSql(subscriberCol: string, paperCol: string): string {
  // Driven from the profile (PROFILE_TERMS rows, by primary key) into paper_terms' primary key: one
  // probe per profile term, fewer than the paper's PAPER_TERMS.
  return `coalesce((SELECT sum(pt.weight * pr.weight) FROM profile_terms pr
                    JOIN paper_terms pt ON pt.paper_id = ${paperCol} AND pt.term = pr.term
                    WHERE pr.subscriber_id = ${subscriberCol}), 0)`;
}

/**
 * Suggestions for the rows just planned (ids above :before). Candidates are the papers of the row's
 * range that share a positive profile term (through the paper_terms term index), scored by the dot
 * product; only each row's best SUGGESTION_CANDIDATES are then checked against the subscriber's topic
 * matches and votes (the first version checked every candidate and, with per-item profile subqueries,
 * planned 10,000 subscribers, a third of them profiled, in 74 s on a loaded machine).
 */
const SQL_SUGGEST = `
  WITH cand AS MATERIALIZED (
    SELECT d.id AS digest_id, d.subscriber_id AS sid, pt.paper_id, sum(pt.weight * pr.weight) AS score
    FROM digests d
    JOIN subscribers s ON s.id = d.subscriber_id AND s.suggestions = 1
    JOIN profile_terms pr ON pr.subscriber_id = d.subscriber_id AND pr.rank <= ${SUGGESTION_TERMS} AND pr.weight > 0
    JOIN paper_terms pt ON pt.term = pr.term AND pt.paper_id > d.from_paper AND pt.paper_id <= d.to_paper
                        AND pt.weight >= ${MIN_TERM_WEIGHT}
    WHERE d.id > :before
    GROUP BY d.id, pt.paper_id
    HAVING score >= ${MIN_SUGGESTION_SCORE}
  ),
  best AS MATERIALIZED (
    SELECT * FROM (SELECT c.*, row_number() OVER (PARTITION BY digest_id ORDER BY score DESC, paper_id) AS rn FROM cand c)
    WHERE rn <= ${SUGGESTION_CANDIDATES}
  ),
  kept AS MATERIALIZED (
    SELECT b.digest_id, b.paper_id, b.score,
           row_number() OVER (PARTITION BY b.digest_id ORDER BY b.score DESC, b.paper_id) AS rn
    FROM best b
    WHERE NOT EXISTS (SELECT 1 FROM topics t JOIN query_matches m ON m.query_id = t.query_id
                      WHERE t.subscriber_id = b.sid AND m.paper_id = b.paper_id)
      AND NOT EXISTS (SELECT 1 FROM feedback f WHERE f.subscriber_id = b.sid AND f.paper_id = b.paper_id)
  )
  INSERT OR IGNORE INTO digest_suggestions (digest_id, paper_id, score)
  SELECT digest_id, paper_id, score FROM kept WHERE rn <= ${MAX_SUGGESTIONS}`;

/** Writes the suggestions of the digest rows with ids above `before` (inside the planner's chunk transaction). */
export function suggestForNewRows(db: Db, before: number): number {
  return statement(db, SQL_SUGGEST).run({ before }).changes;
}
