// arXiv's one request every ARXIV_MIN_INTERVAL_MS is for the deployment, not for each process. On one
// SQLite file: two real `digest serve` processes look like: examples up on a local stand-in for the arXiv
// API, asked at once by readers on both. On one PostgreSQL schema (where like: topics are not served yet):
// two `digest plan` processes, as on two machines, poll an arXiv source at once. Either way the stand-in
// sees the requests spaced by the interval; with a spacer per process they would arrive together.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFeedServer, xml, type FeedServer } from '../helpers/feed-server.ts';
import { freePort } from '../helpers/ports.ts';
import { postgresForTests, type TestSchema } from '../helpers/postgres.ts';
import { tempDatabaseDir } from '../helpers/seed.ts';
import { startSmtpCapture, type SmtpCapture } from '../helpers/smtp-capture.ts';
import { jsonPost } from '../helpers/web-harness.ts';
import { migratePostgres } from '../../src/db/postgres/migrate.ts';
import { DIGEST_BIN } from '../helpers/build.ts';

const BIN = DIGEST_BIN;
const API_QUERY = readFileSync(new URL('../fixtures/feeds/arxiv-api-query.xml', import.meta.url), 'utf8');
const API_EMPTY = API_QUERY.replace(/<entry>[\s\S]*<\/entry>/, '');
const INTERVAL_MS = 400;
/** Timers fire a millisecond or so late, never early; the clock is the same machine's. */
const TOLERANCE_MS = 5;
const pg = await postgresForTests();

interface Served {
  base: string;
  child: ChildProcess;
}

/** `digest serve` from the sources, answering once it prints its address. */
async function serve(env: Record<string, string>): Promise<Served> {
  const port = await freePort();
  const child = spawn(process.execPath, [BIN, 'serve'], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: String(port), HOST: '127.0.0.1', PUBLIC_URL: `http://127.0.0.1:${port}`, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${out}`)), 60_000);
    const read = (c: Buffer) => {
      out += c.toString();
      if (out.includes('paper digest at')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.on('exit', (code) => reject(new Error(`serve exited (${code}): ${out}`)));
  });
  return { base: `http://127.0.0.1:${port}`, child };
}

async function stop(s: Served | undefined): Promise<void> {
  if (!s || s.child.exitCode !== null) return;
  const closed = new Promise((r) => s.child.on('close', r));
  s.child.kill('SIGTERM');
  await closed;
}

describe.each([{ engine: 'one SQLite file', postgres: false }])('like: lookups from two `digest serve` processes on $engine', ({ postgres }) => {
  let arxiv: FeedServer;
  let smtp: SmtpCapture;
  let schema: TestSchema | undefined;
  const dirs: ReturnType<typeof tempDatabaseDir>[] = [];
  let servers: Served[] = [];
  const skip = postgres && !pg.reachable;

  beforeAll(async () => {
    if (skip) return;
    arxiv = await startFeedServer();
    arxiv.route('/api/query', xml(API_EMPTY));
    smtp = await startSmtpCapture();
    if (postgres) schema = await pg.schema();
  });
  afterEach(async () => {
    await Promise.all(servers.map(stop));
    servers = [];
  });
  afterAll(async () => {
    await arxiv?.close();
    await smtp?.close();
    await schema?.drop();
    for (const d of dirs) d.remove();
  });

  it.skipIf(skip)(`keep one request every ${INTERVAL_MS} ms between them`, async () => {
    const shared = tempDatabaseDir('digest-spacing-');
    dirs.push(shared);
    const env = (): Record<string, string> => {
      const own = postgres ? tempDatabaseDir('digest-spacing-') : shared;
      if (own !== shared) dirs.push(own);
      return {
        DATABASE_PATH: own.path,
        ...(schema ? { DATABASE_URL: schema.url, DATABASE_SCHEMA: schema.name } : {}),
        SMTP_URL: smtp.url,
        SECRET_KEY: 'spacing-test-secret-0123456789abcdef0123',
        LOG_LEVEL: 'silent',
        SOURCES: '',
        ARXIV_API_URL: `${arxiv.url}/api/query`,
        ARXIV_MIN_INTERVAL_MS: String(INTERVAL_MS),
        FETCH_RETRIES: '0',
      };
    };
    // One after the other: two processes migrating one file at the same moment is another story.
    servers.push(await serve(env()));
    servers.push(await serve(env()));

    // Six readers at once, three on each instance, each naming a paper neither database has.
    const ids = ['2501.90001', '2501.90002', '2501.90003', '2501.90004', '2501.90005', '2501.90006'];
    const answers = await Promise.all(
      ids.map((id, i) => fetch(`${servers[i % 2]!.base}/subscribe`, jsonPost({ email: `r${i}@example.org`, topics: [`like:${id}`] }))),
    );
    // arXiv does not know them: each reader is told so (400), nobody is subscribed.
    expect(answers.map((r) => r.status)).toEqual(Array(6).fill(400));

    const asked = arxiv.requests.filter((r) => r.target.startsWith('/api/query')).map((r) => r.at).sort((x, y) => x - y);
    expect(asked).toHaveLength(6);
    const gaps = asked.slice(1).map((at, i) => at - asked[i]!);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(INTERVAL_MS - TOLERANCE_MS);
  }, 120_000);
});

describe('source polls from two `digest plan` processes on one PostgreSQL schema', () => {
  const skip = !pg.reachable;
  let arxiv: FeedServer;
  let schema: TestSchema | undefined;
  const dirs: ReturnType<typeof tempDatabaseDir>[] = [];

  beforeAll(async () => {
    if (skip) return;
    arxiv = await startFeedServer();
    arxiv.route('/api/query', xml(API_EMPTY));
    schema = await pg.schema();
    await migratePostgres(schema.pool);
  });
  afterAll(async () => {
    await arxiv?.close();
    await schema?.drop();
    for (const d of dirs) d.remove();
  });

  it.skipIf(skip)(`keep one request every ${INTERVAL_MS} ms between them`, async () => {
    const plan = () => {
      const own = tempDatabaseDir('digest-spacing-');
      dirs.push(own);
      const env = {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        DATABASE_PATH: own.path,
        DATABASE_URL: schema!.url,
        DATABASE_SCHEMA: schema!.name,
        LOG_LEVEL: 'silent',
        SOURCES: 'arxiv-api:cs.CL',
        ARXIV_API_URL: `${arxiv.url}/api/query`,
        ARXIV_MIN_INTERVAL_MS: String(INTERVAL_MS),
        FETCH_RETRIES: '0',
      };
      return promisify(execFile)(process.execPath, [BIN, 'plan'], { env, timeout: 90_000 });
    };
    await Promise.all([plan(), plan()]);

    const asked = arxiv.requests.filter((r) => r.target.startsWith('/api/query')).map((r) => r.at).sort((x, y) => x - y);
    expect(asked.length).toBeGreaterThanOrEqual(2); // each process asked at least once
    const gaps = asked.slice(1).map((at, i) => at - asked[i]!);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(INTERVAL_MS - TOLERANCE_MS);
  }, 120_000);
});
