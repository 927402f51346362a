import { it } from 'vitest';
import { createTestSchema } from '../helpers/postgres.ts';
import { startTestApp } from '../helpers/test-app.ts';
import { copySqliteToPostgres } from '../../src/db/postgres/copy.ts';
import { openPostgresDoor } from '../../src/main.ts';
import { runPipelinePg } from '../../src/pipeline-postgres.ts';
import { seedBatch, seedSubscribers } from '../helpers/seed.ts';
it('prof', async () => {
  let t0 = Date.now();
  const lap = (w: string) => { console.log(w, Date.now() - t0); t0 = Date.now(); };
  const schema = await createTestSchema(); lap('schema');
  const t = await startTestApp({ DATABASE_URL: schema.url, DATABASE_SCHEMA: schema.name, BOUNCE_ADDRESS: 'bounces@bounces.example.org' }); lap('app');
  seedBatch(t.app.db, '2025-11-25', [{ title: 'Mixture of experts at scale', abstract: 'Sparse mixture of experts layers.' }], 'test', '2025-11-25T06:00:00.000Z');
  seedSubscribers(t.app.db, ['a@x.org','b@x.org'].map((email) => ({ email, topics: ['mixture of experts'] }))); lap('seed');
  await copySqliteToPostgres(t.app.db, schema.pool); lap('copy');
  const h = (await openPostgresDoor(t.app))!; lap('door');
  const { config, clock, logger, mailer, spacer } = t.app;
  const { planEditionPg } = await import('../../src/plan/postgres/edition.ts');
  const { createPgDigests } = await import('../../src/send/postgres/pg-digests.ts');
  const { ClaimantLock } = await import('../../src/ledger/postgres/liveness.ts');
  const { PgLedger } = await import('../../src/ledger/postgres/ledger.ts');
  const { createRenderer } = await import('../../src/render/render.ts');
  for (let i = 0; i < 3; i++) {
    await planEditionPg(schema.pool, { clock, mode: 'now', logger }); lap('plan');
    await h.door.notices.sendDue(); lap('notices');
    const d = await createPgDigests(schema.pool, config, logger); lap('digests'); d.close();
    await createRenderer({ logger, fullPapers: config.DIGEST_FULL_PAPERS, cardCacheBytes: 1e6 }); lap('renderer');
    const ledger = new PgLedger(schema.pool);
    const lock = new ClaimantLock(config.DATABASE_URL!, ledger.claimant, config.DATABASE_SCHEMA);
    await lock.hold(); lap('lock'); await lock.release(); lap('unlock');
  }
  for (let i = 0; i < 2; i++) {
  const r = await runPipelinePg({ pool: schema.pool, config, clock, logger, mailer, notices: h.door.notices, spacer }, { mode: 'now' }); lap('run ' + r.send?.sent);
  }
  await h.close(); await t.close(); await schema.drop(); lap('close');
}, 120000);
