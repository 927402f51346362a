// `npm run bench -- … --learning`: issue 13's load. Before today's batch, yesterday's listing (the 71
// real abstracts of bench/data/abstracts.json, as papers 2401.*) is ingested and matched; then a third
// of the subscribers get a like: topic (one of 24 example papers: 24 distinct example queries) and a
// model (3 "more" and 2 "less" votes on yesterday's papers; 71 distinct vote sets, each trained once by
// src/feedback/training.ts and copied to the readers who share it). The match stage then runs the like:
// queries and indexes today's papers' terms; the plan stage orders the modelled readers' papers by their
// model and adds their suggestions.
import { readFileSync } from 'node:fs';
import type { Clock } from '../src/clock.ts';
import type { Db } from '../src/db/open.ts';
import { trainReaderModel } from '../src/feedback/training.ts';
import { ingestBatch } from '../src/ingest/ingest.ts';
import { ensureQuery, matchPending } from '../src/match/matcher.ts';
import { parseTopic } from '../src/match/parse.ts';

const EXAMPLES = 24;

export interface LearningSetup {
  likeSubscribers: number;
  profiles: number;
  profileTerms: number;
}

/**
 * How the model readers voted: `random` (3 "more", 2 "less" on papers spread over the listing: flat
 * models, the neighbour path) or `interest` (a reader of one of three interests, as in
 * bench/relevance-study.ts: "more" on every paper of it, "less" on ten others: calibrated models, whose
 * confident suggestions are ranked inside the list).
 */
export type VoteMode = 'random' | 'interest';
const INTEREST_RULES = [/\b(games?|gameplay|poker|chess)\b/i, /\b(LLMs?|language models?)\b/i, /\breasoning\b/i];

export function setupLearning(db: Db, clock: Clock, votes: VoteMode = 'random'): LearningSetup {
  const data = JSON.parse(readFileSync(new URL('./data/abstracts.json', import.meta.url), 'utf8')) as {
    papers: Array<{ title: string; abstract: string; upvotes?: number }>;
  };
  const yesterday = new Date(clock.now().getTime() - 86_400_000).toISOString().slice(0, 10);
  const papers = data.papers.map((p, i) => ({
    key: `2401.${String(10000 + i)}`,
    title: p.title,
    abstract: p.abstract,
    authors: [],
    url: `https://arxiv.org/abs/2401.${String(10000 + i)}`,
    publishedAt: yesterday,
    upvotes: p.upvotes ?? 0,
    categories: [],
  }));
  ingestBatch(db, { source: 'bench-yesterday', date: yesterday, papers }, clock);
  matchPending(db); // yesterday's matching (and paper terms), as the previous day's run would have done

  db.exec(`CREATE TEMP TABLE bench_examples (k INTEGER PRIMARY KEY, qid INTEGER, text TEXT)`);
  const addExample = db.prepare(`INSERT INTO bench_examples (k, qid, text) VALUES (?, ?, ?)`);
  for (let k = 0; k < EXAMPLES; k++) {
    const text = `like:${papers[(k * 3) % papers.length]!.key}`;
    addExample.run(k, ensureQuery(db, parseTopic(text)), text);
  }
  return db.transaction((): LearningSetup => {
    const likeSubscribers = db
      .prepare(
        `INSERT OR IGNORE INTO topics (subscriber_id, query_id, text, position)
         SELECT s.id, e.qid, e.text, 100 FROM subscribers s JOIN bench_examples e ON e.k = (s.id / 3) % ${EXAMPLES}
         WHERE s.id % 3 = 0 AND s.status = 'confirmed'`,
      )
      .run().changes;
    const first = (db.prepare(`SELECT min(id) AS id FROM papers WHERE paper_key LIKE '2401.%'`).get() as { id: number }).id;
    if (votes === 'interest') interestVotes(db, clock, papers, first);
    else randomVotes(db, clock, papers.length, first);
    const profiles = (db.prepare(`SELECT count(*) AS n FROM reader_models`).get() as { n: number }).n;
    const profileTerms = (db.prepare(`SELECT sum(json_array_length(weights, '$.t')) AS n FROM reader_models`).get() as { n: number }).n;
    return { likeSubscribers, profiles, profileTerms };
  })();
}

/** 3 "more", 2 "less" per reader on yesterday's papers; one model per distinct vote set, copied. */
function randomVotes(db: Db, clock: Clock, listing: number, first: number): void {
  db.prepare(
    `INSERT OR IGNORE INTO feedback (subscriber_id, paper_id, vote, at)
     SELECT s.id, ${first} + (s.id * 7 + v.j * 13) % ${listing}, CASE WHEN v.j < 3 THEN 1 ELSE -1 END, @at
     FROM subscribers s, (SELECT 0 AS j UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4) v
     WHERE s.id % 3 = 0 AND s.status = 'confirmed'`,
  ).run({ at: clock.now().toISOString() });
  // One model per distinct vote set (a reader's set depends on id * 7 mod the listing's size), copied.
  copyModels(db, clock, `(id * 7) % ${listing}`);
}

/** Reader id / 3 mod 3 is their interest: "more" on its papers of yesterday, "less" on ten others. */
function interestVotes(db: Db, clock: Clock, papers: Array<{ title: string; abstract: string }>, first: number): void {
  const vote = db.prepare(
    `INSERT OR IGNORE INTO feedback (subscriber_id, paper_id, vote, at)
     SELECT id, @paper, @vote, @at FROM subscribers WHERE id % 3 = 0 AND (id / 3) % 3 = @k AND status = 'confirmed'`,
  );
  INTEREST_RULES.forEach((rule, k) => {
    let less = 0;
    papers.forEach((p, i) => {
      const liked = rule.test(`${p.title} ${p.abstract}`);
      if (!liked && less++ >= 10) return;
      vote.run({ paper: first + i, vote: liked ? 1 : -1, at: clock.now().toISOString(), k });
    });
  });
  copyModels(db, clock, '(id / 3) % 3');
}

/** Trains one reader per group (`key`, an expression of the subscriber id) and copies the model to the rest. */
function copyModels(db: Db, clock: Clock, key: string): void {
  const sets = db.prepare(`SELECT min(id) AS id FROM subscribers WHERE id % 3 = 0 AND status = 'confirmed' GROUP BY ${key}`).pluck().all() as number[];
  for (const id of sets) trainReaderModel(db, id, clock.now());
  const k = (alias: string) => key.replaceAll('id', `${alias}.id`);
  db.prepare(
    `INSERT OR IGNORE INTO reader_models (subscriber_id, bias, cal_a, cal_b, weights, positives, negatives, context, trained_at)
     SELECT s.id, m.bias, m.cal_a, m.cal_b, m.weights, m.positives, m.negatives, m.context, m.trained_at
     FROM subscribers s JOIN subscribers r ON r.id % 3 = 0 AND ${k('r')} = ${k('s')}
     JOIN reader_models m ON m.subscriber_id = r.id
     WHERE s.id % 3 = 0 AND s.status = 'confirmed'`,
  ).run();
}
