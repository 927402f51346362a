// `npx tsx bench/match-pg-fts.ts [--db postgres] [--topics 1000]` (needs psql and a local PostgreSQL)
//
// What compiling the topic language to PostgreSQL full-text search would change, measured: the fixture
// listings (113 papers) and the equivalence test's topics (the acceptance ones and generated ones) run on
// the SQLite store (matchPending, FTS5 + bm25) and on PostgreSQL (one tsvector per paper, title/abstract/
// authors/categories as weights A/B/C/D, the canonical FTS5 expression compiled to a tsquery with <->
// phrases, :* prefixes and weight labels as column filters; ts_rank). Two text search configurations:
// `english` as shipped, and `digest_fts` (unaccent + the english snowball stemmer without stop words).
// Reports the share of topics whose papers differ and of those whose order differs. Works in a scratch
// database it creates and drops (pgmatch_scratch). Figures: BENCHMARKS.md, "PostgreSQL: where matching runs".
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { matchPending } from '../src/match/matcher.ts';
import { parseTopic } from '../src/match/parse.ts';
import { generatedTopics, LISTED_TOPICS } from '../tests/integration/match-in-memory-topics.ts';
import { FIXTURE, addBatch, addPaper, addSubscriber, loadFixture } from '../tests/integration/matcher-fixture.ts';
import { tempDatabase } from '../tests/helpers/seed.ts';
import { ensureQuery } from '../src/match/matcher.ts';

const { values: o } = parseArgs({ options: { host: { type: 'string', default: '127.0.0.1' }, db: { type: 'string', default: 'test' }, topics: { type: 'string', default: '1000' } } });
const SCRATCH = 'pgmatch_scratch';

function psql(db: string, sql: string): string {
  const out = spawnSync('psql', ['-h', o.host!, '-U', 'postgres', '-d', db, '-v', 'ON_ERROR_STOP=1', '-qAt', '-F', '\t'], { input: sql, encoding: 'utf8', maxBuffer: 1 << 26 });
  if (out.status !== 0) throw new Error(out.stderr);
  return out.stdout;
}

const LABEL: Record<string, string> = { title: 'A', abstract: 'B', authors: 'C', categories: 'D' };

/** The canonical FTS5 expression (src/match/fts.ts) as a tsquery; lexemes are stemmed by PostgreSQL. */
function toTsquery(fts: string): string {
  const re = /\{([a-z ]+)\} :|"((?:[^"]|"")*)"(\*?)|\(|\)|AND|OR|NOT/g;
  const toks = [...fts.matchAll(re)].map((m) => m[0]);
  let i = 0;
  const labels: string[] = [];
  const seq = (): string => {
    let out = operand();
    while (i < toks.length && toks[i] !== ')') {
      const op = toks[i++]!;
      const rhs = operand();
      out = op === 'AND' ? `(${out} & ${rhs})` : op === 'OR' ? `(${out} | ${rhs})` : `(${out} & !${rhs})`;
    }
    return out;
  };
  const operand = (): string => {
    const t = toks[i++]!;
    if (t.startsWith('{')) {
      labels.push(t.slice(1, t.indexOf('}')).split(' ').map((c) => LABEL[c]).join(''));
      const inner = operand();
      labels.pop();
      return inner;
    }
    if (t === '(') {
      const inner = seq();
      i++; // ')'
      return `(${inner})`;
    }
    const m = /^"((?:[^"]|"")*)"(\*?)$/.exec(t)!;
    const words = m[1]!.replaceAll('""', '"').split(' ');
    const label = labels.at(-1) ?? '';
    const lex = words.map((w, k) => `'${w.replaceAll("'", "''")}'${k === words.length - 1 && m[2] ? ':*' : ''}${label ? `${k === words.length - 1 && m[2] ? '' : ':'}${label}` : ''}`);
    return `(${lex.join(' <-> ')})`;
  };
  return seq();
}

// 1. The SQLite store: the fixture listings, the topics, matchPending.
const listing = (u: URL) => (JSON.parse(readFileSync(u, 'utf8')) as { papers: Array<{ id: string; title: string; abstract: string; authors: string[]; categories: string[]; upvotes: number }> }).papers;
const more = [...listing(new URL('../tests/fixtures/batches/2025-11-25.json', import.meta.url)), ...listing(new URL('../tests/fixtures/batches/2025-11-26.json', import.meta.url))];
const t = tempDatabase('match-pg-fts-');
const db = t.db;
loadFixture(db, addBatch(db, '2025-11-25'));
const batch = addBatch(db, '2025-11-26');
more.forEach((p) => addPaper(db, batch, { key: p.id, ...p }));
const reader = addSubscriber(db, 'reader@example.org');
const texts = [...FIXTURE, ...more].map((p) => `${p.title} ${p.abstract}`);
const topics = new Map<number, { text: string; tsq: string }>();
for (const text of [...LISTED_TOPICS, ...generatedTopics(texts, Number(o.topics), 41)]) {
  let parsed;
  try {
    parsed = parseTopic(text);
  } catch {
    continue;
  }
  if (parsed.match === null || parsed.minUpvotes > 0) continue; // like: and upvotes>= are filters outside text search
  const id = ensureQuery(db, parsed);
  db.prepare(`INSERT OR IGNORE INTO topics (subscriber_id, query_id, text, position) VALUES (?, ?, ?, 0)`).run(reader, id, text);
  topics.set(id, { text, tsq: toTsquery(parsed.match) });
}
matchPending(db);
const papers = db.prepare<[], { id: number; title: string; abstract: string; authors: string; categories: string }>(`SELECT id, title, abstract, authors, categories FROM papers`).all();
const sqlite = new Map<number, Array<[number, number]>>();
for (const r of db.prepare<[], { q: number; p: number; s: number }>(`SELECT query_id AS q, paper_id AS p, score AS s FROM query_matches`).all()) {
  sqlite.set(r.q, [...(sqlite.get(r.q) ?? []), [r.p, r.s]]);
}
t.cleanup();

// 2. PostgreSQL: the same papers and the compiled queries, in a scratch database.
psql(o.db!, `DROP DATABASE IF EXISTS ${SCRATCH}; CREATE DATABASE ${SCRATCH};`);
try {
  const lit = (s: string) => `$j$${s}$j$`;
  const setup = `
    CREATE EXTENSION unaccent;
    CREATE TEXT SEARCH DICTIONARY english_nostop (TEMPLATE = snowball, LANGUAGE = english);
    CREATE TEXT SEARCH CONFIGURATION digest_fts (COPY = english);
    ALTER TEXT SEARCH CONFIGURATION digest_fts ALTER MAPPING FOR asciiword, word, hword, hword_part, hword_asciipart, asciihword WITH unaccent, english_nostop;
    CREATE TABLE p (id int PRIMARY KEY, title text, abstract text, authors text, categories text);
    INSERT INTO p SELECT * FROM json_to_recordset(${lit(JSON.stringify(papers))}) AS x(id int, title text, abstract text, authors text, categories text);
    CREATE TABLE q (id int PRIMARY KEY, tsq text);
    INSERT INTO q SELECT * FROM json_to_recordset(${lit(JSON.stringify([...topics].map(([id, v]) => ({ id, tsq: v.tsq }))))}) AS x(id int, tsq text);`;
  const run = (cfg: string) => `
    SELECT q.id, p.id, ts_rank(d.doc, to_tsquery('${cfg}', q.tsq)) FROM q
    CROSS JOIN p
    CROSS JOIN LATERAL (SELECT setweight(to_tsvector('${cfg}', p.title), 'A') || setweight(to_tsvector('${cfg}', p.abstract), 'B')
                               || setweight(to_tsvector('${cfg}', p.authors), 'C') || setweight(to_tsvector('${cfg}', p.categories), 'D') AS doc) d
    WHERE d.doc @@ to_tsquery('${cfg}', q.tsq);`;
  psql(SCRATCH, setup);
  for (const cfg of ['english', 'digest_fts']) {
    const pg = new Map<number, Array<[number, number]>>();
    for (const line of psql(SCRATCH, `SET client_min_messages = warning; ${run(cfg)}`).trim().split('\n').filter(Boolean)) {
      const [q, p, s] = line.split('\t').map(Number) as [number, number, number];
      pg.set(q, [...(pg.get(q) ?? []), [p, -s]]); // ts_rank: higher is better; negated to sort as bm25
    }
    report(cfg, pg);
  }
} finally {
  psql(o.db!, `DROP DATABASE IF EXISTS ${SCRATCH};`);
}

function report(cfg: string, pg: Map<number, Array<[number, number]>>): void {
  const order = (rows: Array<[number, number]> | undefined) => (rows ?? []).slice().sort((a, b) => a[1] - b[1] || a[0] - b[0]).map((r) => r[0]);
  let samePairs = 0, sameOrder = 0, multi = 0, missing = 0, extra = 0, pairs = 0;
  const examples: string[] = [];
  for (const [id, { text }] of topics) {
    const a = new Set((sqlite.get(id) ?? []).map((r) => r[0]));
    const b = new Set((pg.get(id) ?? []).map((r) => r[0]));
    pairs += a.size;
    const miss = [...a].filter((x) => !b.has(x)).length;
    const add = [...b].filter((x) => !a.has(x)).length;
    missing += miss;
    extra += add;
    if (miss === 0 && add === 0) {
      samePairs++;
      if (a.size >= 2) {
        multi++;
        if (order(sqlite.get(id)).join() === order(pg.get(id)).join()) sameOrder++;
      }
    } else if (examples.length < 8 && LISTED_TOPICS.includes(text)) examples.push(`${text} (-${miss} +${add})`);
  }
  console.log(`${cfg}: ${topics.size} topics, ${pairs} FTS5 pairs; same papers ${samePairs} (${((100 * samePairs) / topics.size).toFixed(1)}%); pairs missing ${missing}, extra ${extra}; of ${multi} same-paper topics with 2+ papers, same order (ts_rank vs bm25) ${sameOrder} (${((100 * sameOrder) / Math.max(1, multi)).toFixed(1)}%)`);
  console.log(`  acceptance topics that differ: ${examples.join('; ')}`);
}
