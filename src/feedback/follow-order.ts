// The order of a digest whose reader follows an author (an `author:"Name"` topic, what the follow link adds).
// The planner lists papers by topics matched, so a followed author's paper that also matched a topic
// counted twice and came first whether or not it was of the reader's interest: on the relevance study
// followers were below a non-clicking reader on 10 of 54 days (BENCHMARKS.md, reader models). Here:
//  * a followed author does not count as a matched topic: the papers the other topics brought keep the
//    order they would have without the follow (topics matched, upvotes, relevance among those topics);
//  * papers only a followed author brought come first in the row; the loader lists them apart, "From
//    authors you follow", above the numbered list (render/view.ts), so the ranked list is the one without
//    the follow. In the study 66-73% of them were of the reader's interest against 40% of a topic list;
//    listed after the topics' first five, they sat below irrelevant topic papers (followers worse than the
//    baseline on 19 of 54 days); ranked first, they pushed the topics' papers down on days the author wrote
//    on something else (7 days, P@5 lower on 3); apart: 0 days. BENCHMARKS.md, reader models, eighth pass.
// The reader model's order (model-pass.ts) then starts from this one instead of the planner's.
import type { Db } from '../db/open.ts';
import { statement } from '../db/statements.ts';

/** Topics that are a followed author: `author:"Name"` and nothing else (SQLite GLOB). */
export const AUTHOR_TOPIC_SQL = `t.text GLOB 'author:"*"' AND t.text NOT GLOB '*" *'`;

/** Per paper of a range: the reader's unmuted topics other than followed authors that matched it. */
const SQL_TOPIC_ORDER = `
  SELECT m.paper_id AS paperId, count(*) AS n, min(m.score) AS best, p.upvotes
  FROM topics t
  JOIN query_matches m ON m.query_id = t.query_id AND m.paper_id > ? AND m.paper_id <= ?
  JOIN papers p ON p.id = m.paper_id
  WHERE t.subscriber_id = ? AND t.muted = 0 AND NOT (${AUTHOR_TOPIC_SQL})
  GROUP BY m.paper_id`;

interface TopicMatch {
  paperId: number;
  n: number;
  best: number;
  upvotes: number;
}

/**
 * The positions of `ids` (a row's papers in the planner's order) in the order without the follow, and
 * per position the topics matched as the model's order counts them (a followed author not counted).
 */
export function followOrder(db: Db, row: { sid: number; fromPaper: number; toPaper: number }, ids: readonly number[]): { order: number[]; matched: number[] } {
  const byPaper = new Map<number, TopicMatch>();
  for (const m of statement<[number, number, number], TopicMatch>(db, SQL_TOPIC_ORDER).all(row.fromPaper, row.toPaper, row.sid)) byPaper.set(m.paperId, m);
  const topics: number[] = [];
  const authorOnly: number[] = [];
  ids.forEach((id, i) => (byPaper.has(id) ? topics : authorOnly).push(i));
  // The planner's own keys, as create.ts orders: more topics, more upvotes, lower bm25, lower id.
  topics.sort((x, y) => {
    const a = byPaper.get(ids[x]!)!;
    const b = byPaper.get(ids[y]!)!;
    return b.n - a.n || b.upvotes - a.upvotes || a.best - b.best || ids[x]! - ids[y]!;
  });
  const order = [...authorOnly, ...topics];
  // A paper only a followed author brought counts as one topic (the follow), one that a topic brought too as that topic.
  const matched = ids.map((id) => byPaper.get(id)?.n ?? 1);
  return { order, matched };
}
