// A reader's votes: "more like this" (+1) and "less like this" (-1), one per paper (the last counts).
// Each vote retrains the reader's model (training.ts) in the same transaction, so the next plan already
// orders and suggests with it.
import type { Db } from '../db/open.ts';
import { statement } from '../db/statements.ts';
import { ensurePaperTerms } from '../match/paper-terms.ts';
import { trainReaderModel } from './training.ts';

const SQL_VOTE = `
  INSERT INTO feedback (subscriber_id, paper_id, vote, at) VALUES (@sid, @pid, @vote, @at)
  ON CONFLICT (subscriber_id, paper_id) DO UPDATE SET vote = excluded.vote, at = excluded.at`;

/** Records a vote (+1 more like this, -1 less) and retrains the reader's model, in one transaction. */
export function recordVote(db: Db, subscriberId: number, paperId: number, vote: 1 | -1, at: Date): void {
  db.transaction(() => {
    ensurePaperTerms(db, paperId);
    statement(db, SQL_VOTE).run({ sid: subscriberId, pid: paperId, vote, at: at.toISOString() });
    trainReaderModel(db, subscriberId, at);
  }).immediate();
}
