// A running app (createApp on a temp SQLite file, real SMTP capture) with BOUNCE_ADDRESS set, four confirmed
// subscribers who each got a digest through the real send path, so every digest left with its VERP
// envelope sender. Bounce tests deliver reports about those digests.
import { readFileSync } from 'node:fs';
import { createTransport } from 'nodemailer';
import { startBounceReceiver, type BounceReceiver } from '../../src/bounces/receiver.ts';
import { sqliteBounceStore } from '../../src/bounces/store.ts';
import { verpFrom } from '../../src/bounces/verp.ts';
import type { Logger } from '../../src/log.ts';
import { join } from 'node:path';
import { runPipeline } from '../../src/pipeline.ts';
import type { Engine } from './on-engines.ts';
import { startEngineRun, type EngineRun } from './engine-run.ts';
import { seedBatch, seedSubscribers } from './seed.ts';
import { startTestApp, type TestApp } from './test-app.ts';

export const BOUNCE = 'bounces@bounces.example.org';
export const READERS = ['alice@example.com', 'bob@example.com', 'carol@example.com', 'dave@example.com'] as const;
const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'bounces');

export interface BounceSetup {
  t: TestApp;
  /** The envelope sender each reader's digest really left with (from the SMTP capture). */
  envelope: Record<string, string>;
  digestId: Record<string, number>;
  status(email: string): { status: string; hard_failures: number };
  events(): Array<{ kind: string; outcome: string; channel: string; subscriber: string }>;
}

/** The setup's paper and readers, written into the SQLite file. */
function seedReaders(db: TestApp['app']['db']): void {
  seedBatch(db, '2025-11-25', [{ title: 'Mixture of experts at scale', abstract: 'Sparse mixture of experts layers.' }], 'test', '2025-11-25T06:00:00.000Z');
  seedSubscribers(db, READERS.map((email) => ({ email, topics: ['mixture of experts'] })));
}

export async function startBounceSetup(env: Record<string, string> = {}): Promise<BounceSetup> {
  const t = await startTestApp({ BOUNCE_ADDRESS: BOUNCE, HARD_FAILURES_TO_SUPPRESS: '2', ...env });
  const db = t.app.db;
  seedReaders(db);
  const r = await runPipeline(t.app, { mode: 'now' });
  if (r.send?.sent !== READERS.length) throw new Error(`expected ${READERS.length} digests sent, got ${r.send?.sent}`);
  const envelope: Record<string, string> = {};
  const digestId: Record<string, number> = {};
  for (const email of READERS) {
    envelope[email] = (await t.smtp.waitFor(email)).mailFrom;
    digestId[email] = (db.prepare('SELECT d.id FROM digests d JOIN subscribers s ON s.id = d.subscriber_id WHERE s.email = ?').get(email) as { id: number }).id;
  }
  return {
    t,
    envelope,
    digestId,
    status: (email) => db.prepare('SELECT status, hard_failures FROM subscribers WHERE email = ?').get(email) as { status: string; hard_failures: number },
    events: () =>
      db.prepare(`SELECT e.kind, e.outcome, e.channel, s.email AS subscriber FROM bounce_events e JOIN subscribers s ON s.id = e.subscriber_id ORDER BY e.id`).all() as Array<{
        kind: string;
        outcome: string;
        channel: string;
        subscriber: string;
      }>,
  };
}

/** A fixture report with its placeholders filled in, CRLF line endings as on the wire. */
export function fixtureReport(name: string, fill: { envelope: string; recipient: string }): string {
  return readFileSync(join(FIXTURES, name), 'utf8')
    .replaceAll('{{ENVELOPE}}', fill.envelope)
    .replaceAll('{{RECIPIENT}}', fill.recipient)
    .replaceAll('{{BOUNCE}}', BOUNCE)
    .replace(/\r?\n/g, '\r\n');
}

/** The built-in bounce receiver on a free port over the setup's app; each handled report's outcome goes to `outcomes`. */
export function startReceiverFor(s: BounceSetup, outcomes: string[], logger: Logger = s.t.app.logger): Promise<BounceReceiver> {
  const { app } = s.t;
  return startBounceReceiver(
    { store: sqliteBounceStore({ db: app.db, clock: app.clock, logger, config: app.config }), logger, verp: verpFrom(app.config)!, onReport: (o) => outcomes.push(o) },
    { port: 0, host: '127.0.0.1' },
  );
}

/** Delivers a raw report to a receiver as an MTA would (null sender), and waits until it is handled. */
export async function deliverReport(port: number, raw: string, to: string): Promise<void> {
  const transport = createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true, logger: false });
  try {
    await transport.sendMail({ envelope: { from: '', to: [to] }, raw });
  } finally {
    transport.close();
  }
}

export interface EngineBounceSetup {
  e: EngineRun;
  t: TestApp;
  envelope: Record<string, string>;
  digestId: Record<string, number>;
  status(email: string): Promise<{ status: string; hard_failures: number }>;
  events(): Promise<Array<{ kind: string; outcome: string; channel: string; subscriber: string }>>;
}

/**
 * startBounceSetup on either engine (engine-run.ts): the same readers and paper, their digests sent by
 * `digest run`'s tick on that engine; status and events read the engine's store.
 */
export async function startBounceSetupOn(engine: Engine, env: Record<string, string> = {}): Promise<EngineBounceSetup> {
  const e = await startEngineRun(engine, { BOUNCE_ADDRESS: BOUNCE, HARD_FAILURES_TO_SUPPRESS: '2', ...env }, seedReaders);
  const fail = async (why: string) => {
    await e.close();
    throw new Error(why);
  };
  const r = await e.run();
  if (r.send?.sent !== READERS.length) return fail(`expected ${READERS.length} digests sent on ${engine}, got ${r.send?.sent}`);
  const envelope: Record<string, string> = {};
  const digestId: Record<string, number> = {};
  for (const email of READERS) {
    envelope[email] = (await e.t.smtp.waitFor(email)).mailFrom;
    const row = await e.sql.get<{ id: number | string }>('SELECT d.id FROM digests d JOIN subscribers s ON s.id = d.subscriber_id WHERE s.email = ?', email);
    digestId[email] = Number(row!.id);
  }
  return {
    e,
    t: e.t,
    envelope,
    digestId,
    status: async (email) => {
      const row = (await e.sql.get<{ status: string; hard_failures: number | string }>('SELECT status, hard_failures FROM subscribers WHERE email = ?', email))!;
      return { status: row.status, hard_failures: Number(row.hard_failures) };
    },
    events: () =>
      e.sql.all(`SELECT e.kind, e.outcome, e.channel, s.email AS subscriber FROM bounce_events e JOIN subscribers s ON s.id = e.subscriber_id ORDER BY e.id`),
  };
}

/** startReceiverFor over the engine's bounce store. */
export function startReceiverOn(s: EngineBounceSetup, outcomes: string[], logger: Logger = s.t.app.logger): Promise<BounceReceiver> {
  const { app } = s.t;
  return startBounceReceiver(
    { store: s.e.bounceStore(logger), logger, verp: verpFrom(app.config)!, onReport: (o) => outcomes.push(o) },
    { port: 0, host: '127.0.0.1' },
  );
}
