// `npx tsx bench/learning-stages.ts [--subscribers 100000] [--papers 1000] [--plain]`: issue 13's load
// (bench/learning.ts: a third of the subscribers with a like: topic and a feedback profile) through
// ingest, match and plan only, with the parts of each timed apart; no sending, so a 100k run takes a
// couple of minutes on a shared machine instead of the full benchmark's twenty. `--plain`: the same
// data without like: topics and profiles, for comparison in the same conditions.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { systemClock } from '../src/clock.ts';
import { loadConfig } from '../src/config.ts';
import { indexPaperTerms } from '../src/match/paper-terms.ts';
import { createModelPass } from '../src/feedback/model-pass.ts';
import { parseFeed } from '../src/ingest/detect.ts';
import { ingestBatch } from '../src/ingest/ingest.ts';
import { silentLogger } from '../src/log.ts';
import { createAppWithDb } from '../src/main.ts';
import { planDigests } from '../src/plan/planner.ts';
import { importSubscribersCsv } from '../src/subscribers/import.ts';
import { matchPending } from '../src/match/matcher.ts';
import { setupLearning } from './learning.ts';

const { values: o } = parseArgs({
  options: { subscribers: { type: 'string', default: '100000' }, papers: { type: 'string', default: '1000' }, plain: { type: 'boolean', default: false }, 'no-profiles': { type: 'boolean', default: false } },
});
const dir = mkdtempSync(join(tmpdir(), 'digest-learning-'));
const ms = (s: number) => `${Math.round(performance.now() - s)} ms`;
try {
  console.log(`learning stages: ${o.subscribers} subscribers x ${o.papers} papers${o.plain ? ' (plain)' : ''}; load average ${loadavg()[0]!.toFixed(2)}`);
  execFileSync(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'generate.ts'), '--subscribers', o.subscribers!, '--papers', o.papers!,
    '--topics', '3', '--seed', '1', '--batch', join(dir, 'b.json'), '--csv', join(dir, 's.csv')]);
  const config = loadConfig({ DATABASE_PATH: join(dir, 'db.sqlite'), SMTP_URL: 'smtp://127.0.0.1:9', SECRET_KEY: 'bench-secret-key-0123456789abcdef0123456789',
    PUBLIC_URL: 'https://bench.example', DIGEST_TZ: 'UTC', LOG_LEVEL: 'silent' });
  const made = await createAppWithDb(config, { clock: systemClock, logger: silentLogger });
  const app = { ...made.app, db: made.db };
  const { db } = app;
  let t = performance.now();
  await importSubscribersCsv(app, join(dir, 's.csv'));
  console.log(`import: ${ms(t)}`);
  if (!o.plain) {
    t = performance.now();
    const setup = setupLearning(db, app.clock);
    console.log(`learning setup: ${ms(t)}`, setup);
    if (o['no-profiles']) db.exec('DELETE FROM reader_models; DELETE FROM feedback'); // like: topics alone
  }
  t = performance.now();
  ingestBatch(db, parseFeed(readFileSync(join(dir, 'b.json'), 'utf8'), 'batch'), app.clock);
  console.log(`ingest: ${ms(t)}`);
  const maxId = (db.prepare('SELECT max(id) AS m FROM papers').get() as { m: number }).m;
  t = performance.now();
  const indexed = db.transaction(() => indexPaperTerms(db, maxId))();
  console.log(`  paper terms (part of match): ${ms(t)} for ${indexed} papers`);
  t = performance.now();
  const m = matchPending(db);
  console.log(`  FTS5 queries (part of match): ${ms(t)}: ${m.queries} distinct queries, ${m.matches} matches`);
  t = performance.now();
  const p = await planDigests(db, { clock: app.clock, mode: 'now' });
  console.log(`plan: ${ms(t)}: ${p.planned} digests, ${p.items} papers; suggestions ${JSON.stringify(db.prepare('SELECT count(*) AS n FROM digest_suggestions').get())}`);
  if (!o.plain) {
    db.exec('DELETE FROM digest_suggestions');
    t = performance.now();
    const pass = createModelPass(db, app.clock.now()).apply(0);
    console.log(`  of which reader models (order + suggestions), again alone: ${ms(t)}`, pass);
  }
  console.log(`load average at end ${loadavg()[0]!.toFixed(2)}`);
  await app.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
