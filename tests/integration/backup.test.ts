// `digest backup <file>` while `digest run` is sending, both as real processes on one SQLite file: the
// copy is taken mid-run (the relay stays slow until the backup has finished), opens, passes
// integrity_check, and holds every subscriber and ledger row with a consistent mix of sent and open rows.
import { runNodeChild, type ChildResult } from '../helpers/run-child.ts';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { backupDatabase } from '../../src/db/backup.ts';
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

function runCliChild(env: Record<string, string>, cwd: string, args: string[]): Promise<ChildResult> {
  return runNodeChild([DIGEST_BIN, ...args], env, cwd);
}

async function until(cond: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('digest backup', () => {
  it('copies the database consistently while a run is sending; the copy opens and checks', async () => {
    t = tempDatabase();
    let backupDone = false;
    // Slow while the backup runs (so it really overlaps the sending), fast afterwards.
    sink = await SmtpSink.start({ script: () => (backupDone ? accept() : accept(40)) });
    seedBatch(t.db, '2025-11-25', [{ title: 'Speculative decoding for LLMs', upvotes: 7 }]);
    const n = 120;
    seedSubscribers(t.db, Array.from({ length: n }, (_, i) => ({ email: `p${i}@example.com`, topics: ['decoding'] })));
    const env = deliveryEnvVars(t, sink, { SMTP_POOL_SIZE: '1', SEND_WORKERS: '1' });

    const run = startBuiltRun(env, t.dir);
    await until(() => sink.messages.length >= 5);
    const file = join(t.dir, 'copy.sqlite');
    const backup = await runCliChild(env, t.dir, ['backup', file]);
    const sentWhenCopied = sink.messages.length;
    backupDone = true;
    expect(backup.stderr).toBe('');
    expect(backup.code).toBe(0);
    expect(backup.stdout).toMatch(new RegExp(`^backup ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: [\\d.]+ MB copied in \\d+ ms, checked in \\d+ ms: integrity ok, schema \\d+; ${n} subscribers, ${n} digests, 1 paper, 0 bounce reports`));
    expect(sentWhenCopied).toBeLessThan(n); // the run was still sending when the copy was done

    const done = await run.done;
    expect(runSummary(done.stdout).sent).toBe(n);

    const copy = new Database(file, { readonly: true });
    try {
      expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(copy.pragma('foreign_key_check')).toEqual([]);
      const byStatus = Object.fromEntries(
        (copy.prepare('SELECT status, count(*) AS n FROM digests GROUP BY status').all() as { status: string; n: number }[]).map((r) => [r.status, r.n]),
      );
      // A snapshot from the middle of the run: some sent, the rest still open, nothing else.
      expect(byStatus.sent).toBeGreaterThanOrEqual(4);
      expect(byStatus.sent).toBeLessThan(n);
      expect((byStatus.sent ?? 0) + (byStatus.planned ?? 0) + (byStatus.sending ?? 0)).toBe(n);
      expect(byStatus.sending ?? 0).toBeLessThanOrEqual(1); // at most the pool's one message in flight
      // The watermark moved exactly for the digests recorded as sent (same transaction).
      const moved = (copy.prepare('SELECT count(*) AS n FROM subscribers WHERE watermark > 0').get() as { n: number }).n;
      expect(moved).toBe(byStatus.sent);
    } finally {
      copy.close();
    }
    expect(existsSync(`${file}.partial`)).toBe(false);

    // An existing file is never overwritten without --force.
    await expect(backupDatabase(t.db, file)).rejects.toThrow(`${file} exists already`);
  }, 60_000);
});
