// The database of `npm run bench:plan -- --population zipf` (the default): the subscribers and papers of
// `npm run bench` (bench/generate.ts: the same corpus, the same Zipf topic draws, half the friendly list
// on topics with no paper today; broad: three common phrases each), written straight into SQL instead of
// through `digest import` (measured by `npm run bench`), with --learning's like: topics and profiles when
// asked. bench/plan-setup.ts (`--population hash`) is the older population: its topics are spread by a
// hash of the subscriber id that gives only 40 distinct topic sets (broad) or 400 (friendly), far fewer
// than any real list, so it flatters planning once per topic set (src/plan/groups.ts).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ManualClock } from '../src/clock.ts';
import type { Db } from '../src/db/open.ts';
import { ingestBatch } from '../src/ingest/ingest.ts';
import { ensureQuery, matchPending } from '../src/match/matcher.ts';
import { parseTopic } from '../src/match/parse.ts';
import type { BenchPaper } from './corpus.ts';
import { generateFiles, type TopicsProfile } from './generate.ts';
import { setupLearning, type VoteMode } from './learning.ts';
import type { PlanSetup } from './plan-setup.ts';

export function buildZipfDatabase(
  db: Db,
  o: { subscribers: number; papers: number; profile: TopicsProfile; learning: boolean; votes?: VoteMode; seed: number; clock: ManualClock },
): PlanSetup & { profiles: number } {
  const dir = mkdtempSync(join(tmpdir(), 'bench-plan-files-'));
  const date = o.clock.now().toISOString().slice(0, 10);
  const t0 = performance.now();
  let topics: number;
  let profiles = 0;
  const batch = join(dir, 'batch.json');
  try {
    const csv = join(dir, 'subscribers.csv');
    const stats = generateFiles({ subscribers: o.subscribers, papers: o.papers, topicsPerSubscriber: 3, profile: o.profile, seed: o.seed, date, batchFile: batch, csvFile: csv });
    topics = stats.distinctTopics;
    const queryOf = new Map<string, number>();
    const now = o.clock.now().toISOString();
    const addSubscriber = db.prepare(
      `INSERT INTO subscribers (email, status, token_salt, timezone, delivery_hour, created_at, confirmed_at)
       VALUES (?, 'confirmed', hex(randomblob(16)), 'UTC', 7, ?, ?)`,
    );
    const addTopic = db.prepare(`INSERT OR IGNORE INTO topics (subscriber_id, query_id, text, position) VALUES (?, ?, ?, ?)`);
    const lines = readFileSync(csv, 'utf8').split('\n');
    db.transaction(() => {
      for (let i = 1; i < lines.length; i++) {
        const m = /^([^,]*),"(.*)",true$/.exec(lines[i]!);
        if (!m) continue;
        const id = Number(addSubscriber.run(m[1], now, now).lastInsertRowid);
        m[2]!.replaceAll('""', '"').split('; ').forEach((text, position) => {
          let q = queryOf.get(text);
          if (q === undefined) queryOf.set(text, (q = ensureQuery(db, parseTopic(text))));
          addTopic.run(id, q, text, position);
        });
      }
    })();
    if (o.learning) {
      // Training indexes the voted papers' terms itself; today's papers are indexed by the match below.
      profiles = setupLearning(db, o.clock, o.votes).profiles;
    }
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  const setupMs = performance.now() - t0;
  const { papers } = JSON.parse(readFileSync(batch, 'utf8')) as { papers: BenchPaper[] };
  rmSync(dir, { recursive: true, force: true });
  ingestBatch(db, { source: 'bench', date, papers: papers.map((p) => ({ ...p, key: p.id })) }, o.clock);
  const t1 = performance.now();
  const matched = matchPending(db);
  return { topics, setupMs, matched, matchMs: performance.now() - t1, profiles };
}
