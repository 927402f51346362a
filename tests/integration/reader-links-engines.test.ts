// A digest's own links on both engines, clicked from the real email through a listening server: "more /
// less like this", follow an author, the web view, and the reader's Atom feed with "new feed address". On
// SQLite the digest is sent by `digest serve`'s pipeline; on PostgreSQL (`digest serve`'s wiring with
// DATABASE_URL=postgres://…, skipped, said once, when PostgreSQL is unreachable) by the built `digest
// ingest`, `digest plan` and `digest worker` processes. The reader subscribes and confirms through the
// form and the emailed link on both. Votes and follows are asserted in the engine's own tables.
import type { FastifyInstance } from 'fastify';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migratePostgres } from '../../src/db/postgres/migrate.ts';
import { openPostgresDoor, type PostgresDoorHandle } from '../../src/main.ts';
import { buildServer } from '../../src/web/server.ts';
import { ensureBuilt } from '../helpers/build.ts';
import { startDigest } from '../helpers/digest-cli.ts';
import { BATCH_DAY_1, fixtureBatch } from '../helpers/pg-edition.ts';
import { postgresForTests, type TestSchema } from '../helpers/postgres.ts';
import type { CapturedMail } from '../helpers/smtp-capture.ts';
import { PUBLIC_URL, startTestApp, TEST_SECRET, type TestApp } from '../helpers/test-app.ts';
import { jsonPost, linkIn } from '../helpers/web-harness.ts';

const pg = await postgresForTests();
const READER = 'reader@example.org';

interface Engine {
  t: TestApp;
  base: string;
  /** Rows from the engine the links write to (SQL with ? placeholders). */
  all<R>(sql: string, ...params: unknown[]): Promise<R[]>;
  /** Ingests, plans and sends the day's digest to every confirmed reader. */
  sendDigests(): Promise<void>;
  close(): Promise<void>;
}

const dollar = (sql: string) => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

async function listen(t: TestApp, more: Partial<Parameters<typeof buildServer>[0]> = {}): Promise<{ web: FastifyInstance; base: string }> {
  const web = buildServer({ ...t.app, ...more });
  await web.listen({ port: 0, host: '127.0.0.1' });
  const a = web.server.address();
  return { web, base: `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}` };
}

async function sqliteEngine(): Promise<Engine> {
  const t = await startTestApp({}, new Date().toISOString());
  const { web, base } = await listen(t);
  const db = t.app.db;
  return {
    t,
    base,
    all: async <R,>(sql: string, ...p: unknown[]) => db.prepare(sql).all(...p) as R[],
    async sendDigests() {
      t.app.operator.ingest(fixtureBatch(BATCH_DAY_1));
      await t.app.pipeline.run({ mode: 'now', fetch: false });
    },
    async close() {
      await web.close();
      await t.close();
    },
  };
}

async function postgresEngine(): Promise<Engine> {
  ensureBuilt();
  const s: TestSchema = await pg.schema();
  await migratePostgres(s.pool);
  const t = await startTestApp({ DATABASE_URL: s.url, DATABASE_SCHEMA: s.name }, new Date().toISOString());
  const handle: PostgresDoorHandle = (await openPostgresDoor(t.app))!;
  const { web, base } = await listen(t, { door: handle.served, ...handle.readerLinks });
  const env = { DATABASE_URL: s.url, DATABASE_SCHEMA: s.name, SECRET_KEY: TEST_SECRET, PUBLIC_URL, SMTP_URL: t.smtp.url };
  const cli = async (...args: string[]) => {
    const run = startDigest(args, env, 'digest-links-');
    const code = await run.code;
    expect(run.err(), args.join(' ')).toBe('');
    expect(code, args.join(' ')).toBe(0);
    return run.out();
  };
  return {
    t,
    base,
    all: async <R,>(sql: string, ...p: unknown[]) => (await s.pool.query(dollar(sql), p)).rows as R[],
    async sendDigests() {
      await cli('ingest', fileURLToPath(BATCH_DAY_1));
      await cli('plan', '--now', '--no-fetch');
      expect(await cli('worker', '--once')).toMatch(/^sent 1, /m);
    },
    async close() {
      await web.close();
      await handle.close();
      await t.close();
      await s.drop();
    },
  };
}

const engines = [
  { engine: 'sqlite', open: sqliteEngine, skip: false },
  { engine: 'postgres', open: postgresEngine, skip: !pg.reachable },
] as const;

/** The papers of a digest's text part, in order, with their links. */
function papersOf(text: string): Array<{ title: string; more: string; less: string; follow: string | undefined; author: string | undefined }> {
  const blocks = text.split(/\n(?=\d+\. )/).filter((b) => /^\d+\. /.test(b));
  return blocks.map((b) => ({
    title: /^\d+\. (.*)$/m.exec(b)![1]!.trim(),
    more: /More like this: (\S+)/.exec(b)![1]!,
    less: /Less like this: (\S+)/.exec(b)![1]!,
    follow: /Follow [^:\n]+: (\S+)/.exec(b)?.[1],
    author: /Follow ([^:\n]+): /.exec(b)?.[1],
  }));
}

const unescape = (s: string) => s.replaceAll('&#x2F;', '/').replaceAll('&amp;', '&').replaceAll('&#x3D;', '=');

describe.each(engines)("a digest's links on $engine", ({ open, skip }) => {
  let e: Engine;
  let digest: CapturedMail;
  beforeAll(async () => {
    if (skip) return;
    e = await open();
    expect((await fetch(`${e.base}/subscribe`, jsonPost({ email: READER, topics: ['reinforcement learning'] }))).status).toBe(202);
    const confirm = await e.t.smtp.waitFor(READER);
    expect((await fetch(local(linkIn(confirm.text, '/confirm/')))).status).toBe(200);
    await e.sendDigests();
    digest = await e.t.smtp.waitFor(READER, 2, 30_000);
  }, 180_000);
  afterAll(async () => {
    await e?.close();
  });

  const local = (url: string) => `${e.base}${new URL(url).pathname}`;
  const votes = () =>
    e.all<{ title: string; vote: number }>(
      'SELECT p.title, f.vote FROM feedback f JOIN papers p ON p.id = f.paper_id JOIN subscribers s ON s.id = f.subscriber_id WHERE s.email = ? ORDER BY p.title',
      READER,
    );
  const topics = async () =>
    (await e.all<{ text: string }>('SELECT t.text FROM topics t JOIN subscribers s ON s.id = t.subscriber_id WHERE s.email = ? ORDER BY t.position', READER)).map((r) => r.text);
  /** GET a link (a page with one button), then POST its form. */
  async function click(url: string): Promise<{ page: string; done: string }> {
    const got = await fetch(local(url));
    expect(got.status, url).toBe(200);
    const page = await got.text();
    const action = unescape(/<form method="post" action="([^"]+)"/.exec(page)![1]!);
    const posted = await fetch(`${e.base}${action}`, { method: 'POST' });
    expect(posted.status, action).toBe(200);
    return { page, done: await posted.text() };
  }

  it.skipIf(skip)('"more" and "less like this" record one vote per paper in the engine\'s table; "less" offers to mute the topic', async () => {
    const [first, second] = papersOf(digest.text);
    expect(second).toBeDefined();
    const more = await click(first!.more);
    expect(more.page).toContain(first!.title.slice(0, 40));
    expect(more.done).toContain('Recorded: more papers like');
    const less = await click(second!.less);
    expect(less.done).toContain('Recorded: fewer papers like');
    expect(less.done).toMatch(/<q class="topic-text">reinforcement learning<\/q> · <a href="[^"]+\/mute\//);
    // Changing one's mind: still one row for the paper, the last vote counts.
    await click(first!.less);
    expect(await votes()).toEqual([first!.title, second!.title].sort().map((title) => ({ title, vote: -1 })));
    // A link altered to name a paper the digest did not list is refused as a forged one.
    const forged = first!.more.replace(/\/(\d+)\/more$/, (_m, id: string) => `/${Number(id) + 100_000}/more`);
    expect((await fetch(local(forged))).status).toBe(403);
  });

  it.skipIf(skip)('following an author adds the author: topic once, and counts as "more like this"', async () => {
    const paper = papersOf(digest.text).find((p, i) => i >= 2 && p.follow !== undefined)!;
    const first = await click(paper.follow!);
    expect(first.page).toContain(`Follow ${paper.author}`);
    expect(first.done).toContain(`Following ${paper.author}`);
    expect(await topics()).toEqual(['reinforcement learning', `author:"${paper.author}"`]);
    const again = await fetch(local(paper.follow!), { method: 'POST' });
    expect(await again.text()).toContain(`Already following ${paper.author}`);
    expect(await topics()).toEqual(['reinforcement learning', `author:"${paper.author}"`]);
    expect((await votes()).find((v) => v.title === paper.title)).toEqual({ title: paper.title, vote: 1 });
  });

  it.skipIf(skip)('the web view shows the digest the link names, without the address', async () => {
    const view = /https:\/\/digest\.example\.org\/digests\/[^\s"<>]+/.exec(digest.html)![0];
    const res = await fetch(local(view));
    expect(res.status).toBe(200);
    const html = await res.text();
    const plain = papersOf(digest.text).filter((p) => !/[<>&'"]/.test(p.title));
    expect(plain.length).toBeGreaterThanOrEqual(3);
    // Titles carry the matched words' highlights: compared as the text a reader sees.
    const text = html.replace(/<[^>]+>/g, '');
    for (const p of plain) expect(text).toContain(p.title);
    expect(html).not.toContain(READER);
  });

  it.skipIf(skip)("the reader's feed lists the digest's papers; a new feed address ends the old one", async () => {
    const preferences = local(linkIn(digest.text, '/preferences/'));
    const feedOf = async () => unescape(/<a href="([^"]+)" data-feed-url>/.exec(await (await fetch(preferences)).text())![1]!);
    const feed = await feedOf();
    const atom = await fetch(local(feed));
    expect(atom.status).toBe(200);
    const xml = await atom.text();
    expect(xml).toContain(`<title>Paper Digest: papers for ${READER}</title>`);
    const titles = [...xml.matchAll(/<entry>\s*<id>[^<]*<\/id>\s*<title>([^<]*)<\/title>/g)].map((m) => m[1]);
    expect(titles.length).toBeGreaterThanOrEqual(papersOf(digest.text).length);
    expect(titles).toContain(papersOf(digest.text)[0]!.title.replaceAll('&', '&amp;'));

    const rotated = await fetch(`${preferences}/feed`, { method: 'POST', redirect: 'manual' });
    expect(rotated.status).toBe(303);
    expect((await fetch(local(feed))).status).toBe(403);
    const renewed = await feedOf();
    expect(renewed).not.toBe(feed);
    expect((await fetch(local(renewed))).status).toBe(200);
  });
});
