// npm run bench:admin [-- --subscribers 100000]: times the console's set-based queries (overview charts,
// deliveries, search) on a synthetic database: N subscribers confirmed over 200 days (10% unsubscribed,
// 2% suppressed), one ledger row per subscriber per day for the last 30 days (sent, some failed),
// bounce reports for 1% of the rows. One run; the machine may be shared, so read the figures as an order
// of magnitude.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { computeOverview } from '../src/admin/overview.ts';
import { deliveries } from '../src/admin/deliveries.ts';
import { searchSubscribers } from '../src/admin/subscribers.ts';
import { openDatabase } from '../src/db/open.ts';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const N = arg('subscribers', 100_000);
const DAYS = 30;
const dir = mkdtempSync(join(tmpdir(), 'bench-admin-'));
const db = openDatabase(join(dir, 'bench.sqlite'));
const now = new Date('2025-11-25T09:00:00Z');
const t0 = performance.now();
db.exec(`
  INSERT INTO subscribers (id, email, status, token_salt, timezone, created_at, confirmed_at, unsubscribed_at, suppressed_at)
  WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${N})
  SELECT i, 'user' || i || '@example.org',
         CASE WHEN i % 10 = 0 THEN 'unsubscribed' WHEN i % 50 = 1 THEN 'suppressed' ELSE 'confirmed' END,
         'salt', 'UTC', strftime('%Y-%m-%dT%H:%M:%fZ', '2025-11-25', '-' || (i % 200) || ' days'),
         strftime('%Y-%m-%dT%H:%M:%fZ', '2025-11-25', '-' || (i % 200) || ' days', '+1 hour'),
         CASE WHEN i % 10 = 0 THEN strftime('%Y-%m-%dT%H:%M:%fZ', '2025-11-25', '-' || (i % 30) || ' days') END,
         CASE WHEN i % 50 = 1 THEN strftime('%Y-%m-%dT%H:%M:%fZ', '2025-11-25', '-' || (i % 20) || ' days') END
  FROM n;
  INSERT INTO queries (id, fts) VALUES (1, '"bench"');
  INSERT INTO topics (subscriber_id, query_id, text, position) SELECT id, 1, 'topic ' || (id % 1000), 0 FROM subscribers;
  INSERT INTO digests (subscriber_id, edition, status, from_paper, to_paper, paper_count, planned_at, sent_at, topic_ids, items, smtp_response)
  WITH RECURSIVE d(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM d WHERE k < ${DAYS - 1})
  SELECT s.id, date('2025-11-25', '-' || d.k || ' days'), CASE WHEN (s.id + d.k) % 97 = 0 THEN 'failed' ELSE 'sent' END,
         0, 1, 1, '2025-11-25T00:00:00Z', '2025-11-25T00:00:00Z', '', x'',
         CASE WHEN (s.id + d.k) % 97 = 0 THEN '550 5.1.1 user unknown' END
  FROM subscribers s, d WHERE s.status = 'confirmed';
  INSERT INTO bounce_events (digest_id, subscriber_id, kind, channel, detail, outcome, received_at)
  SELECT id, subscriber_id, CASE id % 3 WHEN 0 THEN 'hard' WHEN 1 THEN 'soft' ELSE 'complaint' END, 'smtp', 'x', 'none',
         edition || 'T12:00:00.000Z'
  FROM digests WHERE id % 100 = 0;
  ANALYZE;
`);
const rows = (db.prepare('SELECT count(*) AS n FROM digests').get() as { n: number }).n;
console.log(`built ${N} subscribers, ${rows} ledger rows in ${Math.round(performance.now() - t0)} ms`);
const time = (label: string, fn: () => unknown, runs = 3) => {
  const s0 = performance.now();
  fn();
  const first = performance.now() - s0;
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const s = performance.now();
    fn();
    ms.push(performance.now() - s);
  }
  console.log(`${label}: first ${first.toFixed(1)} ms, median ${ms.sort((a, b) => a - b)[Math.floor(runs / 2)]!.toFixed(1)} ms`);
};
time('overview (5 charts, 90 days)', () => computeOverview(db, now));
time('deliveries', () => deliveries(db, now));
time('search by address prefix "user12"', () => searchSubscribers(db, { by: 'address', text: 'user12' }));
time('search by topic prefix "topic 99"', () => searchSubscribers(db, { by: 'topic', text: 'topic 99' }));
db.close();
if (process.argv.includes('--keep')) console.log(`kept ${join(dir, 'bench.sqlite')}`);
else rmSync(dir, { recursive: true, force: true });
