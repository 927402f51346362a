// A week of the service on PostgreSQL, end to end, with real parts only: `digest serve` (its door on
// PostgreSQL) where readers subscribe through the form and confirm through the link in the real email;
// each local day `digest ingest` of that day's papers (one day repeats papers, one backfills an older day,
// one batch is malformed), two `digest plan` at once, two `digest worker --once` at once, into a real SMTP
// sink parsed with postal-mime. Only the clock is faked (tests/helpers/fake-clock.mjs).
// Holds: per address per local day at most one digest; every paper a reader's topics match arrived exactly
// once across the week; a one-click unsubscribe from a real digest stops mail, is in consent_events, and a
// re-subscribe mails no digest before its new confirmation; a worker killed (SIGKILL) mid-run leaves its
// in-flight rows 'unknown', sends nothing twice, and their papers ride in the next digest.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.ts';
import { postgresForTests, type TestSchema } from '../helpers/postgres.ts';
import { childDir, digestAt, expectedMatches, listing, startDigestAt, startServe, waitUntil, writeBatch, type StoryPaper } from '../helpers/pg-story.ts';
import { SmtpSink, accept, type SinkMessage } from '../helpers/smtp-sink.ts';
import { formPost, linkIn } from '../helpers/web-harness.ts';

const pg = await postgresForTests();

const READERS = [
  { email: 'ada@example.org', timezone: 'UTC', topics: ['reinforcement learning'] },
  { email: 'kenji@example.org', timezone: 'Asia/Tokyo', topics: ['agents', 'reasoning'] },
  { email: 'broad@example.org', timezone: 'UTC', topics: ['language'] },
  { email: 'leaver@example.org', timezone: 'UTC', topics: ['learning'] },
];
const LEAVER = 'leaver@example.org';
const DAYS = ['2025-12-01', '2025-12-02', '2025-12-03', '2025-12-04', '2025-12-05'];
const nextDay = (day: string) => new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
/**
 * Papers arrive in the morning, each day a few minutes later than the day before (a re-confirmation's
 * first digest holds what came after the last day of ingest less 24 h: exactly 24 h apart, the
 * processes' start-up milliseconds would decide); planning and sending run late in the UTC evening
 * (Tokyo: the next morning).
 */
const morning = (day: string) => `${day}T06:${String(DAYS.indexOf(day) * 5).padStart(2, '0')}:00Z`;
const evening = (day: string) => `${day}T23:30:00Z`;

interface Digest {
  to: string;
  digestId: number;
  keys: string[];
  listUnsubscribe: string;
}

async function digestsIn(messages: SinkMessage[]): Promise<Digest[]> {
  const out: Digest[] = [];
  for (const m of messages) {
    const raw = m.raw.toString('latin1');
    const id = /^Message-ID: <digest-(\d+)\./im.exec(raw)?.[1];
    if (!id) continue;
    const e = await m.parse();
    const keys = [...new Set([...(e.text ?? '').matchAll(/arxiv\.org\/abs\/(2512\.\d{5})/g)].map((x) => x[1]!))];
    const header = e.headers.find((h) => h.key === 'list-unsubscribe')?.value ?? '';
    for (const to of m.to) out.push({ to, digestId: Number(id), keys, listUnsubscribe: header });
  }
  return out;
}

describe.skipIf(!pg.reachable)('a week on PostgreSQL: serve, ingest, plan, workers', () => {
  let s: TestSchema;
  let sink: SmtpSink;
  let dir: ReturnType<typeof childDir>;
  let env: Record<string, string>;
  const papers = listing();

  beforeAll(async () => {
    ensureBuilt();
    s = await pg.schema();
    sink = await SmtpSink.start();
    dir = childDir();
    env = {
      DATABASE_URL: s.url,
      DATABASE_SCHEMA: s.name,
      SMTP_URL: sink.url,
      SECRET_KEY: 'k'.repeat(40),
      PUBLIC_URL: 'https://digest.example.org',
      MAIL_FROM: 'Paper Digest <digest@example.org>',
      SUBSCRIBE_RATE_LIMIT: '1000',
    };
  }, 120_000);
  afterAll(async () => {
    await sink?.close();
    dir?.cleanup();
    await s?.drop();
  });

  const mailsTo = (email: string) => sink.messages.filter((m) => m.to.includes(email));
  const run = async (at: string, args: string[]) => {
    const r = await digestAt(at, args, env, dir.cwd);
    expect(r.code, `digest ${args.join(' ')}\n${r.stdout}\n${r.stderr}`).toBe(0);
    return r.stdout;
  };
  /** The digests of the evening's sends are of each reader's local date: Tokyo's next morning, else the day. */
  const expectLocalEditions = async (from: number, day: string, welcome = false) => {
    const sent = await digestsIn(sink.messages.slice(from));
    expect(sent.length, day).toBeGreaterThan(0);
    for (const d of sent) {
      const edition = (await s.pool.query<{ edition: string }>('SELECT edition FROM digests WHERE id = $1', [d.digestId])).rows[0]!.edition;
      expect(edition, `${d.to} ${day}`).toBe(d.to === 'kenji@example.org' && !welcome ? nextDay(day) : day);
    }
  };
  const digestRows = async () => (await s.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM digests')).rows[0]!.n;
  /** Two `digest plan` at once: one plans, or both get through and each slot is planned once all the same. */
  const planTwice = async (day: string) => {
    const before = await digestRows();
    const outs = await Promise.all([run(evening(day), ['plan']), run(evening(day), ['plan'])]);
    const planned = outs.map((o) => (/another process is planning/.test(o) ? 0 : Number(/planned (\d+)/.exec(o)?.[1] ?? NaN)));
    expect(planned.reduce((a, b) => a + b, 0), outs.join('\n')).toBe((await digestRows()) - before);
  };
  const planTwiceAndSend = async (day: string, welcome = false) => {
    await planTwice(day);
    const from = sink.messages.length;
    await Promise.all([run(evening(day), ['worker', '--once', '--lanes', '2']), run(evening(day), ['worker', '--once', '--lanes', '2'])]);
    await expectLocalEditions(from, day, welcome);
  };
  const subscribeByForm = async (base: string, r: (typeof READERS)[number]) => {
    const fields: Array<[string, string]> = [['email', r.email], ...r.topics.map((t): [string, string] => ['topics', t]), ['timezone', r.timezone], ['deliveryHour', '7']];
    const res = await fetch(`${base}/subscribe`, formPost(fields));
    expect(res.status, r.email).toBe(303);
  };
  const rowsPerReader = async () =>
    (await s.pool.query<{ email: string; n: number }>(`SELECT s.email, count(*)::int AS n FROM digests d JOIN subscribers s ON s.id = d.subscriber_id GROUP BY s.email`)).rows;
  const status = async (email: string) => (await s.pool.query<{ status: string }>('SELECT status FROM subscribers WHERE email = $1', [email])).rows[0]?.status;

  it('holds for a week: one digest per reader per local day, every matching paper once, consent kept, a killed worker costs nothing twice', async () => {
    await run('2025-11-30T09:00:00Z', ['migrate']);

    // The days' batches: day 2 repeats five of day 1's papers, day 3 backfills an older date and brings a
    // malformed batch, which must ingest nothing.
    const dayPapers: StoryPaper[][] = [papers.slice(0, 15), [...papers.slice(15, 30), ...papers.slice(0, 5)], papers.slice(30, 45), papers.slice(45, 58), papers.slice(58)];
    const files = dayPapers.map((p, i) => writeBatch(dir.cwd, `day${i + 1}`, 'hf-daily', i === 2 ? '2025-11-20' : DAYS[i]!, p));
    const expected = expectedMatches(papers, READERS);
    // The story means what it says: the broad reader's topic matches about half the listing, the others some.
    expect(expected.get('broad@example.org')!.size / papers.length).toBeGreaterThan(0.35);
    expect(expected.get('broad@example.org')!.size / papers.length).toBeLessThan(0.65);
    for (const r of READERS) expect(expected.get(r.email)!.size, r.email).toBeGreaterThan(2);

    const ingest = async (i: number) => {
      const out = await run(morning(DAYS[i]!), ['ingest', files[i]!]);
      const fresh = i === 1 ? 15 : dayPapers[i]!.length;
      expect(out.trim()).toMatch(new RegExp(`: ${dayPapers[i]!.length} papers, ${fresh} new, \\d+ updated$`));
    };
    const paperCount = async () => (await s.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM papers')).rows[0]!.n;

    // Day 1: the morning's papers, then everyone subscribes through the form and confirms through the
    // emailed link; confirming plans their first digest at once (the day's slot), which the evening's
    // workers send; the evening's planners plan nobody a second row.
    await ingest(0);
    const web = await startServe(`${DAYS[0]}T08:00:00Z`, env, dir.cwd);
    try {
      for (const r of READERS) {
        await subscribeByForm(web.base, r);
        await waitUntil(`confirmation mail to ${r.email}`, () => mailsTo(r.email).length === 1);
        const mail = await mailsTo(r.email)[0]!.parse();
        expect((await fetch(web.on(linkIn(mail.text!, '/confirm/')))).status, r.email).toBe(200);
        expect(await status(r.email)).toBe('confirmed');
      }
      await waitUntil('a first digest planned for each reader on confirming', async () => (await rowsPerReader()).length === READERS.length, 30_000);
    } finally {
      await web.stop();
    }
    await planTwiceAndSend(DAYS[0]!, true);
    expect((await rowsPerReader()).map((r) => r.n)).toEqual(READERS.map(() => 1));

    // Day 2.
    await ingest(1);
    await planTwiceAndSend(DAYS[1]!);

    // The leaver clicks one-click unsubscribe in their latest real digest.
    const leaverDigests = await digestsIn(mailsTo(LEAVER));
    expect(leaverDigests.length).toBeGreaterThan(0);
    const unsubscribeUrl = /<(https:\/\/[^>]+\/unsubscribe\/[^>]+)>/.exec(leaverDigests.at(-1)!.listUnsubscribe)![1]!;
    const web2 = await startServe(`${DAYS[1]}T23:50:00Z`, env, dir.cwd);
    try {
      const res = await fetch(web2.on(unsubscribeUrl), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
      expect(res.status).toBe(200);
    } finally {
      await web2.stop();
    }
    expect(await status(LEAVER)).toBe('unsubscribed');
    const optOut = await s.pool.query<{ kind: string }>(`SELECT kind FROM consent_events WHERE email = $1 ORDER BY id`, [LEAVER]);
    expect(optOut.rows.map((r) => r.kind)).toContain('unsubscribe');
    const leaverMailsAtOptOut = mailsTo(LEAVER).length;

    // Day 3: a malformed batch ingests nothing; the backfill arrives; a worker is killed mid-send.
    const bad = writeBatch(dir.cwd, 'bad', 'hf-daily', DAYS[2]!, [{ key: 'not-an-id', title: '', abstract: 'x', upvotes: 0 }]);
    const before = await paperCount();
    const refused = await digestAt(morning(DAYS[2]!), ['ingest', bad], env, dir.cwd);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/papers\[0\]/);
    expect(await paperCount()).toBe(before);
    await ingest(2);
    await planTwice(DAYS[2]!);
    const planned3 = (await s.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM digests WHERE status = 'planned'`)).rows[0]!.n;
    expect(planned3).toBeGreaterThanOrEqual(2);
    // The relay holds its answer: the worker has rows in flight when it dies; nothing reached the sink.
    sink.script = () => accept(120_000);
    const victim = startDigestAt(evening(DAYS[2]!), ['worker', '--once', '--lanes', '2'], env, dir.cwd);
    await waitUntil('rows in flight', async () => (await s.pool.query(`SELECT 1 FROM digests WHERE status = 'sending'`)).rowCount! > 0, 60_000);
    await new Promise((r) => setTimeout(r, 500));
    const inFlight = (await s.pool.query<{ id: number; email: string }>(
      `SELECT d.id, s.email FROM digests d JOIN subscribers s ON s.id = d.subscriber_id WHERE d.status = 'sending' ORDER BY d.id`,
    )).rows;
    expect(inFlight.length).toBeGreaterThan(0);
    victim.kill('SIGKILL');
    await victim.done;
    sink.script = undefined;
    const mailsBeforeRecovery = sink.messages.length;
    await Promise.all([run(evening(DAYS[2]!), ['worker', '--once', '--lanes', '2']), run(evening(DAYS[2]!), ['worker', '--once', '--lanes', '2'])]);
    if (planned3 > inFlight.length) await expectLocalEditions(mailsBeforeRecovery, DAYS[2]!);
    const after = await s.pool.query<{ id: number; status: string }>(`SELECT id, status FROM digests WHERE id = ANY($1::bigint[])`, [inFlight.map((r) => r.id)]);
    expect(after.rows.map((r) => r.status)).toEqual(inFlight.map(() => 'unknown'));
    const sentAgain = (await digestsIn(sink.messages.slice(mailsBeforeRecovery))).filter((d) => inFlight.some((r) => r.id === d.digestId));
    expect(sentAgain).toEqual([]);

    // Day 4: the leaver subscribes again through the form; no digest until they click the new link.
    await ingest(3);
    const web3 = await startServe(`${DAYS[3]}T12:00:00Z`, env, dir.cwd);
    let confirmAgain: string;
    try {
      await subscribeByForm(web3.base, READERS[3]!);
      await waitUntil('the new confirmation mail', () => mailsTo(LEAVER).length === leaverMailsAtOptOut + 1);
      const mail = await mailsTo(LEAVER).at(-1)!.parse();
      confirmAgain = linkIn(mail.text!, '/confirm/');
    } finally {
      await web3.stop();
    }
    expect(await status(LEAVER)).not.toBe('confirmed');
    await planTwiceAndSend(DAYS[3]!);
    expect(mailsTo(LEAVER).length).toBe(leaverMailsAtOptOut + 1);

    // Day 5: the morning's papers; the leaver clicks the new link: their first digest is planned at once
    // (the day's slot: what came since the last day of ingest before it) and goes out that evening.
    await ingest(4);
    const leaverRows = async () => (await s.pool.query(`SELECT 1 FROM digests d JOIN subscribers s ON s.id = d.subscriber_id WHERE s.email = $1`, [LEAVER])).rowCount!;
    const rowsBefore = await leaverRows();
    const web4 = await startServe(`${DAYS[4]}T08:00:00Z`, env, dir.cwd);
    try {
      expect((await fetch(web4.on(confirmAgain))).status).toBe(200);
      expect(await status(LEAVER)).toBe('confirmed');
      await waitUntil('the leaver\'s first digest planned again', async () => (await leaverRows()) === rowsBefore + 1);
    } finally {
      await web4.stop();
    }
    await planTwiceAndSend(DAYS[4]!);
    expect(mailsTo(LEAVER).length).toBe(leaverMailsAtOptOut + 2);

    // Per address per local day: at most one digest (the edition is the reader's local date).
    const all = await digestsIn(sink.messages);
    const editions = new Map((await s.pool.query<{ id: number; edition: string; status: string }>('SELECT id, edition, status FROM digests')).rows.map((r) => [Number(r.id), r]));
    const perDay = new Map<string, number>();
    for (const d of all) perDay.set(`${d.to} ${editions.get(d.digestId)!.edition}`, (perDay.get(`${d.to} ${editions.get(d.digestId)!.edition}`) ?? 0) + 1);
    expect([...perDay.entries()].filter(([, n]) => n > 1)).toEqual([]);
    expect(new Set(all.map((d) => d.digestId)).size).toBe(all.length);
    // Every paper a reader's topics match arrived exactly once across the week.
    for (const r of READERS) {
      const got = all.filter((d) => d.to === r.email).flatMap((d) => d.keys);
      const counts = new Map<string, number>();
      for (const k of got) counts.set(k, (counts.get(k) ?? 0) + 1);
      expect([...counts.entries()].filter(([, n]) => n > 1), r.email).toEqual([]);
      expect([...counts.keys()].filter((k) => !expected.get(r.email)!.has(k)), r.email).toEqual([]);
      // The leaver: days 1 and 2, then from re-confirming on day 5 (what came while they were out is not sent).
      const theirs = r.email === LEAVER ? new Set([...dayPapers[0]!, ...dayPapers[1]!, ...dayPapers[4]!].map((p) => p.key)) : undefined;
      const want = [...expected.get(r.email)!].filter((k) => !theirs || theirs.has(k));
      expect([...counts.keys()].sort(), r.email).toEqual(want.sort());
    }
    // The in-flight rows' readers: their day-3 papers came in a later digest.
    for (const row of inFlight) expect(all.some((d) => d.to === row.email && d.digestId > row.id), row.email).toBe(true);
  }, 600_000);
});

// Without SECRET_KEY each piece takes the secret kept in PostgreSQL: the unsubscribe link of a digest the
// worker signed works on the door `digest serve` runs.
describe.skipIf(!pg.reachable)('no SECRET_KEY: the worker and serve sign with the one secret PostgreSQL keeps', () => {
  let s: TestSchema;
  let sink: SmtpSink;
  let dir: ReturnType<typeof childDir>;
  beforeAll(async () => {
    ensureBuilt();
    s = await pg.schema();
    sink = await SmtpSink.start();
    dir = childDir();
  }, 120_000);
  afterAll(async () => {
    await sink?.close();
    dir?.cleanup();
    await s?.drop();
  });

  it('a digest sent by `digest worker` can be left with one click on `digest serve`', async () => {
    const env = { DATABASE_URL: s.url, DATABASE_SCHEMA: s.name, SMTP_URL: sink.url, PUBLIC_URL: 'https://digest.example.org', MAIL_FROM: 'Paper Digest <digest@example.org>' };
    const at = (t: string) => `${DAYS[0]}T${t}:00Z`;
    const ok = async (when: string, args: string[]) => {
      const r = await digestAt(at(when), args, env, dir.cwd);
      expect(r.code, `${args.join(' ')}\n${r.stderr}`).toBe(0);
    };
    await ok('05:00', ['migrate']);
    await ok('06:00', ['ingest', writeBatch(dir.cwd, 'day1', 'hf-daily', DAYS[0]!, listing().slice(0, 15))]);
    const email = 'ada@example.org';
    const web = await startServe(at('08:00'), env, dir.cwd);
    try {
      const res = await fetch(`${web.base}/subscribe`, formPost([['email', email], ['topics', 'reinforcement learning'], ['deliveryHour', '7']]));
      expect(res.status).toBe(303);
      await waitUntil('the confirmation mail', () => sink.messages.length === 1);
      expect((await fetch(web.on(linkIn((await sink.messages[0]!.parse()).text!, '/confirm/')))).status).toBe(200);
      await waitUntil('the first digest planned', async () => (await s.pool.query(`SELECT 1 FROM digests`)).rowCount === 1);
      await ok('09:00', ['worker', '--once']);
      const [digest] = await digestsIn(sink.messages);
      expect(digest?.to).toBe(email);
      const unsubscribe = /<(https:\/\/[^>]+\/unsubscribe\/[^>]+)>/.exec(digest!.listUnsubscribe)![1]!;
      const gone = await fetch(web.on(unsubscribe), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
      expect(gone.status).toBe(200);
    } finally {
      await web.stop();
    }
    expect((await s.pool.query(`SELECT status FROM subscribers WHERE email = $1`, [email])).rows[0]?.status).toBe('unsubscribed');
    expect((await s.pool.query(`SELECT count(*)::int AS n FROM settings WHERE key = 'secret_key'`)).rows[0]?.n).toBe(1);
  }, 180_000);
});
