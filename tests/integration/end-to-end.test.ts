// The whole product path, driven only through HTTP, the `digest` CLI (real child processes) and a real
// SMTP server: subscribe -> confirmation email -> confirm -> ingest -> run -> the digest arrives with
// exactly the matching papers, both parts and both headers -> one-click unsubscribe -> the next run
// sends that address nothing; a rerun sends nothing twice; feed HTML arrives escaped.
// On both engines (tests/engines.ts): on PostgreSQL the CLI children and the web (what `digest serve` serves
// there: servedWebDeps) use one schema for the file, and `digest run` is its in-process tick (pipeline-postgres.ts).
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { silentLogger } from '../../src/log.ts';
import { createTestApp, type AppWithDb } from '../helpers/test-app.ts';
import { freePort } from '../helpers/ports.ts';
import type { TempDb } from '../helpers/seed.ts';
import { engineStore, serveApp, shiftLedgerOneDay, type EngineStore } from '../helpers/engine-store.ts';
import { forEachEngine } from '../helpers/on-engines.ts';
import { SmtpSink, type SinkMessage } from '../helpers/smtp-sink.ts';
import { DIGEST_BIN } from '../helpers/build.ts';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
const DAY1 = join(ROOT, 'tests/fixtures/batches/2025-11-25.json');
const DAY2 = join(ROOT, 'tests/fixtures/batches/2025-11-26.json');

interface FixturePaper {
  id: string;
  title: string;
  abstract: string;
}
const day1 = JSON.parse(readFileSync(DAY1, 'utf8')).papers as FixturePaper[];
const day2 = JSON.parse(readFileSync(DAY2, 'utf8')).papers as FixturePaper[];

function header(m: Awaited<ReturnType<SinkMessage['parse']>>, key: string): string | undefined {
  return m.headers.find((h) => h.key === key.toLowerCase())?.value;
}

const ALICE = 'alice@example.org';
const BOB = 'bob@example.org';
const CAROL = 'carol@example.org';
const ALICE_TOPICS = ['"self-play"', 'Nash -survey'];
const BOB_TOPICS = ['pokémon', '"theory of mind"', '"multi-agent" -benchmark'];

const aliceWants = (p: FixturePaper) => /self[- ]play/i.test(`${p.title} ${p.abstract}`) || (/\bnash\b/i.test(`${p.title} ${p.abstract}`) && !/survey/i.test(`${p.title} ${p.abstract}`));
const bobWants = (p: FixturePaper) => {
  const t = `${p.title} ${p.abstract}`;
  return /pok[eé]mon/i.test(t) || /theory of mind/i.test(t) || (/multi[- ]agent/i.test(t) && !/benchmark/i.test(t));
};
const ids = (papers: FixturePaper[], want: (p: FixturePaper) => boolean) => papers.filter(want).map((p) => p.id.replace(/v\d+$/, '')).sort();
/** arXiv ids of the papers an email links to. */
const linkedIds = (body: string) => [...new Set([...body.matchAll(/https:\/\/arxiv\.org\/abs\/(\d{4}\.\d{5})/g)].map((m) => m[1]!))].sort();


forEachEngine('the product path, through HTTP, the CLI and SMTP', (engine) => {
  let store: EngineStore;
  let tmp: TempDb;
  let sink: SmtpSink;
  let app: AppWithDb;
  let served: Awaited<ReturnType<typeof serveApp>>;
  let base: string;
  let env: NodeJS.ProcessEnv;

  async function cli(...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
    try {
      const r = await run(process.execPath, [DIGEST_BIN, ...args], { env, cwd: tmp.dir });
      return { stdout: r.stdout, stderr: r.stderr, code: 0 };
    } catch (e) {
      const err = e as { stdout: string; stderr: string; code: number };
      return { stdout: err.stdout, stderr: err.stderr, code: err.code };
    }
  }

  async function postJson(path: string, body: unknown): Promise<Response> {
    return fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  }

  async function lastTo(address: string) {
    const all = sink.byAddress(address);
    expect(all.length).toBeGreaterThan(0);
    return all[all.length - 1]!.parse();
  }

  beforeAll(async () => {
    // On PostgreSQL: one schema for the file, migrated once; the CLI children and the web use it.
    store = await engineStore(engine, 'digest-e2e-');
    tmp = store.tmp;
    sink = await SmtpSink.start();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      ...store.env,
      SMTP_URL: sink.url,
      PUBLIC_URL: base,
      SECRET_KEY: 'e2e-secret-key-0123456789abcdef0123456789abcdef',
      MAIL_FROM: 'Paper Digest <digest@example.org>',
      UNSUBSCRIBE_MAILTO: 'unsubscribe@example.org',
      SMTP_RETRY_BASE_MS: '50',
      LOG_LEVEL: 'silent',
    };
    const config = loadConfig({ ...env, PORT: String(port), HOST: '127.0.0.1' });
    app = await createTestApp(config, { logger: silentLogger });
    served = await serveApp(app, port);
  }, 60_000);

  afterAll(async () => {
    await served?.close();
    await app?.close();
    await sink?.close();
    await store?.close();
  });

  it('answers every subscription alike and sends a confirmation email', async () => {
    const a = await postJson('/subscribe', { email: ALICE, topics: ALICE_TOPICS });
    const b = await postJson('/subscribe', { email: BOB, topics: BOB_TOPICS, timezone: 'Asia/Tokyo', deliveryHour: 7 });
    const c = await fetch(`${base}/subscribe`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({ email: CAROL, topics: '"self-play"' }).toString(),
    });
    // A pending address that subscribes again gets its topics replaced and the same answer.
    const again = await postJson('/subscribe', { email: ALICE, topics: ALICE_TOPICS });
    const bodies = await Promise.all([a, b, c, again].map((r) => r.text()));
    expect([a.status, b.status, c.status, again.status]).toEqual([a.status, a.status, a.status, a.status]);
    expect(a.status).toBeLessThan(300);
    expect(new Set(bodies).size).toBe(1); // no address enumeration
    await sink.waitForMessages(3, 15_000);
    const confirm = await lastTo(ALICE);
    expect(confirm.text).toContain(`${base}/confirm/`);
  });

  it('sends no digest to unconfirmed addresses', async () => {
    const ingest = await cli('ingest', DAY1);
    expect(ingest.stderr).toBe('');
    expect(ingest.code).toBe(0);
    expect(ingest.stdout).toMatch(/batch \d+ .*25 papers, 25 new/);
    const before = sink.messages.length;
    const r = await cli('run');
    expect(r.code).toBe(0);
    expect(sink.messages.length).toBe(before);
  });

  it('re-ingesting the same batch changes nothing', async () => {
    const again = await cli('ingest', DAY1);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('already ingested');
  });

  it('confirms through the link in the confirmation email', async () => {
    for (const address of [ALICE, BOB]) {
      const m = await lastTo(address);
      const link = /(http:\/\/127\.0\.0\.1:\d+\/confirm\/\S+)/.exec(m.text ?? '')![1]!;
      const res = await fetch(link);
      expect(res.status).toBe(200);
    }
    const tampered = await fetch(`${base}/confirm/1.confirm.0.${'A'.repeat(43)}`);
    expect(tampered.status).toBeGreaterThanOrEqual(400);
    expect(tampered.status).toBeLessThan(500);
    const list = await cli('subscribers');
    expect(list.stdout).toMatch(/alice@example\.org\s+confirmed/);
    expect(list.stdout).toMatch(/carol@example\.org\s+pending/);
  });

  it('delivers one digest per confirmed subscriber with exactly the matching papers, both parts and both headers', async () => {
    const before = sink.messages.length;
    const r = await cli('run');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/planned 2, sent 2/);
    const fresh = sink.messages.slice(before);
    expect(fresh.map((m) => m.to[0]).sort()).toEqual([ALICE, BOB]);

    for (const [address, want] of [[ALICE, aliceWants], [BOB, bobWants]] as const) {
      const m = await fresh.find((x) => x.to[0] === address)!.parse();
      const expected = ids(day1, want);
      expect(expected.length).toBeGreaterThan(1);
      expect(linkedIds(m.text ?? '')).toEqual(expected);
      expect(linkedIds(m.html ?? '')).toEqual(expected);
      const lu = header(m, 'list-unsubscribe')!;
      expect(lu).toMatch(new RegExp(`^<${base}/unsubscribe/[^>]+>, ?<mailto:unsubscribe@example\\.org[^>]*>$`));
      expect(header(m, 'list-unsubscribe-post')).toBe('List-Unsubscribe=One-Click');
      expect(m.html).toContain('/preferences/');
      expect(m.text).toContain('/unsubscribe/');
      expect(Buffer.byteLength(m.html ?? '')).toBeLessThan(100_000);
    }
  });

  it('escapes HTML that came in the feed', async () => {
    const m = await lastTo(ALICE);
    expect(m.html).toContain('&lt;script&gt;');
    expect(m.html).not.toContain("<script>alert('x')");
    expect(m.html).not.toMatch(/<img src=x/i);
    expect(m.html).not.toContain('<b>bold</b>');
  });

  it('a rerun sends nothing twice', async () => {
    const before = sink.messages.length;
    const r = await cli('run');
    expect(r.code).toBe(0);
    expect(sink.messages.length).toBe(before);
  });

  it('honours one-click unsubscribe at once, and later editions skip the address but not the others', async () => {
    const m = await lastTo(ALICE);
    const url = /<(http[^>]+\/unsubscribe\/[^>]+)>/.exec(header(m, 'list-unsubscribe')!)![1]!;
    // A GET (what link scanners do) never unsubscribes.
    expect((await fetch(url)).status).toBe(200);
    const stillThere = await cli('subscribers');
    expect(stillThere.stdout).toMatch(/alice@example\.org\s+confirmed/);
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
    expect(res.status).toBe(200);
    expect((await cli('subscribers')).stdout).toMatch(/alice@example\.org\s+unsubscribed/);

    // A day passes: the first digests become yesterday's (subscribers are in UTC), so today's run is a
    // new slot. Child processes run on the real clock; this moves the ledger instead of the clock.
    await shiftLedgerOneDay(store);
    expect((await cli('ingest', DAY2)).code).toBe(0);
    const before = sink.messages.length;
    expect((await cli('run')).code).toBe(0);
    const fresh = sink.messages.slice(before);
    expect(fresh.map((x) => x.to[0])).toEqual([BOB]);
    const second = await fresh[0]!.parse();
    // The SPIRAL paper came back in day 2 (as v2): Bob already had it, so only the new matches come.
    const expected = ids(day2, bobWants).filter((id) => !ids(day1, bobWants).includes(id));
    expect(expected.length).toBeGreaterThan(0);
    expect(linkedIds(second.text ?? '')).toEqual(expected);
  }, 90_000); // six CLI processes: ~20 s when the machine's two cores are shared with other work

  it('reports the editions in digest status', async () => {
    const r = await cli('status');
    expect(r.code).toBe(0);
    // Editions are each subscriber's local dates: Alice's in UTC, Bob's in Asia/Tokyo (a day ahead of UTC
    // from 15:00 UTC on). Alice got one edition (yesterday, after the shift above), Bob two (yesterday's
    // and today's, in Tokyo).
    const localDate = (zone: string, daysAgo: number) =>
      new Intl.DateTimeFormat('en-CA', { timeZone: zone }).format(new Date(Date.now() - daysAgo * 86_400_000));
    const expected = new Map<string, number>();
    for (const date of [localDate('UTC', 1), localDate('Asia/Tokyo', 1), localDate('Asia/Tokyo', 0)]) {
      expected.set(date, (expected.get(date) ?? 0) + 1);
    }
    for (const [date, n] of expected) expect(r.stdout).toMatch(new RegExp(`${date}\\s+planned ${n}\\s+sent ${n}`));
    expect(r.stdout).toMatch(/^overdue: none/m);
  });

  it('refuses bad input with a one-line reason and a non-zero exit', async () => {
    const bad = await cli('subscribe', 'dave@example.org', '--topic', '"unbalanced');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toMatch(/quote/i);
    const missing = await cli('ingest', join(tmp.dir, 'nope.json'));
    expect(missing.code).not.toBe(0);
    expect(missing.stderr.trim().split('\n')).toHaveLength(1);
  }, 60_000); // two CLI processes
});
