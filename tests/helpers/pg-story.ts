// The pieces of the PostgreSQL week story (tests/integration/pg-week-story.test.ts): the built `digest`
// CLI run at a chosen instant (tests/helpers/fake-clock.mjs: the clock is the only thing faked), `digest
// serve` started and stopped around what readers do on the web, the fixture listing split into days, and
// what each reader's topics match in it (the SQLite matcher on the same papers: the expected side).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { matchPending } from '../../src/match/matcher.ts';
import { REPO_ROOT } from './delivery-setup.ts';
import { freePort } from './ports.ts';
import { runNodeChild, type ChildResult } from './run-child.ts';
import { seedBatch, seedSubscribers, tempDatabase } from './seed.ts';

const BIN = join(REPO_ROOT, 'bin', 'digest.js');
const PRELOAD = pathToFileURL(join(REPO_ROOT, 'tests', 'helpers', 'fake-clock.mjs')).href;
const LISTING = '/work/shared/fixtures/daily-papers-page.json';

/** Where every child runs: an empty folder (no .env), its own SQLite file beside (serve still opens one). */
export function childDir(): { cwd: string; cleanup(): void } {
  const cwd = mkdtempSync(join(tmpdir(), 'pg-story-'));
  return { cwd, cleanup: () => rmSync(cwd, { recursive: true, force: true }) };
}

/** `digest <args>` from dist/ with its clock at `at` (running on from there). */
export function digestAt(at: string, args: string[], env: Record<string, string>, cwd: string): Promise<ChildResult> {
  return runNodeChild(['--import', PRELOAD, BIN, ...args], { LOG_LEVEL: 'silent', DATABASE_PATH: join(cwd, 'digest.sqlite'), ...env, TEST_CLOCK_AT: at }, cwd);
}

export interface RunningChild {
  done: Promise<number | null>;
  out(): string;
  err(): string;
  kill(sig: NodeJS.Signals): void;
}

/** `digest <args>` at `at`, left running (a worker to kill). */
export function startDigestAt(at: string, args: string[], env: Record<string, string>, cwd: string): RunningChild {
  const child = spawn(process.execPath, ['--import', PRELOAD, BIN, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SOURCES: '', LOG_LEVEL: 'silent', DATABASE_PATH: join(cwd, 'digest.sqlite'), ...env, TEST_CLOCK_AT: at },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const done = new Promise<number | null>((r) => child.on('close', (code, signal) => r(code ?? (signal ? -1 : null))));
  return { done, out: () => out, err: () => err, kill: (sig) => child.kill(sig) };
}

export interface Serve {
  base: string;
  /** The same path on this instance (links in mail name PUBLIC_URL). */
  on(url: string): string;
  stop(): Promise<void>;
}

/** The real `digest serve` at `at`, listening on a free local port; resolves once it says it serves. */
export async function startServe(at: string, env: Record<string, string>, cwd: string): Promise<Serve> {
  const port = await freePort();
  const child = startDigestAt(at, ['serve'], { ...env, PORT: String(port), HOST: '127.0.0.1' }, cwd);
  const deadline = Date.now() + 60_000;
  while (!/paper digest at /.test(child.out())) {
    const exited = await Promise.race([child.done.then(() => true), new Promise((r) => setTimeout(() => r(false), 100))]);
    if (exited || Date.now() > deadline) throw new Error(`digest serve did not start:\n${child.out()}\n${child.err()}`);
  }
  const base = `http://127.0.0.1:${port}`;
  return {
    base,
    on: (url) => `${base}${new URL(url).pathname}`,
    async stop() {
      child.kill('SIGTERM');
      await child.done;
    },
  };
}

export interface StoryPaper {
  key: string;
  title: string;
  abstract: string;
  upvotes: number;
}

/** The shared listing (71 papers), each with an arXiv-like key of its own. */
export function listing(): StoryPaper[] {
  const page = (JSON.parse(readFileSync(LISTING, 'utf8')) as { papers: Array<{ title: string; abstract: string; upvotes?: number }> }).papers;
  return page.map((p, i) => ({ key: `2512.${String(10000 + i)}`, title: p.title, abstract: p.abstract, upvotes: p.upvotes ?? 0 }));
}

/** A batch file in the project's own format. */
export function writeBatch(dir: string, name: string, source: string, date: string, papers: StoryPaper[]): string {
  const file = join(dir, `${name}.json`);
  const body = papers.map((p) => ({ id: p.key, title: p.title, abstract: p.abstract, authors: ['A. Author'], url: `https://arxiv.org/abs/${p.key}`, upvotes: p.upvotes }));
  writeFileSync(file, JSON.stringify({ source, date, papers: body }));
  return file;
}

/** What each reader's topics match among `papers`, by the SQLite matcher: reader -> paper keys. */
export function expectedMatches(papers: StoryPaper[], readers: Array<{ email: string; topics: string[] }>): Map<string, Set<string>> {
  const t = tempDatabase('pg-story-expect-');
  try {
    seedBatch(t.db, '2025-12-01', papers, 'expect');
    seedSubscribers(t.db, readers);
    matchPending(t.db);
    const rows = t.db
      .prepare(
        `SELECT DISTINCT s.email, p.paper_key AS key FROM subscribers s JOIN topics t ON t.subscriber_id = s.id
         JOIN query_matches m ON m.query_id = t.query_id JOIN papers p ON p.id = m.paper_id WHERE t.muted = 0`,
      )
      .all() as Array<{ email: string; key: string }>;
    const out = new Map(readers.map((r) => [r.email, new Set<string>()]));
    for (const r of rows) out.get(r.email)!.add(r.key);
    return out;
  } finally {
    t.cleanup();
  }
}

export async function waitUntil(what: string, ok: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
