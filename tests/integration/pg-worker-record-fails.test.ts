// A PostgreSQL worker whose record of a delivery fails for good (not a lost connection, which it waits out):
// the worker stops with the error, as a failed claim stops it, instead of waiting forever with its lanes
// parked; the row the relay accepted stays 'sending' (recovery makes it unknown), never a mail failure that
// could send it again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgLedger } from '../../src/ledger/postgres/ledger.ts';
import { migratePostgres } from '../../src/db/postgres/migrate.ts';
import { planEdition } from '../../src/ledger/postgres/plan.ts';
import { runPgWorker } from '../../src/send/postgres/worker.ts';
import type { DigestSource } from '../../src/send/postgres/pg-digests.ts';
import type { Mailer } from '../../src/mail/types.ts';
import { loadConfig } from '../../src/config.ts';
import { postgresForTests, type TestSchema } from '../helpers/postgres.ts';
import { seedSubscribers } from '../helpers/pg-seed.ts';

const pg = await postgresForTests();

const messages: DigestSource = {
  prepare: async () => {},
  build: (row) => ({ kind: 'mail', mail: { to: `s${row.subscriber_id}@example.org`, subject: row.edition, text: `${row.id}`, html: `<p>${row.id}</p>`, messageId: `d${row.id}@x` }, release: undefined }),
  close: () => {},
};

describe.skipIf(!pg.reachable)('a PostgreSQL worker whose record fails for good', () => {
  let s: TestSchema;
  beforeAll(async () => {
    s = await pg.schema();
    await migratePostgres(s.pool);
    await seedSubscribers(s.pool, 6);
    await planEdition(s.pool, { edition: '2026-11-27', toPaper: 10 });
  });
  afterAll(async () => s?.drop());

  it('stops with the error; the accepted rows stay sending, none marked failed or retry', async () => {
    const ledger = new PgLedger(s.pool, 'host:9:9');
    ledger.recordSent = async () => {
      throw Object.assign(new Error('permission denied for table digests'), { code: '42501' });
    };
    const accepted: string[] = [];
    const mailer: Mailer = { send: async (m) => (accepted.push(m.to as string), { messageId: m.messageId ?? 'x', response: '250 ok' }), close: async () => {} };
    const config = loadConfig({ LOG_LEVEL: 'silent' });
    const outcome = await Promise.race([
      runPgWorker({ pool: s.pool, ledger, mailer, digests: messages, lanes: 2, untilEmpty: true, retry: config }).then(
        () => 'finished',
        (e: Error) => e.message,
      ),
      new Promise((r) => setTimeout(() => r('still waiting after 10 s'), 10_000)),
    ]);
    expect(outcome).toBe('permission denied for table digests');
    expect(accepted.length).toBeGreaterThan(0);
    const rows = await s.pool.query(`SELECT status, count(*)::int AS n FROM digests GROUP BY status ORDER BY status`);
    const by = Object.fromEntries(rows.rows.map((r) => [r.status, r.n]));
    expect(by.sending).toBe(accepted.length);
    expect(by.failed ?? 0).toBe(0);
    expect(by.retry ?? 0).toBe(0);
  });
});
