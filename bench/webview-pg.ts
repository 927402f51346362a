// The web view on PostgreSQL (GET /digests/:token): client CPU and wall time per view, a mirror built per
// request (main before 2026-11-27, copied below) against the pooled, emptied mirrors
// (src/subscribers/postgres/open-digest.ts), rounds alternated. One reader's digest of the fixture day
// (sent on SQLite, moved with the copy) in a fresh schema of the local PostgreSQL; each view is opened
// and rendered to the page's HTML, as the route does.
//   npx tsx bench/webview-pg.ts [views per round = 200] [rounds = 3] [variants, e.g. pooled]
import { BatchMirror } from '../src/send/postgres/batch-mirror.ts';
import { copySqliteToPostgres } from '../src/db/postgres/copy.ts';
import { migratePostgres } from '../src/db/postgres/migrate.ts';
import { answerDbLoss } from '../src/db/postgres/retry.ts';
import { Links } from '../src/links.ts';
import { Tokens } from '../src/tokens.ts';
import { findSubscriberById } from '../src/subscribers/records/repo.ts';
import type { DigestViews } from '../src/subscribers/open-digest.ts';
import { viewOf } from '../src/subscribers/open-digest.ts';
import { createPostgresDigestViews } from '../src/subscribers/postgres/open-digest.ts';
import { resolveLinkPg, WEB_VIEW_KINDS } from '../src/subscribers/records/link-tokens.ts';
import { BATCH_DAY_1, fixtureBatch } from '../tests/helpers/pg-edition.ts';
import { createTestSchema } from '../tests/helpers/postgres.ts';
import { seedSubscribers } from '../tests/helpers/seed.ts';
import { PUBLIC_URL, startTestApp, TEST_SECRET } from '../tests/helpers/test-app.ts';

const perRound = Number(process.argv[2] ?? 200);
const rounds = Number(process.argv[3] ?? 3);
/** A comma-separated list of variants to time (for a CPU profile of one), default all. */
const only = process.argv[4]?.split(',');

const t = await startTestApp({}, new Date().toISOString());
const s = await createTestSchema();
try {
  const db = t.app.db;
  t.app.operator.ingest(fixtureBatch(BATCH_DAY_1));
  seedSubscribers(db, [{ email: 'reader@example.org', topics: ['reinforcement learning', 'language models', 'diffusion'] }]);
  await t.app.pipeline.run({ mode: 'now', fetch: false });
  const row = db.prepare(`SELECT id, subscriber_id AS sid, paper_count AS n FROM digests WHERE status = 'sent'`).get() as { id: number; sid: number; n: number };
  await migratePostgres(s.pool);
  if (!(await copySqliteToPostgres(db, s.pool)).ok) throw new Error('copy failed');
  const { clock } = t.app;
  const tokens = new Tokens(TEST_SECRET);
  const links = new Links(PUBLIC_URL, tokens, clock);
  const subscriber = findSubscriberById(db, row.sid)!;
  const token = new URL(links.webView(subscriber, row.id)).pathname.split('/').pop()!;
  const deps = { pool: s.pool, clock, tokens, links };

  // main's open-digest.ts before this change: a new mirror (its schema built) per request.
  const perRequest: DigestViews = {
    engine: 'postgres',
    open: (tk) =>
      answerDbLoss(async () => {
        const { subscriber: sub, targetId } = await resolveLinkPg(s.pool, tokens, clock, tk, WEB_VIEW_KINDS);
        const mirror = new BatchMirror(s.pool, links);
        try {
          await mirror.prepare([targetId!]);
          return viewOf(mirror.take(targetId!, undefined), sub.id);
        } finally {
          mirror.close();
        }
      }),
  };
  const pooled = createPostgresDigestViews(deps);
  const html = async (v: DigestViews) => t.app.renderer.webView(await v.open(token));
  // The page from a view already loaded: the render's own share, the same in both.
  const loaded = await pooled.open(token);
  const renderOnly: DigestViews = { engine: 'postgres', open: async () => loaded };
  const variants: Array<[string, DigestViews]> = [
    ['per request', perRequest],
    ['pooled', pooled],
    ['render only', renderOnly],
  ];
  // Both give the same page; then a warm-up of each.
  const [a, b] = [await html(perRequest), await html(pooled)];
  if (a !== b || a !== (await html(renderOnly))) throw new Error('the two paths render different pages');
  for (const [, v] of variants) for (let i = 0; i < 20; i++) await html(v);
  console.log(JSON.stringify({ papers: row.n, pageBytes: a.length, perRound, rounds }));
  const results: Record<string, number[][]> = {};
  for (let r = 0; r < rounds; r++) {
    for (const [name, v] of r % 2 === 0 ? variants : [...variants].reverse()) {
      if (only && !only.includes(name)) continue;
      const cpu = process.cpuUsage();
      const t0 = performance.now();
      for (let i = 0; i < perRound; i++) await html(v);
      const c = process.cpuUsage(cpu);
      const cpuMs = (c.user + c.system) / 1000 / perRound;
      const wallMs = (performance.now() - t0) / perRound;
      (results[name] ??= []).push([cpuMs, wallMs]);
      console.log(JSON.stringify({ round: r + 1, variant: name, cpuMsPerView: +cpuMs.toFixed(2), wallMsPerView: +wallMs.toFixed(2) }));
    }
  }
  const rssMb = Math.round(process.memoryUsage().rss / 1e6);
  console.log(JSON.stringify({ rssMb, ...Object.fromEntries(Object.entries(results).map(([k, v]) => [k, v.map(([c]) => +c!.toFixed(2))])) }));
} finally {
  await s.drop();
  await t.close();
}
