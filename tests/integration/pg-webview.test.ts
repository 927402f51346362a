// The web view ("view in browser", GET /digests/:token) and the console's link to it, on both engines, from
// the real built CLI and the real `digest serve`: one reader, two days' digests, a paper of the first day
// listed again later with a code link (a merge changes it in place). On SQLite `digest run` sends; on
// PostgreSQL `digest ingest`, `digest plan` and `digest worker` do, while two `digest serve` instances answer
// the links (each keeps pooled mirrors: what they show must be what PostgreSQL holds now, on either one).
// The `digest serve` instances are real processes; the CLI steps between them run the same code in this
// process (runCli, Date shifted to the step's instant), ~1 s cheaper each than a child.
// Skipped, said once, when PostgreSQL is unreachable.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHash, consoleCookie } from '../helpers/admin-setup.ts';
import { ensureBuilt } from '../helpers/build.ts';
import { digestInProcess } from '../helpers/cli-in-process.ts';
import { BATCH_DAY_1, BATCH_DAY_2 } from '../helpers/pg-edition.ts';
import { childDir, startServe, type Serve } from '../helpers/pg-story.ts';
import { freePort } from '../helpers/ports.ts';
import { postgresForTests, type TestSchema } from '../helpers/postgres.ts';
import { startSmtpCapture, type SmtpCapture } from '../helpers/smtp-capture.ts';
import { PUBLIC_URL, TEST_SECRET } from '../helpers/test-app.ts';

const pg = await postgresForTests();
const READER = 'reader@example.org';
const DAY1 = '2025-11-25T09:00:00.000Z';
const DAY2 = '2025-11-26T09:00:00.000Z';
const LATER = '2025-11-26T12:00:00.000Z';
const CODE_URL = 'https://github.com/example/revised-code';

/** A paper as the web view lists it: its link (the paper's own URL) and its title as a reader reads it. */
interface Listed {
  url: string;
  title: string;
}

/** The papers a web view page lists, in order, and the code links it shows. */
function listed(html: string): { papers: Listed[]; code: string[] } {
  const papers = [...html.matchAll(/<h3>\d+\. <a href="([^"]+)"[^>]*>([\s\S]*?)<\/a><\/h3>/g)].map((m) => ({ url: m[1]!, title: m[2]!.replace(/<[^>]+>/g, '') }));
  const code = [...html.matchAll(/<a href="([^"]+)" class="b" rel="noopener noreferrer">Code<\/a>/g)].map((m) => m[1]!);
  return { papers, code };
}

const viewLink = (html: string) => /https:\/\/digest\.example\.org\/digests\/[^\s"<>]+/.exec(html)![0];

interface Story {
  /** The web view pages of day 1 before day 2 came, of day 2, and of day 1 after its paper changed. */
  day1Before: string;
  day2: string;
  day1After: string;
  /** The console subscriber page's web view links, opened on the instance. */
  consoleViews: string[];
}

interface Deployment {
  env: Record<string, string>;
  /** Ingests a batch file at `at`; when `send`, plans and sends the slot then (the reader's digest by mail). */
  day(file: string, at: string, send: boolean): Promise<void>;
  /** How many `digest serve` instances answer the links. */
  instances: number;
}

/** `digest <args>` at `at` on the store the serve children in `cwd` use (its SQLite file, when no DATABASE_URL). */
async function cli(at: string, args: string[], env: Record<string, string>, cwd: string): Promise<string> {
  const r = await digestInProcess(args, { DATABASE_PATH: join(cwd, 'digest.sqlite'), ...env }, { at });
  expect(r.stderr, args.join(' ')).toBe('');
  expect(r.code, `${args.join(' ')}: ${r.stdout}`).toBe(0);
  return r.stdout;
}

/** A batch listing one paper of day 1 again, with a code link and more upvotes (the merge fills them in). */
function revisedBatch(dir: string, url: string): string {
  const day1 = JSON.parse(readFileSync(BATCH_DAY_1, 'utf8')) as { papers: Array<{ url: string; upvotes?: number }> };
  const paper = day1.papers.find((p) => p.url === url)!;
  const file = join(dir, 'revised.json');
  writeFileSync(file, JSON.stringify({ source: 'hf-daily', date: '2025-11-27', papers: [{ ...paper, upvotes: (paper.upvotes ?? 0) + 500, codeUrl: CODE_URL }] }));
  return file;
}

async function runStory(d: Deployment, smtp: SmtpCapture, cwd: string): Promise<Story> {
  await cli(DAY1, ['subscribe', READER, '--topic', 'reinforcement learning', '--topic', 'language models', '--confirmed'], d.env, cwd);
  await d.day(fileURLToPath(BATCH_DAY_1), DAY1, true);
  const mail1 = await smtp.waitFor(READER, 1, 60_000);
  const serveEnv = { ...d.env, ADMIN_PASSWORD_HASH: await adminHash() };
  const serves: Serve[] = [];
  try {
    // Started at day 1 (their clocks run on from there): their schedulers have no slot due, the CLI sends.
    for (let i = 0; i < d.instances; i++) serves.push(await startServe(DAY1, { ...serveEnv, MAIL_CATCHER_PORT: String(await freePort()) }, cwd));
    const [a, b = a] = serves as [Serve, Serve?];
    const page = async (s: Serve, url: string) => {
      const res = await fetch(s.on(url));
      expect(res.status, url).toBe(200);
      return res.text();
    };
    const view1 = viewLink(mail1.html);
    const day1Before = await page(a, view1);
    // Views at once on one instance: each its own page, the same one.
    expect(new Set(await Promise.all([1, 2, 3, 4].map(() => page(a, view1))))).toEqual(new Set([day1Before]));

    await d.day(fileURLToPath(BATCH_DAY_2), DAY2, true);
    const mail2 = await smtp.waitFor(READER, 2, 60_000);
    const day2 = await page(a, viewLink(mail2.html));
    expect(await page(b, viewLink(mail2.html))).toBe(day2);

    await d.day(revisedBatch(cwd, listed(day1Before).papers[0]!.url), LATER, false);
    const day1After = await page(a, view1);
    expect(await page(b, view1)).toBe(day1After);

    // The console: the reader's page links each sent digest's web view, newest first.
    const cookie = await consoleCookie(a.base);
    const admin = async (path: string) => (await fetch(`${a.base}${path}`, { headers: { cookie } })).text();
    const search = await admin(`/admin/subscribers?q=${encodeURIComponent(READER)}`);
    const id = /href="\/admin\/subscribers\/(\d+)"/.exec(search)![1]!;
    const detail = await admin(`/admin/subscribers/${id}`);
    const links = [...detail.matchAll(/<a href="([^"]+)">web view<\/a>/g)].map((m) => m[1]!.replaceAll('&#x2F;', '/').replaceAll('&#x3D;', '='));
    const consoleViews = await Promise.all(links.map((l) => page(b, l)));
    return { day1Before, day2, day1After, consoleViews };
  } finally {
    for (const s of serves) await s.stop();
  }
}

const stories: Record<string, Story> = {};

describe('the web view and its console link on SQLite', () => {
  let smtp: SmtpCapture;
  let dir: ReturnType<typeof childDir>;
  beforeAll(async () => {
    ensureBuilt();
    smtp = await startSmtpCapture();
    dir = childDir();
    const env = { SECRET_KEY: TEST_SECRET, PUBLIC_URL, SMTP_URL: smtp.url, DIGEST_TZ: 'UTC', SOURCES: '' };
    stories.sqlite = await runStory(
      {
        env,
        instances: 1,
        async day(file, at, send) {
          await cli(at, ['ingest', file], env, dir.cwd);
          if (send) await cli(at, ['run', '--no-fetch'], env, dir.cwd);
        },
      },
      smtp,
      dir.cwd,
    );
  }, 300_000);
  afterAll(async () => {
    await smtp?.close();
    dir?.cleanup();
  });

  it('shows each day its own papers, and a paper as it is now', () => {
    const s = stories.sqlite!;
    expect(listed(s.day1Before).papers.length).toBeGreaterThanOrEqual(3);
    expect(listed(s.day1After).code).toContain(CODE_URL);
  });
});

describe.skipIf(!pg.reachable)('the web view and its console link on PostgreSQL, two digest serve instances', () => {
  let smtp: SmtpCapture;
  let dir: ReturnType<typeof childDir>;
  let s: TestSchema;
  let story: Story;
  beforeAll(async () => {
    ensureBuilt();
    smtp = await startSmtpCapture();
    dir = childDir();
    s = await pg.schema();
    const env = { DATABASE_URL: s.url, DATABASE_SCHEMA: s.name, SECRET_KEY: TEST_SECRET, PUBLIC_URL, SMTP_URL: smtp.url, DIGEST_TZ: 'UTC', SOURCES: '' };
    await cli(DAY1, ['migrate'], env, dir.cwd);
    story = stories.postgres = await runStory(
      {
        env,
        instances: 2,
        async day(file, at, send) {
          await cli(at, ['ingest', file], env, dir.cwd);
          if (!send) return;
          await cli(at, ['plan', '--now', '--no-fetch'], env, dir.cwd);
          expect(await cli(at, ['worker', '--once'], env, dir.cwd)).toMatch(/^sent 1, /m);
        },
      },
      smtp,
      dir.cwd,
    );
  }, 300_000);
  afterAll(async () => {
    await smtp?.close();
    await s?.drop();
    dir?.cleanup();
  });

  it('shows the same papers as SQLite, day after day, as PostgreSQL holds them now', () => {
    const lite = stories.sqlite;
    for (const k of ['day1Before', 'day2', 'day1After'] as const) {
      const got = listed(story[k]);
      expect(got.papers.length, k).toBeGreaterThanOrEqual(3);
      if (lite) expect(got, k).toEqual(listed(lite[k]));
    }
    // A new day's digest, not the day before's, then the first day's paper with its code link.
    expect(listed(story.day2).papers).not.toEqual(listed(story.day1Before).papers);
    expect(listed(story.day1Before).code).not.toContain(CODE_URL);
    expect(listed(story.day1After).code).toContain(CODE_URL);
    expect(listed(story.day1After).papers).toEqual(listed(story.day1Before).papers);
  });

  it("the console's subscriber page links each sent digest's web view, newest first", () => {
    expect(story.consoleViews.map((h) => listed(h).papers)).toEqual([listed(story.day2).papers, listed(story.day1After).papers]);
    if (stories.sqlite) expect(stories.sqlite.consoleViews.map((h) => listed(h))).toEqual(story.consoleViews.map((h) => listed(h)));
  });
});
