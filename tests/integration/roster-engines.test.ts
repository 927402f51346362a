// The operator's roster and consent actions on both engines: the same scenarios on SQLite and on
// PostgreSQL (the roster `digest serve` and the commands take when DATABASE_URL is postgres://; skipped,
// said once, when PostgreSQL is unreachable), through the real console over HTTP (login, CSRF) and the
// real SMTP server: an import never mails anyone and never confirms, revives or re-creates an address with
// an opt-out; a bad file is refused whole; the console's suppress is recorded where the senders look; a
// lift needs a reason and is written in the opt-out history.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OperatorRoster } from '../../src/operator/roster.ts';
import { adminHash, consoleLogin, consolePost, type ConsoleSession } from '../helpers/admin-setup.ts';
import { postgresEngineApp, sqliteEngineApp, type EngineApp } from '../helpers/engine-apps.ts';
import { postgresForTests } from '../helpers/postgres.ts';

const pg = await postgresForTests();

type Engine = EngineApp & { roster: OperatorRoster };

const ENV = async () => ({ ADMIN_PASSWORD_HASH: await adminHash() });

async function onSqlite(): Promise<Engine> {
  const e = await sqliteEngineApp(await ENV(), (t) => ({ roster: t.app.roster }));
  return Object.assign(e, { roster: e.t.app.roster });
}

async function onPostgres(): Promise<Engine> {
  const e = await postgresEngineApp(pg, await ENV(), (_t, handle) => ({ roster: handle!.roster }));
  expect(e.pg!.roster.engine).toBe('postgres');
  return Object.assign(e, { roster: e.pg!.roster });
}

const engines = [
  { engine: 'sqlite', open: onSqlite, skip: false },
  { engine: 'postgres', open: onPostgres, skip: !pg.reachable },
] as const;

describe.each(engines)('the operator roster on $engine', ({ open, skip }) => {
  let e: Engine;
  let session: ConsoleSession;
  beforeAll(async () => {
    if (skip) return;
    e = await open();
    session = (await consoleLogin(e))!.session!;
  }, 60_000);
  afterAll(async () => {
    await e?.close();
  });

  const status = async (email: string) => (await e.all<{ status: string }>('SELECT status FROM subscribers WHERE lower(email) = lower(?)', email))[0]?.status;
  const idOf = async (email: string) => Number((await e.all<{ id: number }>('SELECT id FROM subscribers WHERE lower(email) = lower(?)', email))[0]!.id);
  const history = async (email: string) => e.all<{ kind: string; detail: string }>('SELECT kind, detail FROM consent_events WHERE lower(email) = lower(?) ORDER BY id', email);
  const count = async () => Number((await e.all<{ n: number }>('SELECT count(*) AS n FROM subscribers'))[0]!.n);
  const csv = (name: string, body: string) => {
    const path = join(e.t.tmp.dir, name);
    writeFileSync(path, body);
    return path;
  };

  it.skipIf(skip)('an import mails no one, and never confirms, revives or re-creates an address with an opt-out', async () => {
    await e.roster.subscribe({ email: 'gone@example.org', topics: ['graph networks'] }, { confirmed: true });
    expect(await e.roster.unsubscribe(await idOf('gone@example.org'))).toBe(true);
    // Complained, then deleted: only its history is left, kept by address.
    await e.run(`INSERT INTO consent_events (email, kind, status, detail, at) VALUES ('angry@example.org', 'complaint', 'unsubscribed', 'feedback loop', '2025-11-20T10:00:00.000Z')`);
    const file = csv(
      'list.csv',
      'email,topics,confirmed\n' +
        'new1@example.org,reinforcement learning;"multi-agent",yes\n' +
        'new2@example.org,diffusion models,no\n' +
        'Gone@example.org,protein folding,yes\n' +
        'angry@example.org,graph networks,yes\n',
    );
    const r = await e.roster.importCsv(file);
    expect(r).toMatchObject({ imported: 3, created: 2, updated: 1, keptOptedOut: 2, noted: 2 });
    expect(r.notes).toEqual([
      { line: 4, message: expect.stringMatching(/^Gone@example\.org: opted out \(unsubscribe on 2025-11-25\): not confirmed$/) },
      { line: 5, message: 'angry@example.org: opted out (complaint on 2025-11-20): not confirmed' },
    ]);
    expect(await status('new1@example.org')).toBe('confirmed');
    expect(await status('new2@example.org')).toBe('pending');
    expect(await status('gone@example.org')).toBe('unsubscribed');
    expect(await status('angry@example.org')).toBeUndefined();
    expect(e.t.smtp.messages).toHaveLength(0);
  });

  it.skipIf(skip)('a bad row refuses the whole file, naming its line: nothing is written', async () => {
    const before = await count();
    const file = csv('bad.csv', 'email,topics\nlater@example.org,graph networks\nnot-an-address,graph networks\n');
    await expect(e.roster.importCsv(file)).rejects.toMatchObject({ code: 'IMPORT_INVALID', message: expect.stringMatching(/line 3/) });
    expect(await count()).toBe(before);
    expect(await status('later@example.org')).toBeUndefined();
  });

  it.skipIf(skip)('a like: topic of a paper the store lacks refuses the file, naming its line, before anything is written (an import looks nothing up on arXiv)', async () => {
    const before = await count();
    const file = csv('like.csv', 'email,topics\nlater@example.org,graph networks\nlike@example.org,like:2501.00010\n');
    await expect(e.roster.importCsv(file)).rejects.toMatchObject({ code: 'IMPORT_INVALID', message: expect.stringMatching(/line 3: topics: "like:2501\.00010": like:2501\.00010: paper 2501\.00010 is not in this digest's database/) });
    expect(await count()).toBe(before);
  });

  it.skipIf(skip)('digest subscribe --confirmed of an address with an opt-out is refused; a new one is confirmed', async () => {
    await expect(e.roster.subscribe({ email: 'gone@example.org', topics: ['graphs'] }, { confirmed: true })).rejects.toMatchObject({ code: 'OPTED_OUT' });
    expect(await status('gone@example.org')).toBe('unsubscribed');
    const r = await e.roster.subscribe({ email: 'fresh@example.org', topics: ['graphs'] }, { confirmed: true });
    expect(r.status).toBe('confirmed');
    const listed = [];
    for await (const s of e.roster.list()) listed.push(`${s.email} ${s.status} ${s.topics.map((t) => t.text).join('|')}`);
    expect(listed).toContain('fresh@example.org confirmed graphs');
    expect(listed).toContain('gone@example.org unsubscribed protein folding');
  });

  it.skipIf(skip)("the console's suppress is recorded in the engine's store and history; its search finds the address there", async () => {
    const found = await fetch(`${e.base}/admin/subscribers?q=new1`, { headers: { cookie: session.cookie } });
    expect(await found.text()).toContain('new1@example.org');
    const id = await idOf('new1@example.org');
    const res = await consolePost(e, session, `/admin/subscribers/${id}/suppress`, {});
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`/admin/subscribers/${id}?done=suppressed`);
    expect(await status('new1@example.org')).toBe('suppressed');
    expect(await history('new1@example.org')).toEqual([{ kind: 'operator', detail: 'suppressed from the console' }]);
    const page = await (await fetch(`${e.base}/admin/subscribers/${id}`, { headers: { cookie: session.cookie } })).text();
    expect(page).toContain('suppressed from the console');
    // Without the session's CSRF token the POST is refused and changes nothing.
    const forged = await fetch(`${e.base}/admin/subscribers/${await idOf('new2@example.org')}/suppress`, { method: 'POST', headers: { cookie: session.cookie } });
    expect(forged.status).toBe(403);
    expect(await status('new2@example.org')).toBe('pending');
  });

  it.skipIf(skip)('a lift needs a reason; with one it is written in the history and the address is back', async () => {
    const none = await consolePost(e, session, '/admin/opt-outs/lift', { email: 'gone@example.org', reason: '  ' });
    expect(none.status).toBe(400);
    expect(await history('gone@example.org')).toEqual([{ kind: 'unsubscribe', detail: 'by the operator (console)' }]);
    const listed = (await e.roster.optOuts({ limit: 10 })).map((o) => `${o.email} ${o.kind}${o.subscriberId === null ? ' (deleted)' : ''}`);
    expect(listed).toEqual(['new1@example.org operator', 'angry@example.org complaint (deleted)', 'gone@example.org unsubscribe']);

    const res = await consolePost(e, session, '/admin/opt-outs/lift', { email: 'gone@example.org', reason: 'asked by email on 25 Nov to come back' });
    expect(res.status).toBe(303);
    expect(await history('gone@example.org')).toEqual([
      { kind: 'unsubscribe', detail: 'by the operator (console)' },
      { kind: 'lifted', detail: 'asked by email on 25 Nov to come back' },
    ]);
    expect(await status('gone@example.org')).toBe('confirmed');
    expect((await e.roster.optOuts({ limit: 10 })).map((o) => o.email)).toEqual(['new1@example.org', 'angry@example.org']);
  });

  it.skipIf(skip)('delete removes the subscriber and keeps its opt-out history by address', async () => {
    const id = await idOf('new1@example.org');
    const res = await consolePost(e, session, `/admin/subscribers/${id}/delete`, { confirm: 'yes' });
    expect(res.status).toBe(200);
    expect(await status('new1@example.org')).toBeUndefined();
    expect(await history('new1@example.org')).toEqual([{ kind: 'operator', detail: 'suppressed from the console' }]);
    // An import of the deleted, suppressed address does not bring it back.
    const r = await e.roster.importCsv(csv('again.csv', 'email,topics,confirmed\nnew1@example.org,graphs,yes\n'));
    expect(r).toMatchObject({ created: 0, updated: 0, keptOptedOut: 1 });
    expect(await status('new1@example.org')).toBeUndefined();
    expect(e.t.smtp.messages).toHaveLength(0);
  });

  it.skipIf(skip)("the console's resend mails a pending address its confirmation, from the engine's store; a confirmed one gets nothing", async () => {
    const pending = await idOf('new2@example.org');
    const res = await consolePost(e, session, `/admin/subscribers/${pending}/resend`, {});
    expect(res.headers.get('location')).toBe(`/admin/subscribers/${pending}?done=resent`);
    const mail = await e.t.smtp.waitFor('new2@example.org');
    expect(mail.text).toContain('/confirm/');
    const confirmed = await consolePost(e, session, `/admin/subscribers/${await idOf('fresh@example.org')}/resend`, {});
    expect(confirmed.status).toBe(400);
    expect(e.t.smtp.messages).toHaveLength(1);
  });
});
