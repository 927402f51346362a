// The topic builder's preview on PostgreSQL (src/match/postgres/preview.ts): what building its in-memory
// mirror costs (wall and CPU, the RSS it adds) for N synthetic papers, what a warm preview costs, the
// refresh after a later batch of 500 papers (half new, half updated), and the per-preview version check. A fresh schema, dropped at the end.
// --days D spreads the papers over D daily batches (default 1); --budget-mb M is PREVIEW_MIRROR_MB (default
// its default): the mirror then holds the newest days that fit, and the output says how many papers.
//   npx tsx bench/pg-topic-preview.ts --papers 20000 [--days 60 --budget-mb 32]
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { migratePostgres } from '../src/db/postgres/migrate.ts';
import { DEFAULT_PREVIEW_MIRROR_MB } from '../src/config.ts';
import { createPostgresTopicPreview, SQL_DAY_SIZES, windowFrom } from '../src/match/postgres/preview.ts';
import { buildCorpus, loadAbstracts, seededRandom } from './corpus.ts';
import { withScratchSchema } from './pg-scratch.ts';

const { values } = parseArgs({
  options: {
    papers: { type: 'string', default: '20000' },
    days: { type: 'string', default: '1' },
    'budget-mb': { type: 'string' },
    url: { type: 'string', default: 'postgres://root@127.0.0.1:5432/test' },
  },
});
const N = Number(values.papers);
const DAYS = Number(values.days);
const budgetMb = values['budget-mb'] === undefined ? undefined : Number(values['budget-mb']);
const url = values.url!;
const QUERIES = ['reinforcement learning', 'language model', 'diffusion AND image', '"graph neural"', 'agent OR agents', 'transformer upvotes>=3'];

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const rssMb = () => Math.round(process.memoryUsage().rss / 1e6);

await withScratchSchema(url, { max: 4, prefix: 'bench_tp' }, async (_schema, pool) => {
  await migratePostgres(pool);
  const papers = buildCorpus(loadAbstracts(), N, '2025-11-25', seededRandom(39)).papers;
  const now = '2025-11-25T08:00:00Z';
  // Day d (0 = the newest, 2025-11-25) holds papers [d * perDay, (d + 1) * perDay) counted from the newest.
  const perDay = Math.ceil(N / DAYS);
  const batchIds: number[] = [];
  for (let d = DAYS - 1; d >= 0; d--) {
    const date = new Date(Date.parse('2025-11-25T00:00:00Z') - d * 86_400_000).toISOString().slice(0, 10);
    batchIds[d] = (await pool.query<{ id: number }>(
      `INSERT INTO batches (source, date, content_hash, paper_count, new_paper_count, ingested_at) VALUES ('bench', $3, 'x' || $3, $1, $1, $2) RETURNING id`,
      [perDay, now, date],
    )).rows[0]!.id;
  }
  const batchOf = (i: number) => batchIds[Math.min(DAYS - 1, Math.floor((N - 1 - i) / perDay))]!;
  for (let i = 0; i < N; i += 5000) {
    const part = papers.slice(i, i + 5000);
    const batch = part.map((_, j) => batchOf(i + j));
    await pool.query(
      `INSERT INTO papers (paper_key, title, abstract, authors, url, published_at, upvotes, categories, first_batch_id, created_at, updated_at)
       SELECT k, t, a, au, u, pa, up, c, b, $10, $10 FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::text[], $9::bigint[]) AS x (k, t, a, au, u, pa, up, c, b)`,
      [part.map((p) => p.id), part.map((p) => p.title), part.map((p) => p.abstract), part.map((p) => JSON.stringify(p.authors)),
        part.map((p) => p.url), part.map((p) => p.publishedAt), part.map((p) => p.upvotes), part.map((p) => JSON.stringify(p.categories)), batch, now],
    );
  }
  await pool.query(`INSERT INTO batch_papers (batch_id, paper_id) SELECT first_batch_id, id FROM papers`);
  const days = (await pool.query<{ day: string; papers: number; bytes: number }>(SQL_DAY_SIZES)).rows;
  const textBytes = days.reduce((a, d) => a + d.bytes, 0) / N;
  const budget = (budgetMb ?? DEFAULT_PREVIEW_MIRROR_MB) * 1024 * 1024;
  const from = windowFrom(days, budget);
  const mirrored = days.filter((d) => from === '' || d.day >= from).reduce((a, d) => a + d.papers, 0);

  const clock = { now: () => new Date('2025-11-25T09:00:00Z') };
  const service = createPostgresTopicPreview({ pool, clock, ...(budgetMb === undefined ? {} : { budgetMb }) });
  global.gc?.();
  const rss0 = rssMb();
  let t = performance.now();
  let c = cpuMs();
  await service.preview(QUERIES[0]!);
  const held = service.stats()!;
  const build = { wallMs: Math.round(performance.now() - t), cpuMs: Math.round(cpuMs() - c), rssAddedMb: rssMb() - rss0, papers: held.papers, sqliteMb: Math.round(held.bytes / 1e6), rssMb: rssMb() };
  const ROUNDS = 10;
  t = performance.now();
  c = cpuMs();
  for (let r = 0; r < ROUNDS; r++) for (const q of QUERIES) await service.preview(q);
  const warm = { wallMsPerPreview: +((performance.now() - t) / (ROUNDS * QUERIES.length)).toFixed(2), cpuMsPerPreview: +((cpuMs() - c) / (ROUNDS * QUERIES.length)).toFixed(2) };
  // A later batch of 500 papers, half of them known ones with new upvotes: the next preview refreshes.
  const batch2 = (await pool.query<{ id: number }>(
    `INSERT INTO batches (source, date, content_hash, paper_count, new_paper_count, ingested_at) VALUES ('bench', '2025-11-26', 'y', 500, 250, $1) RETURNING id`,
    [now],
  )).rows[0]!.id;
  await pool.query(
    `INSERT INTO papers (paper_key, title, abstract, authors, url, published_at, upvotes, categories, first_batch_id, created_at, updated_at)
     SELECT paper_key || '-2', title, abstract, authors, url, published_at, upvotes, categories, $1, $2, $2 FROM papers ORDER BY id LIMIT 250`,
    [batch2, now],
  );
  await pool.query(`UPDATE papers SET upvotes = upvotes + 1 WHERE id IN (SELECT id FROM papers ORDER BY id DESC OFFSET 250 LIMIT 250)`);
  await pool.query(`INSERT INTO batch_papers (batch_id, paper_id) SELECT $1, id FROM papers ORDER BY id DESC LIMIT 500`, [batch2]);
  t = performance.now();
  c = cpuMs();
  await service.preview(QUERIES[1]!);
  const refresh = { papers: 500, wallMs: Math.round(performance.now() - t), cpuMs: Math.round(cpuMs() - c) };
  t = performance.now();
  for (let r = 0; r < 50; r++) await pool.query(`SELECT (SELECT coalesce(max(id), 0) FROM batches), (SELECT count(*) FROM like_examples)`);
  const check = { wallMsPerCheck: +((performance.now() - t) / 50).toFixed(2) };
  const mirror = { days: DAYS, budgetMb: budget / 1024 / 1024, from: from || 'all', mirrored, textBytesPerPaper: Math.round(textBytes) };
  console.log(JSON.stringify({ papers: N, mirror, build, warm, refresh, check }));
  service.close();
});
