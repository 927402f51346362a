// Consent through the public surface: the real HTTP server, signed Mailgun webhooks, the `digest` command
// (runCli on the same SQLite file), real SMTP. An opt-out is permanent until the person reverses it (by a
// link they asked for) or the operator lifts it with a recorded reason; no form, import or client address
// can undo it, mail-bomb an address, or put the requester's words into an email.
// On both engines (tests/engines.ts): on PostgreSQL the readers are copied into one schema for the file,
// their digests sent from there, and the web, the webhooks and the commands act there (servedWebDeps).
import { createHmac } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliIo } from '../../src/cli.ts';
import { servedWebDeps } from '../../src/serve.ts';
import { buildServer } from '../../src/web/server.ts';
import { startEngineBounceSetup, type EngineBounceSetup } from '../helpers/engine-bounce-setup.ts';
import { forEachEngine } from '../helpers/on-engines.ts';
import { linkIn, jsonPost, formPost } from '../helpers/web-harness.ts';

const MAILGUN_KEY = 'key-mailgun-webhook-signing-consent-01';
const savedEnv = { ...process.env };

forEachEngine('consent', (engine) => {
  let s: EngineBounceSetup;
  let web: FastifyInstance;
  let base: string;

  beforeAll(async () => {
    s = await startEngineBounceSetup(engine, { MAILGUN_WEBHOOK_SIGNING_KEY: MAILGUN_KEY, SUBSCRIBE_RATE_LIMIT: '1000' });
    web = buildServer({ ...s.t.app, ...servedWebDeps(s.t.app, s.pg) });
    await web.listen({ port: 0, host: '127.0.0.1' });
    const a = web.server.address();
    base = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
  }, 60_000); // four digests sent first: slow when the machine's two cores are shared

  afterEach(() => {
    process.env = { ...savedEnv };
  });

  afterAll(async () => {
    await web?.close();
    await s?.close();
  });

  const local = (url: string) => `${base}${new URL(url).pathname}`;
  const statusOf = async (email: string) => (await s.sql.get<{ status: string }>('SELECT status FROM subscribers WHERE email = ?', email))?.status;
  const statusesOf = (...emails: string[]) => Promise.all(emails.map(statusOf));
  const idAndSalt = async (email: string) => (await s.sql.get<{ id: number; tokenSalt: string }>('SELECT id, token_salt AS "tokenSalt" FROM subscribers WHERE email = ?', email))!;
  const mails = (email: string) => s.t.smtp.to(email).length;
  const settle = () => new Promise((r) => setTimeout(r, 400));

  function mailgun(eventData: Record<string, unknown>) {
    const timestamp = String(Math.floor(s.t.clock.now().getTime() / 1000));
    const token = `tok${Math.random().toString(16).slice(2)}`;
    const signature = createHmac('sha256', MAILGUN_KEY).update(timestamp + token).digest('hex');
    return fetch(`${base}/webhooks/mailgun`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ signature: { timestamp, token, signature }, 'event-data': eventData }) });
  }

  /** The `digest` command on the app's store (the code bin/digest.js runs): its SQLite file, or its PostgreSQL schema. */
  async function digest(...args: string[]): Promise<{ code: number; out: string; err: string }> {
    const out: string[] = [];
    const err: string[] = [];
    const io: CliIo = { out: (l) => out.push(l), err: (l) => err.push(l), isTTY: false };
    const c = s.t.app.config;
    const onPg = s.schema ? { DATABASE_URL: s.schema.url, DATABASE_SCHEMA: s.schema.name } : {};
    process.env = { ...savedEnv, DATABASE_PATH: c.DATABASE_PATH, SMTP_URL: s.t.smtp.url, SECRET_KEY: c.SECRET_KEY!, PUBLIC_URL: c.PUBLIC_URL, SOURCES: '', LOG_LEVEL: 'silent', ...onPg };
    const code = await runCli(['node', 'digest', ...args], io, { clock: s.t.clock });
    return { code, out: out.join('\n'), err: err.join('\n') };
  }

  describe('an opt-out no stranger can undo', () => {
    it('complained and hard-bounced addresses are never mailed from the form; an unsubscribed one waits for its link; the answer is byte-identical', async () => {
      // alice hard-bounces, bob complains (both signed webhooks), carol unsubscribes with one click.
      await mailgun({ event: 'failed', severity: 'permanent', reason: 'bounce', recipient: 'alice@example.com', envelope: { sender: s.envelope['alice@example.com'] }, 'delivery-status': { code: 550, 'enhanced-code': '5.1.1', message: 'user unknown' } });
      await mailgun({ event: 'complained', recipient: 'bob@example.com', envelope: { sender: s.envelope['bob@example.com'] } });
      const carol = await idAndSalt('carol@example.com');
      expect((await fetch(local(s.t.app.links.unsubscribe(carol)), { method: 'POST', body: 'List-Unsubscribe=One-Click' })).status).toBe(200);
      expect(await statusesOf('alice@example.com', 'bob@example.com', 'carol@example.com')).toEqual(['suppressed', 'unsubscribed', 'unsubscribed']);
      const before = Object.fromEntries(['alice@example.com', 'bob@example.com', 'carol@example.com', 'dave@example.com'].map((e) => [e, mails(e)]));

      const answers = new Set<string>();
      const forms = new Set<string>();
      for (const email of ['alice@example.com', 'bob@example.com', 'carol@example.com', 'dave@example.com', 'newcomer@example.com']) {
        const res = await fetch(`${base}/subscribe`, jsonPost({ email, topics: ['graph neural networks'] }));
        answers.add(`${res.status} ${await res.text()}`);
        const form = await fetch(`${base}/subscribe`, formPost([['email', email], ['topics', 'graph neural networks']]));
        forms.add(`${form.status} ${form.headers.get('location')} ${await form.text()}`);
      }
      expect(answers.size).toBe(1);
      expect([...answers][0]).toMatch(/^202 /);
      expect(forms.size).toBe(1);
      await s.t.smtp.waitFor('newcomer@example.com');
      await s.t.smtp.waitFor('carol@example.com', before['carol@example.com']! + 1);
      await s.t.smtp.waitFor('dave@example.com', before['dave@example.com']! + 1); // "already subscribed"
      await settle();
      expect(mails('alice@example.com')).toBe(before['alice@example.com']);
      expect(mails('bob@example.com')).toBe(before['bob@example.com']);
      expect(mails('carol@example.com')).toBe(before['carol@example.com']! + 1); // one, though she asked twice
      // Nothing changed for the three who left: carol stays unsubscribed (no digest) until she clicks.
      expect(await statusesOf('alice@example.com', 'bob@example.com', 'carol@example.com')).toEqual(['suppressed', 'unsubscribed', 'unsubscribed']);
      const run = await s.tick();
      expect(run.send?.sent).toBe(0);

      // carol's link applies her request: confirmed, with the topic she typed now, shown on the page.
      const confirmMail = s.t.smtp.to('carol@example.com').at(-1)!;
      const page = await fetch(local(linkIn(confirmMail.text, '/confirm/')));
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<li>graph neural networks</li>');
      expect(await statusOf('carol@example.com')).toBe('confirmed');
      const kinds = (await s.sql.all<{ kind: string }>(`SELECT kind FROM consent_events WHERE email = 'carol@example.com' ORDER BY id`)).map((r) => r.kind);
      expect(kinds).toEqual(['unsubscribe', 'reconfirmed']);
    });

    it('a confirmation link sent before the unsubscribe cannot bring the address back', async () => {
      const dave = await idAndSalt('dave@example.com');
      const oldConfirm = s.t.app.links.confirm(dave);
      s.t.clock.advance(60_000);
      await fetch(local(s.t.app.links.unsubscribe(dave)), { method: 'POST', body: 'List-Unsubscribe=One-Click' });
      expect((await fetch(local(oldConfirm))).status).toBe(403);
      expect(await statusOf('dave@example.com')).toBe('unsubscribed');
    });

    it('imports never confirm an address with an opt-out, even after a delete, and name each row', async () => {
      const csv = join(s.t.tmp.dir, 'back.csv');
      writeFileSync(csv, 'email,topics,confirmed\nbob@example.com,graphs,yes\nalice@example.com,graphs,yes\nnew.import@example.com,graphs,yes\n');
      const first = await digest('import', csv);
      expect(first.err).toBe('');
      expect(first.code).toBe(0);
      expect(first.out).toContain('line 2: bob@example.com: opted out (complaint on 2025-11-25): not confirmed');
      expect(first.out).toContain('line 3: alice@example.com: opted out (hard-bounce on 2025-11-25): not confirmed');
      expect(await statusesOf('bob@example.com', 'alice@example.com', 'new.import@example.com')).toEqual(['unsubscribed', 'suppressed', 'confirmed']);

      // The console deletes bob with all his data; his opt-out is kept by address.
      const roster = s.pg?.roster ?? s.t.app.roster;
      expect(await roster.remove((await idAndSalt('bob@example.com')).id)).toBe(true);
      const again = await digest('import', csv);
      expect(again.out).toContain('line 2: bob@example.com: opted out (complaint on 2025-11-25): not confirmed');
      expect(await statusOf('bob@example.com')).toBeUndefined();
      expect((await digest('status', 'bob@example.com')).out).toMatch(/^bob@example\.com\tno subscriber \(deleted\)\topt-out history: complaint 2025-11-25 /);
      const before = mails('bob@example.com');
      const res = await fetch(`${base}/subscribe`, jsonPost({ email: 'bob@example.com', topics: ['graphs'] }));
      expect(res.status).toBe(202);
      await settle();
      expect(mails('bob@example.com')).toBe(before);
      expect(await statusOf('bob@example.com')).toBeUndefined();
      // `digest subscribe --confirmed` is refused too.
      const forced = await digest('subscribe', 'alice@example.com', '--topic', 'graphs', '--confirmed');
      expect(forced.code).toBe(1);
      expect(forced.err).toMatch(/^error: alice@example\.com opted out \(hard-bounce on 2025-11-25\)/);
    });

    it('the operator lifts an opt-out only with a reason, which the history keeps', async () => {
      expect((await digest('unsuppress', 'alice@example.com')).code).toBe(2); // --reason is required
      expect((await digest('unsuppress', 'alice@example.com', '--reason', '  ')).err).toMatch(/^error: reason: /);
      expect(await statusOf('alice@example.com')).toBe('suppressed');
      const lifted = await digest('unsuppress', 'alice@example.com', '--reason', 'mailbox restored, she wrote to us on 24 Nov');
      expect(lifted.err).toBe('');
      expect(lifted.out).toBe('alice@example.com: lifted hard-bounce of 2025-11-25; now confirmed');
      expect(await statusOf('alice@example.com')).toBe('confirmed');
      const st = await digest('status', 'alice@example.com');
      expect(st.out).toMatch(/opt-out history: hard-bounce 2025-11-25 \d\d:\d\d \(5\.1\.1 [^)]*\); lifted 2025-11-25 \d\d:\d\d \(mailbox restored, she wrote to us on 24 Nov\)/);
      const list = await digest('opt-outs');
      expect(list.out).toMatch(/^bob@example\.com\tcomplaint\t2025-11-25T[\d:.]+Z\tunsubscribed \(deleted\)\t/m);
      expect(list.out).not.toContain('alice@example.com');
      expect((await digest('unsuppress', 'newcomer@example.com', '--reason', 'x')).err).toBe('error: newcomer@example.com has no opt-out to lift (it is pending)');
      // `digest unsubscribe` is in the history too, as the operator's doing.
      expect((await digest('unsubscribe', 'newcomer@example.com')).code).toBe(0);
      expect((await digest('status', 'newcomer@example.com')).out).toMatch(/opt-out history: unsubscribe 2025-11-25 \d\d:\d\d \(by the operator \(digest unsubscribe\)\)$/m);
    });
  });

  describe('no mail bombing through the confirmation', () => {
    it('at most 3 a day per address and none while one of the last hour is live, whatever the client; the answer never changes', async () => {
      const target = 'target@example.org';
      const answers = new Set<string>();
      const ask = async (forwardedFor: string) => {
        const res = await fetch(`${base}/subscribe`, { ...jsonPost({ email: target, topics: ['graphs'] }), headers: { 'content-type': 'application/json', 'x-forwarded-for': forwardedFor } });
        answers.add(`${res.status} ${await res.text()}`);
        await settle();
      };
      const counts: number[] = [];
      for (const [i, minutes] of [0, 11, 30, 61, 90, 122, 183, 240].entries()) {
        s.t.clock.set(new Date(Date.parse('2025-11-26T08:00:00Z') + minutes * 60_000));
        await ask(`198.51.100.${i}`);
        counts.push(mails(target));
      }
      expect(counts).toEqual([1, 1, 1, 2, 2, 3, 3, 3]);
      s.t.clock.set('2025-11-27T08:30:00Z'); // the first one is more than 24 hours old
      await ask('203.0.113.9');
      expect(mails(target)).toBe(4);
      expect(answers.size).toBe(1);
    });

    it('the confirmation email carries none of the requester\'s words: the page behind the link shows them', async () => {
      s.t.clock.set('2025-11-28T08:00:00Z');
      const words = 'URGENT verify your account at evil.example';
      await fetch(`${base}/subscribe`, jsonPost({ email: 'victim@example.org', topics: [words, 'graphs'] }));
      const mail = await s.t.smtp.waitFor('victim@example.org');
      for (const part of [mail.text, mail.html, mail.subject]) {
        expect(part).not.toContain('evil.example');
        expect(part).not.toContain('URGENT');
      }
      expect(mail.text).toContain('2 topics chosen');
      const page = await (await fetch(local(linkIn(mail.text, '/confirm/')))).text();
      expect(page).toContain(`<li>${words}</li>`);
    });
  });
});
