// `digest import` as a user runs it: the real command in a child process, on a real SQLite file and, with
// DATABASE_URL, on one PostgreSQL schema for the file (migrated once); a real SMTP server that must receive
// no confirmation email, then a real tick sending digests.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSmtpCapture, type SmtpCapture } from '../helpers/smtp-capture.ts';
import { DIGEST_BIN } from '../helpers/build.ts';
import { engineStore, type EngineStore } from '../helpers/engine-store.ts';
import { forEachEngine } from '../helpers/on-engines.ts';

const BIN = DIGEST_BIN;
const SAMPLE = fileURLToPath(new URL('../../samples/daily-papers-sample.json', import.meta.url));

forEachEngine('digest import <file.csv>', (engine) => {
  let dir: string;
  let smtp: SmtpCapture;
  let store: EngineStore;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'digest-import-cli-'));
    smtp = await startSmtpCapture();
    store = await engineStore(engine, 'digest-import-cli-');
  });

  afterAll(async () => {
    await smtp.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function digest(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    const env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      // The engine's store: its SQLite file, or with DATABASE_URL the file's schema.
      ...store.env,
      SMTP_URL: smtp.url,
      SECRET_KEY: 'import-cli-test-secret-0123456789abcdef',
      PUBLIC_URL: 'https://digest.example.org',
      LOG_LEVEL: 'silent',
    };
    return new Promise((resolve) => {
      // cwd is the temp dir, so a developer's .env in the repository is not read.
      execFile(process.execPath, [BIN, ...args], { cwd: dir, env, timeout: 30_000 }, (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      });
    });
  }

  it('imports a list without emailing anyone, refuses a bad file whole, and confirmed rows get digests', async () => {
    const good = join(dir, 'list.csv');
    writeFileSync(
      good,
      'email,topics,confirmed\n' +
        'ada@example.org,reinforcement learning;"multi-agent",yes\n' +
        'bob@example.org,reinforcement learning,no\n' +
        'carol@example.org,"""large language models""",true\n',
    );
    const first = await digest('import', good);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/imported 3 subscribers \(3 new, 0 updated\)/);

    const bad = join(dir, 'bad.csv');
    writeFileSync(bad, 'email,topics\ndan@example.org,diffusion\nerin@example,diffusion\nfay@example.org,flow\n');
    const refused = await digest('import', bad);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toMatch(/line 3: email: "erin@example" is not a valid email address/);

    const listed = await digest('subscribers');
    const lines = listed.stdout.trim().split('\n');
    expect(lines).toHaveLength(3); // nothing of bad.csv was written
    expect(lines.find((l) => l.startsWith('ada@example.org'))).toMatch(/\tconfirmed\t.*reinforcement learning \| "multi-agent"/);
    expect(lines.find((l) => l.startsWith('bob@example.org'))).toMatch(/\tpending\t/);
    expect(smtp.messages).toHaveLength(0); // no confirmation emails for an import
    // In the engine's own store (with DATABASE_URL, PostgreSQL's schema, not the SQLite file beside it).
    const rows = await store.sql.all<{ email: string }>('SELECT email FROM subscribers ORDER BY email');
    expect(rows.map((r) => r.email)).toEqual(['ada@example.org', 'bob@example.org', 'carol@example.org']);

    expect((await digest('ingest', SAMPLE)).code).toBe(0);
    const run = await digest('run');
    expect(run.code).toBe(0);
    await smtp.waitFor('ada@example.org');
    await smtp.waitFor('carol@example.org');
    expect(smtp.to('bob@example.org')).toHaveLength(0); // pending: no digest
    expect(smtp.to('ada@example.org')[0]!.subject).toMatch(/paper/i);
  });
});
