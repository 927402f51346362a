// tests/helpers/bounce-setup.ts on either engine: the same four confirmed readers, each sent one digest
// through the real send path (so each left with its VERP envelope sender). On PostgreSQL the seeded SQLite
// file is moved into a fresh schema (migrated once) before anything is sent, and the digests are planned
// and sent there by `digest run`'s tick (engine-test-app.ts).
import { BOUNCE, READERS } from './bounce-setup.ts';
import { startEngineTestApp, type EngineTestApp } from './engine-test-app.ts';
import type { Engine } from './on-engines.ts';
import { seedBatch, seedSubscribers } from './seed.ts';

export interface EngineBounceSetup extends EngineTestApp {
  /** The envelope sender each reader's digest really left with (from the SMTP capture). */
  envelope: Record<string, string>;
}

export async function startEngineBounceSetup(engine: Engine, env: Record<string, string> = {}): Promise<EngineBounceSetup> {
  const e = await startEngineTestApp(engine, { BOUNCE_ADDRESS: BOUNCE, HARD_FAILURES_TO_SUPPRESS: '2', ...env }, undefined, (t) => {
    seedBatch(t.app.db, '2025-11-25', [{ title: 'Mixture of experts at scale', abstract: 'Sparse mixture of experts layers.' }], 'test', '2025-11-25T06:00:00.000Z');
    seedSubscribers(t.app.db, READERS.map((email) => ({ email, topics: ['mixture of experts'] })));
  });
  try {
    const r = await e.tick();
    if (r.send?.sent !== READERS.length) throw new Error(`expected ${READERS.length} digests sent, got ${r.send?.sent}`);
    const envelope: Record<string, string> = {};
    for (const email of READERS) envelope[email] = (await e.t.smtp.waitFor(email)).mailFrom;
    return { ...e, envelope };
  } catch (err) {
    await e.close().catch(() => {});
    throw err;
  }
}
