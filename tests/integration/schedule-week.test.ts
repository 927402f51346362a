// A week of real feed behaviour on a controlled clock, through the composition root, a real SQLite
// file, the real Hugging Face source against a local HTTP server, and a real SMTP server:
//   - the Hugging Face listing of each day appears at 04:00 UTC and grows at 14:00 (after the morning
//     emails of UTC and Europe), and the service keeps re-fetching it;
//   - a second source (arxiv-api) brings each day's papers at 20:00, one of them a paper Hugging Face
//     already had;
//   - an older day (three weeks back) is backfilled on Saturday; a batch dated 2030 is refused;
//   - the service is down on Monday from 05:00 to 13:00 UTC, and all of Tuesday;
//   - New York switches to daylight saving time on Sunday 8 March 2026.
// Subscribers: daily at 07:00 in UTC, Asia/Tokyo and America/New_York, a broad topic at 09:00 UTC,
// and a weekly New York reader (Mondays 08:00). For each one the test checks what arrived per local
// day, at what local hour, and that every matching paper arrived exactly once, in the first delivery
// after it was ingested. The same week on both engines: on PostgreSQL each tick is `digest run`'s there
// (pipeline-postgres.ts: the source polled into PostgreSQL, matched, planned, sent), in this process.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { localTime } from '../../src/clock.ts';
import { isAppError } from '../../src/errors.ts';
import { startEngineRun, type EngineRun } from '../helpers/engine-run.ts';
import { json, startFeedServer, type FeedServer } from '../helpers/feed-server.ts';
import { forEachEngine } from '../helpers/on-engines.ts';

const START = Date.parse('2026-03-05T00:00:00Z'); // Thursday
const END = Date.parse('2026-03-11T23:00:00Z'); // Wednesday
const HOUR = 3_600_000;
/** No tick ran in these hours (service down, or not started yet). */
const down = (at: number) =>
  at < START ||
  (at >= Date.parse('2026-03-09T05:00:00Z') && at < Date.parse('2026-03-09T13:00:00Z')) ||
  (at >= Date.parse('2026-03-10T00:00:00Z') && at < Date.parse('2026-03-11T00:00:00Z'));

interface Reader {
  email: string;
  timezone: string;
  hour: number;
  topic: string;
  /** What the topic matches in these titles (an oracle independent of FTS5). */
  word: RegExp;
  weeklyDay?: number;
}
const READERS: Reader[] = [
  { email: 'utc@example.org', timezone: 'UTC', hour: 7, topic: 'decoding', word: /\bdecoding\b/i },
  { email: 'tokyo@example.org', timezone: 'Asia/Tokyo', hour: 7, topic: 'decoding', word: /\bdecoding\b/i },
  { email: 'ny@example.org', timezone: 'America/New_York', hour: 7, topic: 'decoding', word: /\bdecoding\b/i },
  { email: 'broad@example.org', timezone: 'UTC', hour: 9, topic: 'learning', word: /\blearning\b/i },
  { email: 'weekly@example.org', timezone: 'America/New_York', hour: 8, topic: 'decoding', word: /\bdecoding\b/i, weeklyDay: 1 },
];

/** Paper keys and titles: what each source publishes, by day. */
const key = (day: string, n: number) => `2603.${day.slice(8, 10)}${String(n).padStart(3, '0')}`;
function hfPapers(day: string, grown: boolean) {
  const titles = [
    'Speculative decoding with small drafts',
    'Contrastive learning of video features',
    'Guided decoding for structured output',
    'A survey of protein design',
    'Learning to rank with bandits',
    'Parallel decoding in diffusion language models',
  ];
  if (grown) titles.push('Decoding strategies for long answers', 'Curriculum learning for agents', 'Graph neural networks at scale');
  return titles.map((title, i) => ({ key: key(day, i), title: `${title} (${day})` }));
}
const hfJson = (papers: { key: string; title: string }[]) =>
  papers.map((p) => ({
    paper: { id: p.key, title: p.title, summary: `An abstract about ${p.title}.`, authors: [{ name: 'Ada Lovelace' }], upvotes: 3 },
    title: p.title,
  }));

const localDay = (at: number, tz: string) => localTime(new Date(at), tz).date;
const localHour = (at: number, tz: string) => localTime(new Date(at), tz).hour;

forEachEngine('a week of real feed behaviour', (engine) => {
  let server: FeedServer;
  let e: EngineRun;
  /** Every delivery: address, tick time, paper keys in the email. */
  const deliveries: Array<{ to: string; at: number; keys: string[] }> = [];
  let refusedFuture = '';

  beforeAll(async () => {
    server = await startFeedServer();
    e = await startEngineRun(
      engine,
      {
        SOURCES: 'hf',
        HF_API_URL: `${server.url}/api/daily_papers`,
        SOURCE_LOOKBACK_DAYS: '3',
        FETCH_TIMEOUT_MS: '2000',
        DIGEST_TZ: 'UTC',
        // The test reads what a digest delivered from its email: room for a week's papers in it (the
        // default shows 5 in full and 20 in short, the rest on the web view).
        DIGEST_FULL_PAPERS: '100',
      },
      undefined,
      new Date(START).toISOString(),
    );
    const t = e.t;
    for (const r of READERS) {
      await (e.pg?.roster ?? t.app.roster).subscribe(
        { email: r.email, topics: [r.topic], timezone: r.timezone, deliveryHour: r.hour, frequency: r.weeklyDay === undefined ? 'daily' : 'weekly' },
        { confirmed: true },
      );
      if (r.weeklyDay !== undefined) await e.sql.run(`UPDATE subscribers SET weekly_day = ? WHERE email = ?`, r.weeklyDay, r.email);
    }

    const ingest = (source: string, date: string, papers: { key: string; title: string }[]) =>
      e.ingestBatch(
        {
          source,
          date,
          papers: papers.map((p) => ({
            key: p.key,
            title: p.title,
            abstract: `An abstract about ${p.title}.`,
            authors: ['Alan Turing'],
            url: `https://arxiv.org/abs/${p.key}`,
            publishedAt: date,
            upvotes: 0,
            categories: ['cs.LG'],
          })),
        },
      );

    for (let at = START; at <= END; at += HOUR) {
      t.clock.set(new Date(at));
      const hour = new Date(at).getUTCHours();
      const today = new Date(at).toISOString().slice(0, 10);
      // What Hugging Face answers now: days before today as they finally were, today as it is so far.
      for (let d = -3; d <= 1; d++) {
        const day = new Date(at + d * 24 * HOUR).toISOString().slice(0, 10);
        const body = d > 0 ? json({ error: 'Date is in the future' }, 400) : d < 0 || hour >= 14 ? json(hfJson(hfPapers(day, true))) : hour >= 4 ? json(hfJson(hfPapers(day, false))) : json([]);
        server.route(`/api/daily_papers?date=${day}`, body);
      }
      if (down(at)) continue;
      // The other sources, by hand as an operator or a cron job would ingest them.
      if (hour === 20) {
        await ingest('arxiv-api:cs.LG', today, [
          { key: key(today, 0), title: `Speculative decoding with small drafts (${today})` }, // Hugging Face had it
          { key: key(today, 50), title: `Lookahead decoding without drafts (${today})` },
          { key: key(today, 51), title: `Federated learning under drift (${today})` },
        ]);
      }
      if (today === '2026-03-07' && hour === 10) {
        await ingest('backfill', '2026-02-14', [
          { key: '2602.14001', title: 'Constrained decoding revisited (backfill)' },
          { key: '2602.14002', title: 'Meta learning revisited (backfill)' },
        ]);
      }
      if (today === '2026-03-08' && hour === 11) {
        try {
          await ingest('wrong-clock', '2030-01-01', [{ key: '3001.00001', title: 'Decoding from the future' }]);
        } catch (e) {
          refusedFuture = isAppError(e) ? `${e.code}: ${e.message}` : String(e);
        }
      }
      const before = t.smtp.messages.length;
      await e.run({ mode: 'due' });
      for (const m of t.smtp.messages.slice(before)) {
        const keys = [...new Set([...(m.text ?? '').matchAll(/(?:arxiv\.org\/abs|huggingface\.co\/papers)\/(\d{4}\.\d{5})/g)].map((x) => x[1]!))];
        deliveries.push({ to: m.to[0]!, at, keys });
      }
    }
  }, 120_000);

  afterAll(async () => {
    await e?.close();
    await server?.close();
  });

  const papers = () => e.sql.all<{ key: string; title: string; created_at: string }>(`SELECT paper_key AS key, title, created_at FROM papers ORDER BY id`);

  it('refuses the batch dated 2030 with a reason naming the date, and ingests nothing of it', async () => {
    expect(refusedFuture).toMatch(/^BATCH_FUTURE_DATE: .*2030-01-01/);
    expect((await papers()).some((p) => p.key === '3001.00001')).toBe(false);
  });

  it('sends each reader at most one email per local day, at their hour (or the first tick after it when the service was down)', () => {
    for (const r of READERS) {
      const mine = deliveries.filter((d) => d.to === r.email);
      const days = mine.map((d) => localDay(d.at, r.timezone));
      expect(new Set(days).size, r.email).toBe(days.length);
      for (const d of mine) {
        const hour = localHour(d.at, r.timezone);
        expect(hour, `${r.email} at ${new Date(d.at).toISOString()}`).toBeGreaterThanOrEqual(r.hour);
        // Late only when the tick of that hour did not run.
        if (hour > r.hour) expect(down(d.at - (hour - r.hour) * HOUR), `${r.email} late at ${new Date(d.at).toISOString()}`).toBe(true);
      }
    }
  });

  it('keeps 07:00 in New York across the change to daylight saving time', () => {
    const ny = deliveries.filter((d) => d.to === 'ny@example.org').map((d) => new Date(d.at).toISOString());
    expect(ny).toContain('2026-03-06T12:00:00.000Z'); // 07:00 EST
    expect(ny).toContain('2026-03-08T11:00:00.000Z'); // 07:00 EDT, the first day of summer time
    expect(ny).toContain('2026-03-09T13:00:00.000Z'); // 09:00 EDT: the 07:00 tick was down, same-day catch-up
  });

  it('merges a day without any tick into the next one, and keeps the weekly reader to one email, on Monday', () => {
    const utcDays = deliveries.filter((d) => d.to === 'utc@example.org').map((d) => localDay(d.at, 'UTC'));
    expect(utcDays).toEqual(['2026-03-05', '2026-03-06', '2026-03-07', '2026-03-08', '2026-03-09', '2026-03-11']);
    const weekly = deliveries.filter((d) => d.to === 'weekly@example.org');
    expect(weekly.map((d) => new Date(d.at).toISOString())).toEqual(['2026-03-09T13:00:00.000Z']); // Monday, after the outage
  });

  it('delivers every matching paper exactly once, in the first delivery after it was ingested', async () => {
    const all = await papers();
    for (const r of READERS) {
      const mine = deliveries.filter((d) => d.to === r.email);
      const received = mine.flatMap((d) => d.keys);
      expect(new Set(received).size, `${r.email}: a paper came twice`).toBe(received.length);
      const last = Math.max(...mine.map((d) => d.at));
      const matching = all.filter((p) => r.word.test(p.title));
      expect(matching.length).toBeGreaterThan(20);
      for (const p of matching) {
        const ingested = Date.parse(p.created_at);
        const first = mine.find((d) => d.at >= ingested);
        if (!first) {
          expect(received, `${r.email} got ${p.key} before any delivery after its ingest`).not.toContain(p.key);
          expect(ingested).toBeGreaterThan(last);
          continue;
        }
        expect(first.keys, `${r.email}: ${p.key} (${p.title}) ingested ${p.created_at}`).toContain(p.key);
      }
      // Nothing that does not match.
      for (const k of received) expect(r.word.test(all.find((p) => p.key === k)!.title), `${r.email}: ${k}`).toBe(true);
    }
    // The growing listing, the second source and the backfill all reached the morning readers.
    const utc = deliveries.filter((d) => d.to === 'utc@example.org').flatMap((d) => d.keys);
    expect(utc).toContain(key('2026-03-05', 6)); // grew at 14:00 on Thursday, mailed Friday 07:00
    expect(utc).toContain(key('2026-03-06', 50)); // arxiv-api at 20:00
    expect(utc).toContain('2602.14001'); // backfilled Saturday 10:00, mailed Sunday
  });
});
