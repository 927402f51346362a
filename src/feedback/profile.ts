// A subscriber's profile: Rocchio-style term weights over the FTS5 vocabulary, rebuilt in SQL from
// their votes whenever they vote. weight(term) = BETA x mean of the liked papers' vectors
// - GAMMA x mean of the disliked ones (paper vectors from paper_terms, unit length).
import type { Db } from '../db/open.ts';
import { statement } from '../db/statements.ts';
import { ensurePaperTerms } from './paper-terms.ts';

export const BETA = 1.0;
export const GAMMA = 0.75;
/**
 * Strongest terms kept per profile: bounds the joins that score papers with it (planning cost grows
 * with it: each term reaches every paper of the day that has it among its PAPER_TERMS).
 */
export const PROFILE_TERMS = 16;

const SQL_VOTE = `
  INSERT INTO feedback (subscriber_id, paper_id, vote, at) VALUES (@sid, @pid, @vote, @at)
  ON CONFLICT (subscriber_id, paper_id) DO UPDATE SET vote = excluded.vote, at = excluded.at`;
const SQL_CLEAR = `DELETE FROM profile_terms WHERE subscriber_id = ?`;
const SQL_REBUILD = `
  WITH counts AS (
    SELECT sum(vote > 0) AS pos, sum(vote < 0) AS neg FROM feedback WHERE subscriber_id = @sid
  )
  INSERT INTO profile_terms (subscriber_id, term, weight, rank)
  SELECT @sid, term, w, row_number() OVER (ORDER BY w DESC, term) FROM (
    SELECT pt.term,
           -- 1.0 *: BETA prints as '1', and SQLite would divide integers.
           sum(CASE WHEN f.vote > 0 THEN 1.0 * ${BETA} / max(1, c.pos) ELSE -1.0 * ${GAMMA} / max(1, c.neg) END * pt.weight) AS w
    FROM feedback f CROSS JOIN counts c
    JOIN paper_terms pt ON pt.paper_id = f.paper_id
    WHERE f.subscriber_id = @sid
    GROUP BY pt.term
  )
  WHERE abs(w) > 0.001
  ORDER BY abs(w) DESC, term
  LIMIT ${PROFILE_TERMS}`;

/** Records a vote (+1 more like this, -1 less) and rebuilds the profile, in one transaction. */
export function recordVote(db: Db, subscriberId: number, paperId: number, vote: 1 | -1, at: Date): void {
  db.transaction(() => {
    ensurePaperTerms(db, paperId);
    statement(db, SQL_VOTE).run({ sid: subscriberId, pid: paperId, vote, at: at.toISOString() });
    statement(db, SQL_CLEAR).run(subscriberId);
    statement(db, SQL_REBUILD).run({ sid: subscriberId });
  }).immediate();
}
