// The model pass's reads and its one write of its own (model-pass.ts): the rows (or, before they are
// written, the planner's chunk readers) of readers with a model, and their suggestions.
import { AUTHOR_TOPIC_SQL } from './follow-order.ts';

/**
 * What the pass reads of a reader (sid) over their range (lo, hi]: settings, model, follows, and the papers of
 * the range they voted on or a muted topic of theirs matched, each list as one string (see SQL_ROWS).
 */
const readerColumns = (sid: string, lo: string, hi: string) => `
         s.suggestions, s.model_only AS modelOnly, m.bias,
         EXISTS (SELECT 1 FROM topics t WHERE t.subscriber_id = ${sid} AND t.muted = 0 AND ${AUTHOR_TOPIC_SQL}) AS follows, m.cal_a AS a, m.cal_b AS b, m.weights,
         (SELECT group_concat(f.paper_id) FROM feedback f
          WHERE f.subscriber_id = ${sid} AND f.paper_id > ${lo} AND f.paper_id <= ${hi}) AS voted,
         (SELECT group_concat(q.paper_id) FROM topics t
          JOIN query_matches q ON q.query_id = t.query_id AND q.paper_id > ${lo} AND q.paper_id <= ${hi}
          WHERE t.subscriber_id = ${sid} AND t.muted = 1) AS mutedHits
  FROM`;
const hasModelOrVotes = (sid: string) => `(m.subscriber_id IS NOT NULL OR EXISTS (SELECT 1 FROM feedback f WHERE f.subscriber_id = ${sid}))`;

/**
 * The chunk's new rows whose reader has a model or votes, with what the pass needs of them: among it the
 * papers of the row's range the reader voted on or a muted topic of theirs matched (never suggested), each
 * as one comma-separated list. One string per row, not one result row per paper: a reader who voted on
 * 40 papers of their range cost 40 JavaScript objects (1.4M per 33k voters, a fifth of the pass).
 */
export const SQL_ROWS = `
  SELECT d.id, d.subscriber_id AS sid, d.from_paper AS fromPaper, d.to_paper AS toPaper, d.items, d.topic_ids AS topicIds,${readerColumns('d.subscriber_id', 'd.from_paper', 'd.to_paper')} digests d
  JOIN subscribers s ON s.id = d.subscriber_id
  LEFT JOIN reader_models m ON m.subscriber_id = d.subscriber_id
  WHERE d.id > ? AND d.items IS NOT NULL
    AND ${hasModelOrVotes('d.subscriber_id')}`;
/**
 * SQL_ROWS before the rows exist (planRows): the planner's chunk readers (its temp table plan_slots,
 * plan/planner.ts, grouped = 1) who have a model or votes, their range being (watermark, through].
 */
export const SQL_READERS = `
  SELECT e.id AS sid,${readerColumns('e.id', 'e.watermark', 'e.through')} plan_slots e
  JOIN subscribers s ON s.id = e.id
  LEFT JOIN reader_models m ON m.subscriber_id = e.id
  WHERE e.grouped = 1
    AND ${hasModelOrVotes('e.id')}`;
export const SQL_MODEL = `SELECT bias, cal_a AS a, cal_b AS b, weights FROM reader_models WHERE subscriber_id = ?`;
export const SUGGESTION_TUPLE = '(?, ?, ?, ?)';
/** One suggestion; the chunk's are written with its tuple repeated (a hundred per statement). */
export const SQL_SUGGEST = `INSERT OR IGNORE INTO digest_suggestions (digest_id, paper_id, score, reason_paper) VALUES ${SUGGESTION_TUPLE}`;

export interface Row {
  id: number;
  sid: number;
  fromPaper: number;
  toPaper: number;
  items: Uint8Array;
  /** The row's papers already merged from its lists, in display order (planRows), in place of `items`. */
  merged?: { ids: number[]; masks: number[] };
  topicIds: string;
  suggestions: number;
  modelOnly: number;
  /** 1 when the reader follows an author (follow-order.ts). */
  follows: number;
  bias: number | null;
  a: number | null;
  b: number | null;
  weights: string | null;
  /** Paper ids never suggested to this reader (comma-separated), or null. */
  voted: string | null;
  mutedHits: string | null;
}

export interface Model {
  bias: number;
  a: number;
  b: number;
  terms: number[];
  w: number[];
  anchors: Array<number | null>;
  /** Its held-out quality clears the bar (quality.ts): it may order the list and rank suggestions inside it. */
  trusted: boolean;
}
