// `npx tsx bench/match-in-memory.ts [--only 71x1000] [--reps 2] [--common 0.1]`
//
// Topic matching in a private :memory: FTS5 index (src/match/match-in-memory.ts, what a PostgreSQL store
// runs) against the store path (matchPending on a SQLite file), same papers and queries, each measurement in
// its own child process (so peak RSS is that path's), the two paths alternating (store, memory, memory,
// store, ...). Papers: bench/corpus.ts's synthetic ones; queries: the equivalence test's generator
// (tests/integration/match-in-memory-topics.ts), diverse and mostly distinct.
//   build: store = inserting the papers (the FTS5 triggers index them); memory = new MatchIndex + add
//   match: store = matchPending (writes query_matches); memory = MatchIndex.match (returns the rows)
// Figures: BENCHMARKS.md, "PostgreSQL: where matching runs".
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openDatabase } from '../src/db/open.ts';
import { MatchIndex, type MatchPaper, type MatchQuery } from '../src/match/match-in-memory.ts';
import { ensureQuery, matchPending } from '../src/match/matcher.ts';
import { parseTopic, type ParsedTopic } from '../src/match/parse.ts';
import { generatedTopics } from '../tests/integration/match-in-memory-topics.ts';
import { addBatch, addPaper, addSubscriber } from '../tests/integration/matcher-fixture.ts';
import { buildCorpus, loadAbstracts, seededRandom, type BenchPaper } from './corpus.ts';
import { peakRssMb } from './measure.ts';

const SCENARIOS: ReadonlyArray<[papers: number, queries: number]> = [
  [71, 1_000],
  [71, 10_000],
  [1_000, 10_000],
  [5_000, 50_000],
];

/**
 * Share of topic words drawn from running text (frequent words): 0.1 gives ~6 papers a topic on 1,000
 * papers, what readers' real topics do; the test's 0.5 gives ~60 (--common 0.5 to see that).
 */
let COMMON_SHARE = 0.1;

interface ChildResult {
  path: 'store' | 'memory';
  papers: number;
  queries: number;
  buildMs: number;
  matchMs: number;
  matches: number;
  rssBeforeMb: number;
  peakRssMb: number;
}

function inputs(papers: number, queries: number): { papers: BenchPaper[]; topics: ParsedTopic[] } {
  const corpus = buildCorpus(loadAbstracts(), papers, '2025-11-25', seededRandom(39)).papers;
  const texts = corpus.map((p) => `${p.title} ${p.abstract}`);
  const topics: ParsedTopic[] = [];
  for (const text of generatedTopics(texts, Math.ceil(queries * 1.1), 39, COMMON_SHARE)) {
    try {
      topics.push(parseTopic(text));
    } catch {
      // rejected topics are never stored
    }
  }
  const distinct = [...new Map(topics.map((t) => [t.fts, t])).values()].slice(0, queries);
  return { papers: corpus, topics: distinct };
}

const ms = (t0: number) => Math.round(performance.now() - t0);
const rssMb = () => Math.round(process.memoryUsage.rss() / 1048576);

function runStore(papers: BenchPaper[], topics: ParsedTopic[]): Omit<ChildResult, 'papers' | 'queries' | 'path'> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-match-'));
  try {
    const db = openDatabase(join(dir, 'digest.db'));
    const reader = addSubscriber(db, 'reader@example.org');
    const addTopic = db.prepare(`INSERT OR IGNORE INTO topics (subscriber_id, query_id, text, position) VALUES (?, ?, ?, 0)`);
    db.transaction(() => topics.forEach((t) => addTopic.run(reader, ensureQuery(db, t), t.text)))();
    const rssBeforeMb = rssMb();
    let t0 = performance.now();
    const batch = addBatch(db, '2025-11-25');
    db.transaction(() => papers.forEach((p) => addPaper(db, batch, { key: p.id, ...p })))();
    const buildMs = ms(t0);
    t0 = performance.now();
    const result = matchPending(db);
    const matchMs = ms(t0);
    db.close();
    return { buildMs, matchMs, matches: result.matches, rssBeforeMb, peakRssMb: peakRssMb() };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function runMemory(papers: BenchPaper[], topics: ParsedTopic[]): Omit<ChildResult, 'papers' | 'queries' | 'path'> {
  const rows: MatchPaper[] = papers.map((p, i) => ({
    id: i + 1,
    paperKey: p.id,
    title: p.title,
    abstract: p.abstract,
    authors: JSON.stringify(p.authors),
    categories: JSON.stringify(p.categories),
    upvotes: p.upvotes,
  }));
  const queries: MatchQuery[] = topics.map((t, i) => ({
    id: i + 1,
    key: t.fts,
    fts: t.match!,
    matchedThrough: 0,
    minUpvotes: t.minUpvotes,
    likeSelf: null,
    likeCorpus: null,
  }));
  const rssBeforeMb = rssMb();
  let t0 = performance.now();
  const index = new MatchIndex();
  index.add(rows);
  const buildMs = ms(t0);
  t0 = performance.now();
  // Rows handed on query by query (a PostgreSQL store would COPY them into query_matches), not kept.
  let matches = 0;
  index.match(queries, { to: rows.length, onRows: (found) => (matches += found.length) });
  const matchMs = ms(t0);
  index.close();
  return { buildMs, matchMs, matches, rssBeforeMb, peakRssMb: peakRssMb() };
}

function child(path: 'store' | 'memory', nPapers: number, nQueries: number): void {
  const { papers, topics } = inputs(nPapers, nQueries);
  const r = path === 'store' ? runStore(papers, topics) : runMemory(papers, topics);
  process.stdout.write(`${JSON.stringify({ path, papers: nPapers, queries: topics.length, ...r })}\n`);
}

function spawnChild(path: string, papers: number, queries: number): ChildResult {
  const args = [...process.execArgv, fileURLToPath(import.meta.url), '--child', path, '--papers', String(papers), '--queries', String(queries), '--common', String(COMMON_SHARE)];
  const out = spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 24 });
  if (out.status !== 0) throw new Error(`child ${path} ${papers}x${queries} failed: ${out.stderr}`);
  return JSON.parse(out.stdout.trim().split('\n').at(-1)!) as ChildResult;
}

function main(): void {
  const { values: o } = parseArgs({
    options: {
      child: { type: 'string' },
      papers: { type: 'string' },
      queries: { type: 'string' },
      only: { type: 'string' },
      reps: { type: 'string', default: '2' },
      common: { type: 'string', default: '0.1' },
    },
  });
  COMMON_SHARE = Number(o.common);
  if (o.child !== undefined) return child(o.child as 'store' | 'memory', Number(o.papers), Number(o.queries));
  const reps = Number(o.reps);
  console.log('papers x queries | path   | build ms | match ms | matches | RSS before -> peak MB');
  for (const [papers, queries] of SCENARIOS) {
    if (o.only !== undefined && o.only !== `${papers}x${queries}`) continue;
    for (let rep = 0; rep < reps; rep++) {
      // Alternating, the first path swapped every repetition: store, memory, memory, store, ...
      const order = rep % 2 === 0 ? ['store', 'memory'] : ['memory', 'store'];
      for (const path of order) {
        const r = spawnChild(path, papers, queries);
        console.log(
          `${`${papers} x ${r.queries}`.padEnd(16)} | ${path.padEnd(6)} | ${String(r.buildMs).padStart(8)} | ${String(r.matchMs).padStart(8)} | ${String(r.matches).padStart(7)} | ${r.rssBeforeMb} -> ${r.peakRssMb}`,
        );
      }
    }
  }
}

main();
