// Credentials never travel in clear: `digest run` against a real smtp-server that offers AUTH but no
// STARTTLS refuses to log in (one line naming the setting that allows it), sends with
// SMTP_ALLOW_PLAIN_AUTH=true, and logs in over STARTTLS when the relay offers it. On both engines: with
// DATABASE_URL=postgres://… the same `digest run`, each case's seeded file copied into the file's
// one schema first. The command runs in this process (runCli, tests/helpers/cli-in-process.ts): what is
// tested is the relay dialogue and the command's lines and exit code, not the process (~5 s less a case
// on the loaded CI machine; the built bin's `digest run` exit codes: delivery-processes, end-to-end).
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { migratePostgres } from '../../src/db/postgres/migrate.ts';
import { runSummary, SECRET } from '../helpers/delivery-setup.ts';
import { refillSchema } from '../helpers/engine-run.ts';
import { forEachEngine, postgresSql, sqliteSql, type EngineSql } from '../helpers/on-engines.ts';
import { createTestSchema, type TestSchema } from '../helpers/postgres.ts';
import { digestInProcess } from '../helpers/cli-in-process.ts';
import { seedBatch, seedSubscribers, tempDatabase, type TempDb } from '../helpers/seed.ts';

interface Relay {
  port: number;
  /** Each AUTH attempt: the user, and whether the session was encrypted then. */
  logins: Array<{ user: string; secure: boolean }>;
  received: number;
  close(): Promise<void>;
}

async function relay(options: SMTPServerOptions): Promise<Relay> {
  const r = { logins: [] as Relay['logins'], received: 0 };
  const server = new SMTPServer({
    logger: false,
    authOptional: false,
    allowInsecureAuth: true,
    authMethods: ['PLAIN', 'LOGIN'],
    ...options,
    onAuth: (auth, session, cb) => {
      r.logins.push({ user: auth.username ?? '', secure: session.secure });
      cb(null, { user: auth.username });
    },
    onData: (stream, _session, cb) => {
      stream.resume();
      stream.on('end', () => {
        r.received++;
        cb();
      });
    },
  });
  server.on('error', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.server.address() as { port: number }).port;
  return {
    port,
    logins: r.logins,
    get received() {
      return r.received;
    },
    close: () => new Promise<void>((res) => server.close(() => res())),
  };
}

let t: TempDb | undefined;
let open: Relay[] = [];
afterEach(async () => {
  for (const r of open) await r.close();
  open = [];
  t?.cleanup();
  t = undefined;
});

/** Digests sent, in the store `digest run` wrote. */
async function sentIn(sql: EngineSql): Promise<number> {
  return Number((await sql.get<{ n: number | string }>(`SELECT count(*) AS n FROM digests WHERE status = 'sent'`))!.n);
}

forEachEngine('SMTP credentials', (engine) => {
  let schema: TestSchema | undefined;
  beforeAll(async () => {
    if (engine !== 'postgres') return;
    schema = await createTestSchema();
    await migratePostgres(schema.pool);
  });
  afterAll(() => schema?.drop());
  const onPg = (): Record<string, string> => (schema ? { DATABASE_URL: schema.url, DATABASE_SCHEMA: schema.name } : {});
  const sqlOf = (db: TempDb): EngineSql => (schema ? postgresSql(schema.pool) : sqliteSql(db.db));

  async function seeded(): Promise<TempDb> {
    t = tempDatabase();
    seedBatch(t.db, new Date().toISOString().slice(0, 10), [{ title: 'Speculative decoding with draft trees' }]);
    seedSubscribers(t.db, [{ email: 'ada@example.com', topics: ['speculative decoding'] }]);
    if (schema) await refillSchema(t.db, schema);
    return t;
  }

  function run(db: TempDb, smtpUrl: string, env: Record<string, string> = {}) {
    return digestInProcess(
      ['run'],
      {
        ...onPg(),
        DATABASE_PATH: db.path,
        SMTP_URL: smtpUrl,
        SECRET_KEY: SECRET,
        PUBLIC_URL: 'https://digest.example.org',
        MAIL_FROM: 'Paper Digest <digest@papers.example.org>',
        SMTP_RETRY_BASE_MS: '20',
        SMTP_RETRY_MAX_MS: '100',
        SMTP_TIMEOUT_MS: '3000',
        LOG_LEVEL: 'silent',
        ...env,
      },
    );
  }

  it('a relay with AUTH but no STARTTLS: the password is not sent, the run stops with one line naming SMTP_ALLOW_PLAIN_AUTH', async () => {
    const r = await relay({ disabledCommands: ['STARTTLS'] });
    open.push(r);
    const db = await seeded();
    const res = await run(db, `smtp://digest:hunter2@127.0.0.1:${r.port}`);
    expect(res.code).toBe(1);
    expect(res.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^error: sending paused: .*SMTP_URL: the relay offers no STARTTLS and the URL is not smtps:\/\/, so the password would travel in clear; refused \(use smtps:\/\/ or a relay with STARTTLS, or set SMTP_ALLOW_PLAIN_AUTH=true\)/),
    ]);
    expect(r.logins).toEqual([]);
    expect(r.received).toBe(0);
    expect(await sentIn(sqlOf(db))).toBe(0);
  });

  it('SMTP_ALLOW_PLAIN_AUTH=true allows it, on purpose', async () => {
    const r = await relay({ disabledCommands: ['STARTTLS'] });
    open.push(r);
    const db = await seeded();
    const res = await run(db, `smtp://digest:hunter2@127.0.0.1:${r.port}`, { SMTP_ALLOW_PLAIN_AUTH: 'true' });
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(runSummary(res.stdout).sent).toBe(1);
    expect(r.logins).toEqual([{ user: 'digest', secure: false }]);
  });

  it('a relay offering STARTTLS: the login goes over TLS', async () => {
    const r = await relay({});
    open.push(r);
    const db = await seeded();
    // smtp-server's built-in certificate is self-signed.
    const res = await run(db, `smtp://digest:hunter2@127.0.0.1:${r.port}?tls.rejectUnauthorized=false`);
    expect(res.stderr).toBe('');
    expect(runSummary(res.stdout).sent).toBe(1);
    expect(r.logins).toEqual([{ user: 'digest', secure: true }]);
  });
});
