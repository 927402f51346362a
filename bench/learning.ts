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

export function setupLearning(db: Db, clock: Clock): LearningSetup {
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
    // Votes: 3 "more", 2 "less" on yesterday's papers, spread over the listing.
    const first = (db.prepare(`SELECT min(id) AS id FROM papers WHERE paper_key LIKE '2401.%'`).get() as { id: number }).id;
    db.prepare(
      `INSERT OR IGNORE INTO feedback (subscriber_id, paper_id, vote, at)
       SELECT s.id, ${first} + (s.id * 7 + v.j * 13) % ${papers.length}, CASE WHEN v.j < 3 THEN 1 ELSE -1 END, @at
       FROM subscribers s, (SELECT 0 AS j UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4) v
       WHERE s.id % 3 = 0 AND s.status = 'confirmed'`,
    ).run({ at: clock.now().toISOString() });
    // One model per distinct vote set (a reader's set depends on id * 7 mod the listing's size), copied.
    const sets = db
      .prepare(`SELECT min(id) AS id FROM subscribers WHERE id % 3 = 0 AND status = 'confirmed' GROUP BY (id * 7) % ${papers.length}`)
      .pluck()
      .all() as number[];
    for (const id of sets) trainReaderModel(db, id, clock.now());
    db.prepare(
      `INSERT OR IGNORE INTO reader_models (subscriber_id, bias, cal_a, cal_b, weights, positives, negatives, context, trained_at)
       SELECT s.id, m.bias, m.cal_a, m.cal_b, m.weights, m.positives, m.negatives, m.context, m.trained_at
       FROM subscribers s JOIN subscribers r ON r.id % 3 = 0 AND (r.id * 7) % ${papers.length} = (s.id * 7) % ${papers.length}
       JOIN reader_models m ON m.subscriber_id = r.id
       WHERE s.id % 3 = 0 AND s.status = 'confirmed'`,
    ).run();
    const profiles = (db.prepare(`SELECT count(*) AS n FROM reader_models`).get() as { n: number }).n;
    const profileTerms = (db.prepare(`SELECT sum(json_array_length(weights, '$.t')) AS n FROM reader_models`).get() as { n: number }).n;
    return { likeSubscribers, profiles, profileTerms };
  })();
}
