// Confirmation emails are deliveries like any other: a real SMTP relay that first refuses (421 at the
// greeting, as an expired certificate, an AUTH 535 or a relay not listening leave a client) and then
// accepts. The subscribe page answers once the email is stored; the failure is counted in `digest status`,
// `/metrics` and the console; once the relay is back, the next `digest run` sends it; a permanent refusal
// shows per subscriber. On both engines: a SQLite file, or one PostgreSQL schema (migrated once) where the
// served door stores and sends the emails, and `digest run`, `digest status`, /metrics and the console act.
import PostalMime from 'postal-mime';
import { SMTPServer, type SMTPServerAddress, type SMTPServerSession } from 'smtp-server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliIo } from '../../src/cli.ts';
import { adminHash, ADMIN_PASSWORD } from '../helpers/admin-setup.ts';
import { seedBatchOn, seedReadersOn } from '../helpers/engine-harness-ops.ts';
import { forEachEngine } from '../helpers/on-engines.ts';
import { TEST_NOW } from '../helpers/test-app.ts';
import { jsonPost, linkIn, startWebHarness, type WebHarness } from '../helpers/web-harness.ts';

interface Relay {
  url: string;
  refusing: boolean;
  received: Array<{ to: string; text: string }>;
  close(): Promise<void>;
}

/** A relay that refuses every connection with 421 while `refusing`, and any RCPT to nobody@ with 550. */
async function startRelay(): Promise<Relay> {
  const relay: Omit<Relay, 'url' | 'close'> = { refusing: false, received: [] };
  const smtpError = (message: string, responseCode: number) => Object.assign(new Error(message), { responseCode });
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onConnect(_session: SMTPServerSession, cb: (err?: Error) => void) {
      cb(relay.refusing ? smtpError('4.3.2 Service not available, closing transmission channel', 421) : undefined);
    },
    onRcptTo(address: SMTPServerAddress, _session: SMTPServerSession, cb: (err?: Error) => void) {
      cb(address.address.startsWith('nobody@') ? smtpError('5.1.1 <nobody@example.org>: Recipient address rejected: User unknown', 550) : undefined);
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        PostalMime.parse(Buffer.concat(chunks).toString('utf8'))
          .then((m) => {
            relay.received.push({ to: session.envelope.rcptTo[0]!.address, text: m.text ?? '' });
            cb();
          })
          .catch((e: Error) => cb(e));
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const a = server.server.address();
  const port = typeof a === 'object' && a ? a.port : 0;
  return Object.assign(relay, { url: `smtp://127.0.0.1:${port}`, close: () => new Promise<void>((r) => server.close(() => r())) }) as Relay;
}

const savedEnv = { ...process.env };

forEachEngine('confirmation emails', (engine) => {
  let relay: Relay;
  let h: WebHarness;

  beforeAll(async () => {
    relay = await startRelay();
    h = await startWebHarness({
      SMTP_URL: relay.url,
      ADMIN_PASSWORD_HASH: await adminHash(),
      SMTP_RETRY_BASE_MS: '60000',
      SMTP_TIMEOUT_MS: '3000',
      HARD_FAILURES_TO_SUPPRESS: '1',
    }, TEST_NOW, { engine });
  }, 30_000);
  afterEach(() => {
    process.env = { ...savedEnv };
  });
  afterAll(async () => {
    await h?.close();
    await relay?.close();
  });

  async function digest(...args: string[]): Promise<{ code: number; out: string; err: string }> {
    const out: string[] = [];
    const err: string[] = [];
    const io: CliIo = { out: (l) => out.push(l), err: (l) => err.push(l), isTTY: false };
    const c = h.config;
    const onPg = h.pgPool ? { DATABASE_URL: c.DATABASE_URL!, DATABASE_SCHEMA: c.DATABASE_SCHEMA! } : {};
    process.env = { ...savedEnv, ...onPg, DATABASE_PATH: c.DATABASE_PATH, SMTP_URL: relay.url, SECRET_KEY: c.SECRET_KEY!, PUBLIC_URL: c.PUBLIC_URL, SOURCES: '', LOG_LEVEL: 'silent', SMTP_TIMEOUT_MS: '3000', HARD_FAILURES_TO_SUPPRESS: '1' };
    const code = await runCli(['node', 'digest', ...args], io, { clock: h.clock });
    return { code, out: out.join('\n'), err: err.join('\n') };
  }

  /** The newest confirmation email's row for the address, in the engine's store. */
  const noticeState = (email: string) =>
    h.sql.get<{ status: string; attempts: number; code: number | null }>('SELECT status, attempts, smtp_code AS code FROM notices WHERE email = ? ORDER BY id DESC', email);
  const statusOf = (id: number) => h.sql.get<{ status: string }>('SELECT status FROM subscribers WHERE id = ?', id);

  async function until(check: () => Promise<boolean>, what: () => Promise<string> | string): Promise<void> {
    const deadline = Date.now() + 8000;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${await what()}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  const csrfIn = (html: string) => /name="_csrf" value="([^"]*)"/.exec(html)![1]!;

  /** A logged-in console session: its cookie and CSRF token. */
  async function consoleSession(): Promise<{ cookie: string; csrf: string }> {
    const cookieFrom = (res: Response, name: string) => res.headers.getSetCookie().find((c) => c.startsWith(`${name}=`))!.split(';')[0]!;
    const form = await fetch(`${h.base}/admin/login`);
    const res = await fetch(`${h.base}/admin/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieFrom(form, 'digest_admin_login') },
      body: new URLSearchParams({ _csrf: csrfIn(await form.text()), password: ADMIN_PASSWORD }).toString(),
    });
    const cookie = cookieFrom(res, 'digest_admin');
    return { cookie, csrf: csrfIn(await (await fetch(`${h.base}/admin/opt-outs`, { headers: { cookie } })).text()) };
  }

  async function consoleGet(path: string): Promise<string> {
    const { cookie } = await consoleSession();
    return (await fetch(`${h.base}${path}`, { headers: { cookie } })).text();
  }

  describe('confirmation emails through a relay that fails, then works', () => {
    it('are stored before the page answers, counted while the relay refuses, and sent by the next run once it is back', async () => {
      relay.refusing = true;
      const res = await fetch(`${h.base}/subscribe`, jsonPost({ email: 'reader@example.org', topics: ['graphs'] }));
      expect(res.status).toBe(202);
      expect(((await res.json()) as { message: string }).message).toMatch(/on its way/);
      await until(async () => (await noticeState('reader@example.org'))?.status === 'retry', () => 'the first attempt to fail');
      expect(await noticeState('reader@example.org')).toMatchObject({ status: 'retry', attempts: 1, code: 421 });

      const status = await digest('status');
      expect(status.out).toContain('confirmation emails (24 h): sent 0, failed 0, waiting 1 (1 to retry after a relay failure)');
      expect(status.out).toMatch(/\tlast failure: reader@example\.org retry: .*421/);
      expect((await digest('status', 'reader@example.org')).out).toMatch(/confirmation email: not sent yet, retry at 2025-11-25T\S+ \(1 attempts so far\): .*Service not available/);
      const metrics = await (await fetch(`${h.base}/metrics`)).text();
      expect(metrics).toContain('digest_confirmation_emails_retrying 1');
      expect(metrics).toContain('digest_confirmation_emails_waiting 1');
      expect(await consoleGet('/admin/deliveries')).toMatch(/Confirmation emails \(last 24 hours\): 0 sent, 0 failed, 1 to retry[\s\S]*reader@example\.org[\s\S]*Service not available/);

      // Still refusing: a run says so (non-zero, one line) and keeps the email.
      h.clock.advance(2 * 60_000);
      const down = await digest('run');
      expect(down.code).toBe(1);
      expect(down.err).toMatch(/^error: confirmation emails not sent: the SMTP relay could not be used \(.*421.*\); they are retried until it is back$/);
      expect(await noticeState('reader@example.org')).toMatchObject({ status: 'retry', attempts: 2 });
      expect(relay.received).toHaveLength(0);

      // The relay is fixed: the next run (or tick) sends it, and the link works.
      relay.refusing = false;
      h.clock.advance(60 * 60_000);
      const up = await digest('run');
      expect(up.err).toBe('');
      expect(up.code).toBe(0);
      expect(up.out).toContain('confirmation emails: sent 1, failed 0');
      expect(relay.received.map((m) => m.to)).toEqual(['reader@example.org']);
      expect((await noticeState('reader@example.org'))?.status).toBe('sent');
      expect((await fetch(h.local(linkIn(relay.received[0]!.text, '/confirm/')))).status).toBe(200);
      expect((await digest('status', 'reader@example.org')).out).toMatch(/confirmation email: sent 2025-11-25T/);
      expect(await (await fetch(`${h.base}/metrics`)).text()).toContain('digest_confirmation_emails_total{status="sent"} 1');
    });

    it('a permanent refusal is recorded once, not retried, and shown for that subscriber', async () => {
      await fetch(`${h.base}/subscribe`, jsonPost({ email: 'nobody@example.org', topics: ['graphs'] }));
      await until(async () => (await noticeState('nobody@example.org'))?.status === 'failed', async () => `the refusal (${JSON.stringify(await noticeState('nobody@example.org'))})`);
      expect(await noticeState('nobody@example.org')).toMatchObject({ status: 'failed', attempts: 1, code: 550 });
      expect((await digest('status', 'nobody@example.org')).out).toMatch(/confirmation email: FAILED for good \(1 attempts, asked [^)]+\): .*User unknown/);
      expect((await digest('status')).out).toMatch(/confirmation emails \(24 h\): sent 1, failed 1, waiting 0/);
      expect(await (await fetch(`${h.base}/metrics`)).text()).toContain('digest_confirmation_emails_total{status="failed"} 1');
      h.clock.advance(2 * 3600_000);
      expect((await digest('run')).out).not.toContain('confirmation emails:');
      expect(relay.received.filter((m) => m.to === 'nobody@example.org')).toHaveLength(0);
    });
  });

  describe('every path that suppresses records why', () => {
    it('the ledger\'s hard-failure limit and the console\'s suppress are in the history; the console lifts one only with its CSRF token and a reason', async () => {
      await seedBatchOn(h, '2025-11-25', [{ title: 'Graph networks at scale', abstract: 'Message passing on graphs.' }], 'test', '2025-11-25T06:00:00.000Z');
      const [gone, kept] = await seedReadersOn(h, [
        { email: 'nobody@bounced.example.org', topics: ['graph networks'] },
        { email: 'kept@example.org', topics: ['graph networks'] },
      ]);
      h.clock.advance(3 * 3600_000);
      const run = await digest('run'); // the relay answers 550 for nobody@: suppressed at HARD_FAILURES_TO_SUPPRESS=1
      expect(run.out).toContain('failed 1');
      expect(await statusOf(gone!.id)).toEqual({ status: 'suppressed' });

      const session = await consoleSession();
      const post = (path: string, fields: Record<string, string>, csrf = session.csrf) =>
        fetch(`${h.base}${path}`, {
          method: 'POST',
          redirect: 'manual',
          headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: session.cookie },
          body: new URLSearchParams({ ...(csrf ? { _csrf: csrf } : {}), ...fields }).toString(),
        });
      expect((await post(`/admin/subscribers/${kept!.id}/suppress`, {})).status).toBe(303);
      const list = await (await fetch(`${h.base}/admin/opt-outs`, { headers: { cookie: session.cookie } })).text();
      expect(list).toMatch(/kept@example\.org<\/a><\/td><td>operator<\/td><td>2025-11-2\d[^<]*<\/td><td>suppressed<\/td><td>suppressed from the console<\/td>/);
      expect(list).toMatch(/nobody@bounced\.example\.org<\/a><\/td><td>hard-bounce<\/td><td>[^<]*<\/td><td>suppressed<\/td><td>1 delivery failures in a row/);

      // A form post for either never mails it.
      const before = relay.received.length;
      await fetch(`${h.base}/subscribe`, jsonPost({ email: 'kept@example.org', topics: ['graphs'] }));
      await new Promise((r) => setTimeout(r, 300));
      expect(relay.received.length).toBe(before);

      expect((await post('/admin/opt-outs/lift', { email: 'kept@example.org', reason: 'suppressed by mistake' }, '')).status).toBe(403);
      const noReason = await post('/admin/opt-outs/lift', { email: 'kept@example.org', reason: ' ' });
      expect(noReason.status).toBe(400);
      expect(await noReason.text()).toContain('reason: say why the opt-out is lifted');
      expect(await statusOf(kept!.id)).toEqual({ status: 'suppressed' });
      const lifted = await post('/admin/opt-outs/lift', { email: 'kept@example.org', reason: 'suppressed by mistake', back: `/admin/subscribers/${kept!.id}` });
      expect(lifted.status).toBe(303);
      expect(lifted.headers.get('location')).toBe(`/admin/subscribers/${kept!.id}?done=lifted`);
      expect(await statusOf(kept!.id)).toEqual({ status: 'confirmed' });
      const page = await (await fetch(`${h.base}/admin/subscribers/${kept!.id}`, { headers: { cookie: session.cookie } })).text();
      expect(page).toMatch(/<td>operator<\/td><td>suppressed<\/td><td>suppressed from the console<\/td>/);
      expect(page).toMatch(/<td>lifted<\/td><td><\/td><td>suppressed by mistake<\/td>/);

      // The console's import names the opted-out row and does not confirm it.
      const upload = new FormData();
      upload.set('_csrf', session.csrf);
      upload.set('file', new File(['email,topics,confirmed\nnew.list@example.org,graphs,yes\nnobody@bounced.example.org,graphs,yes\n'], 'list.csv', { type: 'text/csv' }));
      const imported = await fetch(`${h.base}/admin/import`, { method: 'POST', headers: { cookie: session.cookie }, body: upload });
      expect(imported.status).toBe(200);
      expect(await imported.text()).toMatch(/<li>line 3: nobody@bounced\.example\.org: opted out \(hard-bounce on 2025-11-2\d\): not confirmed<\/li>/);
      expect(await statusOf(gone!.id)).toEqual({ status: 'suppressed' });
    });
  });
});
