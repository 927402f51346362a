// The console's overview: the last 90 days (UTC days) as a few series, each one set-based query grouped
// by day (never a loop over subscribers or papers in JavaScript); JavaScript only fills the days with
// no row with 0 (at most 90 values per series).
//   confirmed subscribers  running total: +1 on the day of confirming, -1 on the day of leaving
//                          (unsubscribed / suppressed), the days before the window summed into a base
//   digests                sent / failed per delivery date (edition), from the digests_edition index;
//                          days before yesterday cached for an hour (see digestDays)
//   bounces, complaints    bounce_events by received day (policy blocks apart: receivers refusing us)
//   unsubscribes           subscribers by unsubscribe day
//   papers                 new papers per source per ingest day (batches)
// Measured: BENCHMARKS.md § Why the code is shaped this way, overview.ts.
import type { Db } from '../db/open.ts';
import { statement } from '../db/statements.ts';
import { complaintPercent } from '../report/figures.ts';
import { renderChart } from './charts.ts';

export const OVERVIEW_DAYS = 90;

/**
 * Changes of the confirmed count by day, and unsubscribes by day, each arm grouped in index order
 * (subscribers_confirmed_day, subscribers_unsubscribed_day; the few suppressed through subscribers_status).
 * No status test in the first two arms: confirmed_at is set only while an address is or was confirmed
 * (going back to pending clears it), and unsubscribed_at only on leaving (confirming again clears it).
 */
const SQL_SUBSCRIBER_DAYS = `
  WITH changes (day, delta, unsub) AS (
    SELECT * FROM (SELECT substr(confirmed_at, 1, 10), count(*), 0 FROM subscribers
                   WHERE confirmed_at IS NOT NULL GROUP BY substr(confirmed_at, 1, 10))
    UNION ALL
    SELECT * FROM (SELECT substr(unsubscribed_at, 1, 10), -sum(confirmed_at IS NOT NULL), count(*) FROM subscribers
                   WHERE unsubscribed_at IS NOT NULL GROUP BY substr(unsubscribed_at, 1, 10), confirmed_at IS NOT NULL)
    UNION ALL
    SELECT * FROM (SELECT substr(suppressed_at, 1, 10), -count(*), 0 FROM subscribers
                   WHERE status = 'suppressed' AND confirmed_at IS NOT NULL AND suppressed_at IS NOT NULL GROUP BY 1))
  SELECT CASE WHEN day < :from THEN '' ELSE day END AS day, sum(delta) AS delta, sum(unsub) AS unsub
  FROM changes GROUP BY 1 ORDER BY 1`;

/** Digests by delivery date and outcome (covering index digests_edition (edition, id, status)). */
const SQL_DIGEST_DAYS = `
  SELECT edition AS day, sum(status = 'sent') AS sent, sum(status IN ('failed', 'unknown')) AS failed
  FROM digests WHERE edition >= :from AND edition <= :to GROUP BY edition`;

/** Bounce reports by day and kind (index bounce_events_received). */
const SQL_BOUNCE_DAYS = `
  SELECT substr(received_at, 1, 10) AS day, sum(kind = 'hard') AS hard, sum(kind = 'soft') AS soft,
         sum(kind = 'policy') AS policy, sum(kind = 'complaint') AS complaints
  FROM bounce_events WHERE received_at >= :from GROUP BY 1`;

/** New papers per source per ingest day (batches: a few rows a day). */
const SQL_PAPER_DAYS = `
  SELECT source, substr(ingested_at, 1, 10) AS day, sum(new_paper_count) AS papers
  FROM batches WHERE ingested_at >= :from GROUP BY source, 2`;

export interface Overview {
  days: string[];
  confirmed: number[];
  sent: number[];
  failed: number[];
  hard: number[];
  soft: number[];
  /** Policy blocks: receivers refusing our mail (spam, blocklist, reputation, authentication). */
  policy: number[];
  complaints: number[];
  unsubscribes: number[];
  papers: Array<{ source: string; values: number[] }>;
}

export function dayList(now: Date, count = OVERVIEW_DAYS): string[] {
  const end = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return Array.from({ length: count }, (_, i) => new Date(end - (count - 1 - i) * 86_400_000).toISOString().slice(0, 10));
}

/**
 * Digest counts of the days before yesterday, per store (a SQLite handle, PostgreSQL's pool), kept for an
 * hour: counting the ledger is the one expensive part of the overview (about 1 s per 2.6 million rows
 * here: 88,000 daily readers over 30 days), and those days no longer change (retries end within hours).
 * Yesterday and today are always counted live. Per process: another instance counts its own, from the
 * same rows (nothing in it that another instance needs).
 */
type DayCounts = Map<string, { sent: number; failed: number }>;
const closedDigestDays = new WeakMap<object, { through: string; at: number; counts: DayCounts }>();
export const DIGEST_CACHE_MS = 3600 * 1000;
type DigestDayRow = { day: string; sent: number; failed: number };

/** The closed days still cached for `store`, or undefined when they must be counted again. */
function cachedClosedDays(store: object, yesterday: string): DayCounts | undefined {
  const cached = closedDigestDays.get(store);
  return cached && cached.through === yesterday && Date.now() - cached.at <= DIGEST_CACHE_MS ? cached.counts : undefined;
}

/** Keeps the days before `yesterday` of a count from the window's first day through yesterday. */
function keepClosedDays(store: object, yesterday: string, rows: DigestDayRow[]): DayCounts {
  const counts: DayCounts = new Map();
  for (const r of rows) if (r.day < yesterday) counts.set(r.day, { sent: Number(r.sent), failed: Number(r.failed) });
  closedDigestDays.set(store, { through: yesterday, at: Date.now(), counts });
  return counts;
}

function withLiveDays(closed: DayCounts, live: DigestDayRow[]): DayCounts {
  const out = new Map(closed);
  for (const r of live) out.set(r.day, { sent: Number(r.sent), failed: Number(r.failed) });
  return out;
}

function digestDays(db: Db, from: string, to: string, yesterday: string): DayCounts {
  const query = (a: string, b: string) => statement<{ from: string; to: string }, DigestDayRow>(db, SQL_DIGEST_DAYS).all({ from: a, to: b });
  const closed = cachedClosedDays(db, yesterday) ?? keepClosedDays(db, yesterday, query(from, yesterday));
  return withLiveDays(closed, query(yesterday, to));
}

/** digestDays for an asynchronous store (PostgreSQL's: admin/postgres/views.ts), the same cache rules. */
export async function digestDaysCached(
  store: object,
  span: { from: string; to: string; yesterday: string },
  query: (from: string, to: string) => Promise<DigestDayRow[]>,
): Promise<DayCounts> {
  const { from, to, yesterday } = span;
  const cached = cachedClosedDays(store, yesterday);
  const [closed, live] = await Promise.all([cached ?? query(from, yesterday).then((rows) => keepClosedDays(store, yesterday, rows)), query(yesterday, to)]);
  return withLiveDays(closed, live);
}

/** The rows an engine reads for the overview (SQLite below, PostgreSQL in admin/postgres/views.ts). */
export interface OverviewRows {
  subscriberDays: Array<{ day: string; delta: number; unsub: number }>;
  digestDays: Map<string, { sent: number; failed: number }>;
  bounceDays: Array<{ day: string; hard: number; soft: number; policy: number; complaints: number }>;
  paperDays: Array<{ source: string; day: string; papers: number }>;
}

/** The overview's first and last day, and the day before the last (the digest counts' cache line). */
export function overviewSpan(now: Date): { days: string[]; from: string; to: string; yesterday: string } {
  const days = dayList(now);
  return { days, from: days[0]!, to: days[days.length - 1]!, yesterday: days[days.length - 2] ?? days[0]! };
}

export function computeOverview(db: Db, now: Date): Overview {
  const { days, from, to, yesterday } = overviewSpan(now);
  return overviewFrom(days, {
    subscriberDays: statement<{ from: string }, { day: string; delta: number; unsub: number }>(db, SQL_SUBSCRIBER_DAYS).all({ from }),
    digestDays: digestDays(db, from, to, yesterday),
    bounceDays: statement<{ from: string }, { day: string; hard: number; soft: number; policy: number; complaints: number }>(db, SQL_BOUNCE_DAYS).all({ from }),
    paperDays: statement<{ from: string }, { source: string; day: string; papers: number }>(db, SQL_PAPER_DAYS).all({ from }),
  });
}

/** The series over `days` from either engine's rows: days with no row are 0; confirmed is a running total. */
export function overviewFrom(days: string[], rows: OverviewRows): Overview {
  const index = new Map(days.map((d, i) => [d, i]));
  const zeros = () => days.map(() => 0);
  const o: Overview = { days, confirmed: zeros(), sent: zeros(), failed: zeros(), hard: zeros(), soft: zeros(), policy: zeros(), complaints: zeros(), unsubscribes: zeros(), papers: [] };

  const deltas = zeros();
  let base = 0;
  for (const r of rows.subscriberDays) {
    if (r.day === '') base += r.delta;
    const i = index.get(r.day);
    if (i === undefined) continue;
    deltas[i] = r.delta;
    o.unsubscribes[i] = r.unsub;
  }
  let running = base;
  o.confirmed = deltas.map((d) => (running += d));

  for (const [day, r] of rows.digestDays) {
    const i = index.get(day);
    if (i === undefined) continue;
    o.sent[i] = r.sent;
    o.failed[i] = r.failed;
  }
  for (const r of rows.bounceDays) {
    const i = index.get(r.day);
    if (i === undefined) continue;
    o.hard[i] = r.hard;
    o.soft[i] = r.soft;
    o.policy[i] = r.policy;
    o.complaints[i] = r.complaints;
  }
  const bySource = new Map<string, number[]>();
  for (const r of rows.paperDays) {
    const i = index.get(r.day);
    if (i === undefined) continue;
    let values = bySource.get(r.source);
    if (!values) bySource.set(r.source, (values = zeros()));
    values[i] = r.papers;
  }
  o.papers = [...bySource].sort((a, b) => a[0].localeCompare(b[0])).map(([source, values]) => ({ source, values }));
  return o;
}

/** The overview's figures over its days: confirmed at the end, every other series summed; the complaint rate against digests sent. */
export function overviewTotals(o: Overview) {
  const sum = (v: number[]) => v.reduce((a, b) => a + b, 0);
  const sent = sum(o.sent);
  const complaints = sum(o.complaints);
  return {
    confirmed: o.confirmed[o.confirmed.length - 1] ?? 0,
    sent,
    failed: sum(o.failed),
    hard: sum(o.hard),
    soft: sum(o.soft),
    policy: sum(o.policy),
    complaints,
    complaintPercent: complaintPercent(complaints, sent),
    unsubscribes: sum(o.unsubscribes),
  };
}

const PALETTE = ['#0b5cad', '#c2410c', '#1d6b38', '#7c3aed', '#a4161a', '#0e7490', '#854d0e'];

/** The overview's charts as inline SVG (HTML strings made by charts.ts, every label escaped there). */
export function overviewCharts(o: Overview): Array<{ id: string; svg: string }> {
  const days = o.days;
  return [
    { id: 'confirmed', svg: renderChart({ title: 'Confirmed subscribers', days, kind: 'line', series: [{ name: 'confirmed', values: o.confirmed, color: '#0b5cad' }] }) },
    {
      id: 'digests',
      svg: renderChart({ title: 'Digests per day', days, kind: 'bars', series: [{ name: 'sent', values: o.sent, color: '#1d6b38' }, { name: 'failed', values: o.failed, color: '#a4161a' }] }),
    },
    {
      id: 'bounces',
      svg: renderChart({
        title: 'Bounces and complaints per day',
        days,
        kind: 'bars',
        series: [
          { name: 'hard bounces', values: o.hard, color: '#a4161a' },
          { name: 'soft bounces', values: o.soft, color: '#c2410c' },
          { name: 'policy blocks', values: o.policy, color: '#1f2937' },
          { name: 'complaints', values: o.complaints, color: '#7c3aed' },
        ],
      }),
    },
    { id: 'unsubscribes', svg: renderChart({ title: 'Unsubscribes per day', days, kind: 'bars', series: [{ name: 'unsubscribes', values: o.unsubscribes, color: '#555d66' }] }) },
    {
      id: 'papers',
      svg: renderChart({
        title: 'New papers per source per day',
        days,
        kind: 'bars',
        series: o.papers.map((p, i) => ({ name: p.source, values: p.values, color: PALETTE[i % PALETTE.length]! })),
      }),
    },
  ];
}
