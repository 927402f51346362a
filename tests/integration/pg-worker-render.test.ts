// `digest worker` sends the real digest from PostgreSQL: an edition planned on SQLite (broad and narrow
// topics, a muted topic, readers with a model: reference rows and plain rows, suggestions), moved with
// `digest copy`, then sent by the built worker into a real SMTP sink. Each address gets exactly one message,
// equal to what the SQLite send path sends for the same row (headers, envelope, subject, text, HTML; only
// Date, DKIM's signature and MIME boundaries differ), its links verify, and a reader who unsubscribed after
// planning gets nothing.
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, systemClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import type { Db } from '../../src/db/open.ts';
import { recordVote } from '../../src/feedback/profile.ts';
import { Links } from '../../src/links.ts';
import { createLogger } from '../../src/log.ts';
import { createSmtpMailer } from '../../src/mail/smtp-mailer.ts';
import { matchPending } from '../../src/match/matcher.ts';
import { planDigests } from '../../src/plan/planner.ts';
import { createRenderer } from '../../src/render/render.ts';
import { sendPending } from '../../src/send/sender.ts';
import { Tokens } from '../../src/tokens.ts';
import { ensureBuilt } from '../helpers/build.ts';
import { REPO_ROOT } from '../helpers/delivery-setup.ts';
import { postgresForTests, type TestSchema } from '../helpers/postgres.ts';
import { runNodeChild } from '../helpers/run-child.ts';
import { rowItems, seedBatch, seedSubscribers, tempDatabase, type TempDb } from '../helpers/seed.ts';
import { SmtpSink, type SinkMessage } from '../helpers/smtp-sink.ts';

const pg = await postgresForTests();
const digest = (args: string[], env: Record<string, string>) => runNodeChild([join(REPO_ROOT, 'bin', 'digest.js'), ...args], env, REPO_ROOT);

const sample = (JSON.parse(readFileSync(new URL('../../samples/daily-papers-sample.json', import.meta.url), 'utf8')) as {
  papers: Array<{ title: string; abstract: string; authors?: string[] }>;
}).papers;

const SECRET = 's'.repeat(40);
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 1024, privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
/** The settings both senders run with: the same as `digest serve`'s would be. */
const SETTINGS = {
  PUBLIC_URL: 'https://digest.example.org',
  MAIL_FROM: 'Paper Digest <digest@example.org>',
  SECRET_KEY: SECRET,
  BOUNCE_ADDRESS: 'bounces@example.org',
  UNSUBSCRIBE_MAILTO: 'leave@example.org',
  DKIM_DOMAIN: 'example.org',
  DKIM_SELECTOR: 'd1',
  DKIM_PRIVATE_KEY: privateKey,
  LOG_LEVEL: 'silent',
};

const clock = new ManualClock('2025-11-25T12:00:00Z');

/** Two days of sample papers; readers of broad and narrow topics, one muted topic, a cap, two with a model. */
function seedEdition(db: Db): { leaver: string } {
  const day = (date: string, from: number, to: number) =>
    seedBatch(
      db,
      date,
      sample.slice(from, to).map((p, i) => ({ key: `2511.${String(from + i).padStart(5, '0')}`, title: p.title, abstract: p.abstract, upvotes: (from + i) % 5 })),
      'sample',
    ).paperIds;
  const day1 = day('2025-11-24', 0, 25);
  day('2025-11-25', 25, 50);
  const subs = seedSubscribers(db, [
    { email: 'broad@example.org', topics: ['learning', 'training'] },
    { email: 'narrow@example.org', topics: ['python'] },
    { email: 'muted@example.org', topics: [{ text: 'reinforcement', muted: true }, 'language'] },
    { email: 'capped@example.org', topics: ['reward', 'models'] },
    { email: 'model@example.org', topics: ['learning'] },
    { email: 'model2@example.org', topics: ['performance', 'networks'] },
    { email: 'leaver@example.org', topics: ['learning', 'language'] },
    { email: 'shared@example.org', topics: ['learning', 'training'], watermark: day1[10]! },
  ]);
  db.prepare(`UPDATE subscribers SET max_papers = 3 WHERE email = 'capped@example.org'`).run();
  for (const s of subs.filter((x) => x.email.startsWith('model'))) {
    recordVote(db, s.id, day1[2]!, 1, clock.now());
    recordVote(db, s.id, day1[7]!, 1, clock.now());
    recordVote(db, s.id, day1[4]!, -1, clock.now());
    // Keeps only what the model ranks high: the model pass rewrites the row as a plain list.
    db.prepare(`UPDATE subscribers SET model_only = 1 WHERE id = ?`).run(s.id);
  }
  return { leaver: 'leaver@example.org' };
}

interface Received {
  envelopeFrom: string;
  to: string[];
  subject: string | undefined;
  text: string | undefined;
  html: string | undefined;
  headers: Record<string, string>;
}

/** A message as a reader's client sees it, less what differs per send: Date, DKIM's signature, MIME boundaries. */
async function received(m: SinkMessage): Promise<Received> {
  const e = await m.parse();
  const headers: Record<string, string> = {};
  for (const h of e.headers) if (!['date', 'dkim-signature', 'content-type'].includes(h.key)) headers[h.key] = h.value;
  headers['content-type'] = (e.headers.find((h) => h.key === 'content-type')?.value ?? '').replace(/boundary="?[^";]+"?/, 'boundary=B');
  return { envelopeFrom: m.from, to: m.to, subject: e.subject, text: e.text, html: e.html, headers };
}

function byAddress(sink: SmtpSink): Map<string, SinkMessage[]> {
  const out = new Map<string, SinkMessage[]>();
  for (const m of sink.messages) for (const to of m.to) out.set(to, [...(out.get(to) ?? []), m]);
  return out;
}

describe.skipIf(!pg.reachable)('digest worker renders the real digest from PostgreSQL', () => {
  let t: TempDb;
  let s: TestSchema;
  let pgSink: SmtpSink;
  let sqliteSink: SmtpSink;
  beforeAll(async () => {
    ensureBuilt();
    t = tempDatabase();
    s = await pg.schema();
    pgSink = await SmtpSink.start();
    sqliteSink = await SmtpSink.start();
  }, 180_000);
  afterAll(async () => {
    await pgSink?.close();
    await sqliteSink?.close();
    t?.cleanup();
    await s?.drop();
  });

  it('sends each address exactly the SQLite path\'s message, with working links; nothing to who left after planning', async () => {
    const { leaver } = seedEdition(t.db);
    matchPending(t.db);
    const planned = await planDigests(t.db, { clock, mode: 'now', lists: 'per-query' });
    expect(planned.planned).toBe(8);
    // The test means something: reference rows and plain rows (the model pass rewrites its readers'), suggestions.
    const kinds = t.db.prepare(`SELECT substr(items, 1, 1) = x'01' AS refs, count(*) AS n FROM digests GROUP BY 1 ORDER BY 1`).all();
    expect(kinds).toEqual([{ refs: 0, n: expect.any(Number) }, { refs: 1, n: expect.any(Number) }]);
    expect(t.db.prepare(`SELECT count(*) FROM digest_suggestions`).pluck().get()).toBeGreaterThan(0);

    const copy = await digest(['copy', '--to', s.url, '--schema', s.name], { DATABASE_PATH: t.path });
    expect(copy.stderr).toBe('');
    expect(copy.code).toBe(0);
    // Unsubscribed after planning (on the shared store, as the web tier writes it): the row stays planned.
    await s.pool.query(`UPDATE subscribers SET status = 'unsubscribed', unsubscribed_at = $2 WHERE email = $1`, [leaver, new Date().toISOString()]);

    const env = { ...SETTINGS, DATABASE_URL: s.url, DATABASE_SCHEMA: s.name, SMTP_URL: pgSink.url };
    const run = await digest(['worker', '--once', '--lanes', '3'], env);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^sent 7, retry 0, failed 0, unknown 0, not confirmed 1, given back 0$/m);
    const states = await s.pool.query(`SELECT s.email, d.status, d.message_id FROM digests d JOIN subscribers s ON s.id = d.subscriber_id ORDER BY d.id`);
    expect(states.rows.filter((r) => r.status !== 'sent')).toEqual([{ email: leaver, status: 'suppressed', message_id: null }]);

    // The SQLite send path, on the same rows (the copy's source), with the same settings.
    const config = loadConfig({ ...SETTINGS, DATABASE_PATH: t.path, SMTP_URL: sqliteSink.url });
    const logger = createLogger('silent');
    const mailer = createSmtpMailer({ url: sqliteSink.url, from: config.MAIL_FROM, poolSize: 2, ratePerSecond: 0, timeoutMs: 10_000, dkim: config.dkim, logger });
    const renderer = await createRenderer({ fullPapers: config.DIGEST_FULL_PAPERS, cardCacheBytes: config.RENDER_CACHE_MB * 1024 * 1024 });
    const links = new Links(config.PUBLIC_URL, new Tokens(SECRET), systemClock);
    const summary = await sendPending({ db: t.db, mailer, renderer, links, clock: systemClock, config, logger }, { retryWindowMs: 0 });
    await mailer.close();
    expect(summary.sent).toBe(8);

    const got = byAddress(pgSink);
    const want = byAddress(sqliteSink);
    expect(got.has(leaver)).toBe(false);
    expect([...got.keys()].sort()).toEqual([...want.keys()].filter((a) => a !== leaver).sort());
    const tokens = new Tokens(SECRET);
    for (const [address, messages] of got) {
      expect(messages, address).toHaveLength(1);
      const pgMail = await received(messages[0]!);
      expect(pgMail, address).toEqual(await received(want.get(address)![0]!));
      expect(messages[0]!.raw.toString('latin1')).toMatch(/^DKIM-Signature: .*d=example\.org/m);
      expect(pgMail.envelopeFrom).toMatch(/^bounces\+.+@example\.org$/);
      expect(pgMail.headers['list-unsubscribe']).toContain('mailto:leave@example.org');

      // The papers are the row's, and its links verify for this reader and this digest.
      const row = (await s.pool.query(
        `SELECT d.id, d.items, d.from_paper, d.to_paper, d.topic_ids, s.id AS sid, s.token_salt FROM digests d JOIN subscribers s ON s.id = d.subscriber_id WHERE s.email = $1`,
        [address],
      )).rows[0];
      const first = rowItems(row, t.db)[0]!;
      const title = t.db.prepare(`SELECT title FROM papers WHERE id = ?`).pluck().get(first.paperId) as string;
      expect(pgMail.text, address).toContain(title.slice(0, 40));
      const subject = { id: row.sid, tokenSalt: row.token_salt };
      const unsubscribe = /https:\/\/digest\.example\.org\/unsubscribe\/([^\s>"]+)/.exec(pgMail.headers['list-unsubscribe']!)![1]!;
      expect(tokens.verify(unsubscribe, subject, new Date())).toEqual({ ok: true, token: { subscriberId: row.sid, purpose: 'manage' } });
      const view = /https:\/\/digest\.example\.org\/digests\/([^\s"<>]+)/.exec(pgMail.html!)![1]!;
      expect(tokens.verify(view, subject, new Date())).toEqual({ ok: true, token: { subscriberId: row.sid, purpose: `read:${row.id}` } });
    }
  }, 180_000);
});
