// What a stranger on the internet can reach, over real HTTP (the server listening on a port, or Fastify's
// inject with the peer address a request would come from): the local inbox only from this machine with
// its token, rate limits keyed on the address the trusted proxy saw, authentication before any body is
// read, /metrics not public, HSTS over https.
// The stories that reach the store run on both engines (the shared rate limits, the console's sessions,
// /metrics' figures: with DATABASE_URL on the file's one PostgreSQL schema, served as `digest serve` serves
// it, each story keyed on its own client addresses); the rest run once, on SQLite: the local inbox reads
// files beside the SQLite database (local-inbox), and a refusal at start-up, a token checked before the
// body, a webhook that is off and HSTS are decided before any store is asked.
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { migratePostgres } from '../../src/db/postgres/migrate.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, type CliIo } from '../../src/cli.ts';
import { Inbox } from '../../src/mail/catcher.ts';
import { buildServer } from '../../src/web/server.ts';
import { ADMIN_PASSWORD, adminHash } from '../helpers/admin-setup.ts';
import { serveApp } from '../helpers/engine-store.ts';
import { forEachEngine } from '../helpers/on-engines.ts';
import { createTestSchema, type TestSchema } from '../helpers/postgres.ts';
import { startTestApp } from '../helpers/test-app.ts';
import { freePort } from '../helpers/ports.ts';
import { tempDatabaseDir } from '../helpers/seed.ts';
import { jsonPost, startWebHarness, type WebHarness } from '../helpers/web-harness.ts';
import { DIGEST_BIN } from '../helpers/build.ts';

const BIN = DIGEST_BIN;

const STRANGER = '203.0.113.9';
const INBOX_TOKEN = 'inbox-token-0123456789';
const METRICS_TOKEN = 'metrics-token-0123456789';

const harnesses: WebHarness[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const h of harnesses) await h.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function harness(env: Record<string, string>, inbox = false): Promise<WebHarness> {
  let box: Inbox | undefined;
  if (inbox) {
    const dir = mkdtempSync(join(tmpdir(), 'digest-exposure-'));
    dirs.push(dir);
    box = new Inbox(dir);
    box.save(Buffer.from('From: a@example.org\r\nTo: b@example.org\r\nSubject: Secret link\r\n\r\nhttps://x/confirm/abc\r\n'));
  }
  const h = await startWebHarness(env, undefined, { web: box ? { inbox: box, inboxToken: INBOX_TOKEN } : {} });
  harnesses.push(h);
  return h;
}

/** Sends the headers of a POST that announces `declared` bytes and only `sent` of them; resolves with the status if the server answers before the rest. */
function answerBeforeBody(base: string, path: string, headers: Record<string, string>, declared = 5_000_000, sent = 1024): Promise<number> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { ...headers, 'content-length': String(declared) } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
      req.destroy();
    });
    req.on('error', (e) => (String(e).includes('ECONNRESET') || String(e).includes('socket hang up') ? undefined : reject(e)));
    req.write(Buffer.alloc(sent, 'a'));
    setTimeout(() => reject(new Error(`no answer while the body was still coming (${path})`)), 3000).unref();
  });
}

describe('the local mail catcher is only ever local', () => {
  let h: WebHarness;
  beforeAll(async () => {
    h = await harness({ HOST: '127.0.0.1' }, true);
  });

  it('decides on the decoded route: /%69nbox from another machine is refused like /inbox', async () => {
    for (const url of ['/inbox', '/%69nbox', '/%69nbox.json', '/inbox/%2e%2e/inbox', `/%69nbox?token=${INBOX_TOKEN}`]) {
      const r = await h.app.inject({ url, remoteAddress: STRANGER });
      expect(r.statusCode, url).toBe(403);
      expect(r.body).not.toContain('Secret link');
    }
  });

  it('wants the start-up token even from this machine, then keeps it in a cookie', async () => {
    const none = await fetch(`${h.base}/%69nbox`);
    expect(none.status).toBe(403);
    expect(await none.text()).toContain('the link `digest serve` printed at start-up');
    expect((await fetch(`${h.base}/inbox?token=wrong-token`)).status).toBe(403);
    const first = await fetch(`${h.base}/inbox?token=${INBOX_TOKEN}`);
    expect(first.status).toBe(200);
    expect(await first.text()).toContain('Secret link');
    const cookie = first.headers.getSetCookie()[0]!.split(';')[0]!;
    expect(first.headers.getSetCookie()[0]).toMatch(/HttpOnly; SameSite=Strict/);
    expect((await fetch(`${h.base}/inbox.json`, { headers: { cookie } })).status).toBe(200);
  });

  it('`digest serve` prints the inbox link with a fresh token, and only that link opens it', async () => {
    const db = tempDatabaseDir('digest-serve-inbox-');
    const port = await freePort();
    const child = spawn(process.execPath, [BIN, 'serve'], {
      cwd: db.dir,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'silent', MAIL_CATCHER_PORT: '0', SOURCES: '', DATABASE_PATH: db.path },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let out = '';
      const line = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`serve did not start: ${out}`)), 30_000);
        const read = (c: Buffer) => {
          out += c.toString();
          const m = /local inbox at (\S+)/.exec(out);
          if (m) {
            clearTimeout(timer);
            resolve(m[1]!);
          }
        };
        child.stdout!.on('data', read);
        child.stderr!.on('data', read);
      });
      const link = new URL(line);
      expect(link.pathname).toBe('/inbox');
      expect(link.searchParams.get('token')).toMatch(/^[A-Za-z0-9_-]{22}$/);
      const base = `http://127.0.0.1:${port}`;
      expect((await fetch(`${base}/inbox`)).status).toBe(403);
      expect((await fetch(`${base}/%69nbox`)).status).toBe(403);
      expect((await fetch(`${base}/inbox${link.search}`)).status).toBe(200);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.on('close', r));
      db.remove();
    }
  }, 60_000);

  it('is off behind a proxy (TRUST_PROXY) and when HOST listens beyond this machine, saying why', async () => {
    const proxied = await harness({ HOST: '127.0.0.1', TRUST_PROXY: '127.0.0.1' }, true);
    const r = await fetch(`${proxied.base}/inbox?token=${INBOX_TOKEN}`);
    expect(r.status).toBe(403);
    expect(await r.text()).toContain('TRUST_PROXY is set');
    const open = await harness({ HOST: '0.0.0.0' }, true);
    const o = await fetch(`${open.base}/inbox?token=${INBOX_TOKEN}`);
    expect(o.status).toBe(403);
    expect(await o.text()).toContain('HOST=0.0.0.0 listens beyond this machine');
  });
});

describe('rate limits cannot be dodged with X-Forwarded-For', () => {
  const saved = { ...process.env };
  afterEach(() => {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  });

  it('TRUST_PROXY=true is refused at start-up with a message naming it', async () => {
    Object.assign(process.env, { SOURCES: '', TRUST_PROXY: 'true', DATABASE_PATH: ':memory:' });
    const err: string[] = [];
    const io: CliIo = { out: () => undefined, err: (l) => err.push(l), isTTY: false };
    expect(await runCli(['node', 'digest', 'status'], io)).toBe(1);
    expect(err.join('\n')).toMatch(/TRUST_PROXY: "true" would trust any X-Forwarded-For a client writes/);
    Object.assign(process.env, { TRUST_PROXY: '10.0.0.0/33' });
    err.length = 0;
    expect(await runCli(['node', 'digest', 'status'], io)).toBe(1);
    expect(err.join('\n')).toMatch(/TRUST_PROXY: "10\.0\.0\.0\/33" is not an IP address or CIDR/);
  });
});

describe('authentication before the body', () => {
  it('POST /api/batches answers 401 before reading a 5 MB body', async () => {
    const h = await harness({ API_TOKEN: 'api-token-0123456789' });
    expect(await answerBeforeBody(h.base, '/api/batches', { 'content-type': 'application/json' })).toBe(401);
    expect(await answerBeforeBody(h.base, '/api/batches', { 'content-type': 'application/json', authorization: 'Bearer wrong-token-000000' })).toBe(401);
  });

  it('a webhook that is off answers 404 before its body is read', async () => {
    const h = await harness({});
    expect(await answerBeforeBody(h.base, '/webhooks/mailgun', { 'content-type': 'application/json' }, 60_000)).toBe(404);
  });
});

describe('HSTS', () => {
  it('is sent when PUBLIC_URL is https, and not over plain http', async () => {
    const https = await harness({});
    expect((await fetch(`${https.base}/`)).headers.get('strict-transport-security')).toBe('max-age=31536000');
    const plain = buildServer({ ...https.core, config: { ...https.config, PUBLIC_URL: 'http://localhost:3000' } });
    expect((await plain.inject({ url: '/' })).headers['strict-transport-security']).toBeUndefined();
    await plain.close();
  });
});

forEachEngine('what a stranger reaches in the store', (engine) => {
  let schema: TestSchema | undefined;
  const served: Array<{ close(): Promise<void> }> = [];
  beforeAll(async () => {
    if (engine === 'postgres') await migratePostgres((schema = await createTestSchema()).pool);
  }, 60_000);
  afterAll(async () => {
    for (const s of served.splice(0)) await s.close();
    await schema?.drop();
  });

  /** The app (a real SMTP server, a fake clock) served as `digest serve` serves it on this engine's store. */
  async function harness(env: Record<string, string>): Promise<{ base: string; app: FastifyInstance }> {
    const t = await startTestApp({ ...env, ...(schema ? { DATABASE_URL: schema.url, DATABASE_SCHEMA: schema.name } : {}) });
    const s = await serveApp(t.app, 0);
    served.push({ close: async () => (await s.close(), await t.close()) });
    const a = s.web.server.address();
    return { base: `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`, app: s.web };
  }

  describe('rate limits cannot be dodged with X-Forwarded-For', () => {
    it('with one proxy in front (TRUST_PROXY=1), only the address the proxy appended counts', async () => {
      const h = await harness({ TRUST_PROXY: '1', SUBSCRIBE_RATE_LIMIT: '2' });
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        const r = await fetch(`${h.base}/subscribe`, {
          ...jsonPost({ email: `r${i}@example.org`, topics: ['diffusion'] }),
          headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.9.9.${i}, 198.51.100.7` },
        });
        statuses.push(r.status);
      }
      expect(statuses).toEqual([202, 202, 429, 429]);
    });

    it('with the proxy named by address, a request from elsewhere is keyed on its own address', async () => {
      const h = await harness({ TRUST_PROXY: '127.0.0.1, 10.0.0.0/8', SUBSCRIBE_RATE_LIMIT: '2' });
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        const r = await h.app.inject({
          method: 'POST',
          url: '/subscribe',
          remoteAddress: STRANGER,
          headers: { 'content-type': 'application/json', 'x-forwarded-for': `198.51.100.${i}` },
          payload: { email: `s${i}@example.org`, topics: ['diffusion'] },
        });
        statuses.push(r.statusCode);
      }
      expect(statuses).toEqual([202, 202, 429, 429]);
    });
  });

  describe('authentication before the body', () => {
    it('the console refuses an upload without a session before reading it, and a malformed one with 400', async () => {
      const h = await harness({ ADMIN_PASSWORD_HASH: await adminHash(), BOUNCE_ADDRESS: 'bounces@bounces.example.org' });
      const multipart = { 'content-type': 'multipart/form-data; boundary=xyz' };
      expect(await answerBeforeBody(h.base, '/admin/import', multipart)).toBe(401);
      // The login form, read before anyone is known: no multipart there at all, and a few KB at most.
      expect(await answerBeforeBody(h.base, '/admin/login', multipart, 100_000)).toBe(415);
      expect(await answerBeforeBody(h.base, '/admin/login', { 'content-type': 'application/x-www-form-urlencoded' }, 100_000)).toBe(413);

      const form = await fetch(`${h.base}/admin/login`);
      const loginCookie = form.headers.getSetCookie()[0]!.split(';')[0]!;
      const csrf = /name="_csrf" value="([^"]*)"/.exec(await form.text())![1]!;
      const login = await fetch(`${h.base}/admin/login`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: loginCookie },
        body: new URLSearchParams({ _csrf: csrf, password: ADMIN_PASSWORD }).toString(),
      });
      const cookie = login.headers.getSetCookie().find((c) => c.startsWith('digest_admin='))!.split(';')[0]!;
      for (const body of ['not multipart at all', '--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n\r\nemail\r\n']) {
        const r = await fetch(`${h.base}/admin/import`, { method: 'POST', headers: { ...multipart, cookie, accept: 'application/json' }, body });
        expect(r.status).toBe(400);
        expect(await r.json()).toMatchObject({ code: 'MULTIPART_INVALID' });
      }
    });
  });

  describe('/metrics is not public', () => {
    it('answers only this machine when no METRICS_TOKEN is set, and nobody local-looking behind a proxy', async () => {
      const h = await harness({});
      expect((await h.app.inject({ url: '/metrics', remoteAddress: STRANGER })).statusCode).toBe(403);
      const stranger = await h.app.inject({ url: '/metrics', remoteAddress: STRANGER });
      expect(stranger.body).not.toContain('digest_');
      expect(stranger.json()).toMatchObject({ code: 'METRICS_LOCAL_ONLY' });
      expect((await fetch(`${h.base}/metrics`)).status).toBe(200);
      const proxied = await harness({ TRUST_PROXY: '1' });
      expect((await fetch(`${proxied.base}/metrics`)).status).toBe(403);
    });

    it('with METRICS_TOKEN, wants it as a bearer token from anywhere', async () => {
      const h = await harness({ METRICS_TOKEN });
      expect((await fetch(`${h.base}/metrics`)).status).toBe(401);
      expect((await fetch(`${h.base}/metrics`, { headers: { authorization: 'Bearer wrong-token-123456789' } })).status).toBe(401);
      const ok = await h.app.inject({ url: '/metrics', remoteAddress: STRANGER, headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      expect(ok.statusCode).toBe(200);
      expect(ok.body).toContain('digest_');
    });
  });
});
