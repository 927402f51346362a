// `digest restore <backup>` after a backup taken in the middle of a send run, all as real processes on
// one SQLite file and a real SMTP relay: the run goes on after the copy, then the database is "lost" and
// the backup restored. The next `digest run` must send nobody the edition a second time (per-address
// count at the relay = 1), the rows that may have gone out since the backup are `unknown`, and an
// unsubscribe recorded after the backup is not undone.
import { runNodeChild, type ChildResult } from '../helpers/run-child.ts';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { DIGEST_BIN } from '../helpers/build.ts';
import { deliveryEnvVars, runSummary, startBuiltRun } from '../helpers/delivery-setup.ts';
import { seedBatch, seedSubscribers, tempDatabase, type TempDb } from '../helpers/seed.ts';
import { accept, SmtpSink } from '../helpers/smtp-sink.ts';

let t: TempDb;
let sink: SmtpSink;
afterEach(async () => {
  await sink?.close();
  t?.cleanup();
});

const digest = (env: Record<string, string>, cwd: string, args: string[]): Promise<ChildResult> =>
  runNodeChild([DIGEST_BIN, ...args], env, cwd);

async function until(cond: () => boolean, timeoutMs = 40_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

function statuses(path: string): Record<string, number> {
  const db = new Database(path, { readonly: true });
  try {
    const rows = db.prepare('SELECT status, count(*) AS n FROM digests GROUP BY status').all() as Array<{ status: string; n: number }>;
    return Object.fromEntries(rows.map((r) => [r.status, r.n]));
  } finally {
    db.close();
  }
}

describe('digest restore', () => {
  it('a backup taken mid-run, restored after the run finished: the next run sends nobody the edition twice', { timeout: 180_000 }, async () => {
    t = tempDatabase();
    let backupDone = false;
    // Slow while the backup is taken (so the run is still sending then), fast afterwards.
    sink = await SmtpSink.start({ script: () => (backupDone ? accept() : accept(60)) });
    seedBatch(t.db, '2025-11-25', [{ title: 'Speculative decoding for LLMs', upvotes: 7 }]);
    const n = 120;
    const emails = Array.from({ length: n }, (_, i) => `p${i}@example.com`);
    seedSubscribers(t.db, emails.map((email) => ({ email, topics: ['decoding'] })));
    t.db.close(); // the file is the processes' now (and is replaced below)
    const env = deliveryEnvVars(t, sink, { SMTP_POOL_SIZE: '1', SEND_WORKERS: '1' });

    const run = startBuiltRun(env, t.dir);
    await until(() => sink.messages.length >= 5);
    const file = join(t.dir, 'mid-run.sqlite');
    const backup = await digest(env, t.dir, ['backup', file]);
    const sentWhenCopied = sink.messages.length;
    backupDone = true;
    expect(backup.code).toBe(0);
    expect(sentWhenCopied).toBeLessThan(n);
    expect(runSummary((await run.done).stdout).sent).toBe(n);
    expect([...sink.countsByAddress().values()].every((c) => c === 1)).toBe(true);
    const inBackup = statuses(file);
    expect(inBackup.sent ?? 0).toBeLessThan(n); // the copy holds rows still open
    // After the backup, a reader leaves (one-click unsubscribe, recorded in the live database only).
    expect((await digest(env, t.dir, ['unsubscribe', 'p0@example.com'])).code).toBe(0);
    // And an address the backup never knew joins and leaves: only the live database's history holds it.
    expect((await digest(env, t.dir, ['subscribe', 'late@example.com', '--topic', 'decoding', '--confirmed'])).code).toBe(0);
    expect((await digest(env, t.dir, ['unsubscribe', 'late@example.com'])).code).toBe(0);

    const restored = await digest(env, t.dir, ['restore', file]);
    expect(restored.stderr).toBe('');
    expect(restored.code).toBe(0);
    const open = n - (inBackup.sent ?? 0);
    expect(restored.stdout).toContain(`restored ${file} into ${t.path} (the database that was there is at ${t.path}.before-restore-`);
    expect(restored.stdout).toContain(`${open} digests not recorded as sent in the backup may have gone out since: marked unknown, never resent`);
    expect(restored.stdout).toContain('1 opt-out (unsubscribe or suppression) was recorded after the backup: carried over from the replaced database');
    expect(statuses(t.path)).toEqual({ sent: inBackup.sent, unknown: open });
    const previous = restored.stdout.match(/is at (\S+)\)/)![1]!;
    expect(existsSync(previous)).toBe(true); // kept, never deleted

    const next = await digest(env, t.dir, ['run']);
    expect(next.code).toBe(0);
    expect(runSummary(next.stdout)).toMatchObject({ sent: 0, failed: 0 });
    const counts = sink.countsByAddress();
    expect(emails.filter((a) => counts.get(a) !== 1)).toEqual([]);
    expect(sink.messages).toHaveLength(n);
    const listed = await digest(env, t.dir, ['subscribers']);
    expect(listed.stdout.split('\n').find((l) => l.startsWith('p0@example.com'))).toMatch(/\tunsubscribed\t/);
    // The opt-out history came along: the address the backup never knew cannot be confirmed by the operator.
    const again = await digest(env, t.dir, ['subscribe', 'late@example.com', '--topic', 'decoding', '--confirmed']);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/late@example\.com.*opt/);
  });

  it('refuses a file that is not a backup, naming it, and changes nothing', { timeout: 60_000 }, async () => {
    t = tempDatabase();
    const env = { DATABASE_PATH: t.path, SECRET_KEY: 'restore-test-secret-0123456789abcdef01', LOG_LEVEL: 'silent' };
    const bogus = join(t.dir, 'notes.txt');
    writeFileSync(bogus, 'not a database at all, just some text that is long enough to be a file\n'.repeat(100));
    const r = await digest(env, t.dir, ['restore', bogus]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(new RegExp(`^error: ${bogus.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: `));
    expect(existsSync(`${t.path}.restoring`)).toBe(false);
    expect(t.db.prepare('SELECT count(*) AS n FROM subscribers').get()).toEqual({ n: 0 });
  });
});
