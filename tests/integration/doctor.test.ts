// `digest doctor` through the real CLI (a child process) against real local parts: an smtp-server relay
// (STARTTLS, AUTH, refusals, the expired built-in certificate), a tiny DNS server for SPF, DKIM and DMARC
// (DNS_SERVERS), an HTTP server standing in for PUBLIC_URL and for a paper source, a SQLite file.
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type DnsServer } from '../helpers/dns-server.ts';
import { json, startFeedServer, type FeedServer } from '../helpers/feed-server.ts';
import { freePort } from '../helpers/ports.ts';
import { runNodeChild } from '../helpers/run-child.ts';
import { tempDatabaseDir, type TempDatabaseDir } from '../helpers/seed.ts';
import { DIGEST_BIN } from '../helpers/build.ts';

const BIN = DIGEST_BIN;
const pem = () => generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const OUR_KEY = pem();
const OTHER_KEY = pem();
const publicHalf = (privatePem: string) => createPublicKey(privatePem).export({ type: 'spki', format: 'der' }).toString('base64');

interface Relay {
  port: number;
  commands: string[];
  delivered: number;
  close(): Promise<void>;
}

/** A relay that records what the client asked (MAIL FROM, RCPT TO, DATA). */
async function relay(options: SMTPServerOptions = {}): Promise<Relay> {
  const r = { commands: [] as string[], delivered: 0 };
  const server = new SMTPServer({
    logger: false,
    authOptional: false,
    authMethods: ['PLAIN', 'LOGIN'],
    onAuth: (auth, _s, cb) => (auth.password === 'right' ? cb(null, { user: auth.username }) : cb(Object.assign(new Error('5.7.8 Authentication credentials invalid'), { responseCode: 535 }))),
    onMailFrom: (a, _s, cb) => {
      r.commands.push(`MAIL FROM ${a.address}`);
      cb();
    },
    onRcptTo: (a, _s, cb) => {
      r.commands.push(`RCPT TO ${a.address}`);
      cb();
    },
    onData: (stream, _s, cb) => {
      r.delivered++;
      stream.resume();
      stream.on('end', () => cb());
    },
    ...options,
  });
  server.on('error', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.server.address() as { port: number }).port,
    commands: r.commands,
    get delivered() {
      return r.delivered;
    },
    close: () => new Promise<void>((res) => server.close(() => res())),
  };
}

let dns: DnsServer;
let feeds: FeedServer;
let site: Server;
let siteUrl: string;
let d: TempDatabaseDir;
const relays: Relay[] = [];

beforeAll(async () => {
  dns = await startDnsServer({
    'papers.example.org': ['v=spf1 ip4:192.0.2.0/24 -all', 'google-site-verification=abc'],
    'mail2026._domainkey.papers.example.org': [`v=DKIM1; k=rsa; p=${publicHalf(OUR_KEY)}`],
    '_dmarc.papers.example.org': ['v=DMARC1; p=quarantine; adkim=r; aspf=r'],
    'mail2026._domainkey.stale.example.net': [`v=DKIM1; k=rsa; p=${publicHalf(OTHER_KEY)}`],
  });
  feeds = await startFeedServer();
  feeds.route('/api/daily_papers', json([]));
  site = createServer((req, res) => {
    res.writeHead(req.url === '/health' ? 200 : 404, { 'content-type': 'application/json' });
    res.end('{"ok":true}');
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', () => resolve()));
  siteUrl = `http://127.0.0.1:${(site.address() as { port: number }).port}`;
  d = tempDatabaseDir('digest-doctor-');
});

afterAll(async () => {
  for (const r of relays) await r.close();
  await dns?.close();
  await feeds?.close();
  await new Promise<void>((resolve) => site?.close(() => resolve()));
  d?.remove();
});

async function doctor(env: Record<string, string>) {
  const r = await runNodeChild(
    [BIN, 'doctor', '--timeout', '3000'],
    {
      DATABASE_PATH: d.path,
      PUBLIC_URL: siteUrl,
      MAIL_FROM: 'Paper Digest <digest@papers.example.org>',
      DKIM_DOMAIN: 'papers.example.org',
      DKIM_SELECTOR: 'mail2026',
      DKIM_PRIVATE_KEY: OUR_KEY.replace(/\n/g, '\\n'),
      DNS_SERVERS: dns.address,
      SOURCES: 'hf',
      HF_API_URL: `${feeds.url}/api/daily_papers`,
      LOG_LEVEL: 'silent',
      ...env,
    },
    d.dir,
  );
  const lines = r.stdout.trim().split('\n');
  const line = (name: string) => lines.find((l) => l.slice(6).startsWith(`${name}:`));
  return { ...r, lines, line };
}

async function startRelay(options?: SMTPServerOptions): Promise<Relay> {
  const r = await relay(options);
  relays.push(r);
  return r;
}

describe('digest doctor', () => {
  it('a healthy setup: one ok line per check, exit 0, and the relay got MAIL FROM and RCPT TO but no DATA', async () => {
    const r = await startRelay();
    const res = await doctor({ SMTP_URL: `smtp://digest:right@127.0.0.1:${r.port}?tls.rejectUnauthorized=false` });
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.lines.map((l) => l.split(':')[0])).toEqual([
      'ok    relay connect',
      'ok    relay tls',
      'ok    relay auth',
      'ok    relay mail from',
      'ok    relay rcpt to',
      'ok    spf',
      'ok    dkim',
      'ok    dmarc',
      'ok    public url',
      'ok    database',
      'ok    source hf',
      'doctor',
    ]);
    expect(res.line('relay tls')).toMatch(/STARTTLS, certificate NOT checked \(tls\.rejectUnauthorized=false in SMTP_URL\)/);
    expect(res.line('dkim')).toBe('ok    dkim: mail2026._domainkey.papers.example.org publishes the public half of our rsa key');
    expect(res.line('dmarc')).toMatch(/p=quarantine\): SPF \(papers\.example\.org\) and DKIM \(papers\.example\.org\) aligned with papers\.example\.org$/);
    expect(res.lines.at(-1)).toBe('doctor: all 11 checks passed');
    expect(r.commands).toEqual(['MAIL FROM digest@papers.example.org', 'RCPT TO digest@papers.example.org']);
    expect(r.delivered).toBe(0);
    expect(dns.asked).toEqual(expect.arrayContaining(['papers.example.org', 'mail2026._domainkey.papers.example.org', '_dmarc.papers.example.org']));
  });

  it('an expired relay certificate, a stale DKIM key, no SPF or DMARC, PUBLIC_URL down, an unusable DATABASE_PATH and a dead source: each named with its fix, exit 1', async () => {
    const r = await startRelay();
    const res = await doctor({
      // smtp-server's built-in certificate has expired: checked by default, as the mailer does.
      SMTP_URL: `smtp://digest:right@127.0.0.1:${r.port}`,
      MAIL_FROM: 'Paper Digest <digest@stale.example.net>',
      DKIM_DOMAIN: 'stale.example.net',
      PUBLIC_URL: `http://127.0.0.1:${await freePort()}`,
      DATABASE_PATH: '/etc/hostname/digest.sqlite',
      HF_API_URL: `http://127.0.0.1:${await freePort()}/api/daily_papers`,
    });
    expect(res.code).toBe(1);
    expect(res.line('relay tls')).toMatch(/^FAIL  relay tls: STARTTLS: .*certificate has expired — fix: the relay's TLS certificate must be valid/);
    expect(res.line('relay auth')).toBeUndefined(); // the password never went out
    expect(res.line('spf')).toBe('FAIL  spf: stale.example.net publishes no SPF record — fix: publish a TXT record at stale.example.net: "v=spf1 include:<your relay\'s SPF domain> -all"');
    expect(res.line('dkim')).toBe(
      'FAIL  dkim: the key published at mail2026._domainkey.stale.example.net is not the public half of DKIM_PRIVATE_KEY — fix: publish a TXT record at mail2026._domainkey.stale.example.net: ' +
        `"v=DKIM1; k=rsa; p=${publicHalf(OUR_KEY).slice(0, 16)}…" (the public half of DKIM_PRIVATE_KEY)`,
    );
    expect(res.line('dmarc')).toMatch(/^FAIL  dmarc: stale\.example\.net publishes no DMARC record — fix: publish a TXT record at _dmarc\.example\.net/);
    expect(res.line('public url')).toMatch(/^FAIL  public url: GET http:\/\/127\.0\.0\.1:\d+\/health: ECONNREFUSED .* — fix: start digest serve/);
    expect(res.line('database')).toMatch(/^FAIL  database: DATABASE_PATH=\/etc\/hostname\/digest\.sqlite: \/etc\/hostname is a file, not a folder — fix: /);
    expect(res.line('source hf')).toMatch(/^FAIL  source hf: GET .*ECONNREFUSED.* — fix: check the source's URL setting/);
    expect(res.stderr.trim()).toBe('doctor: 7 of 8 checks failed');
    expect(r.delivered).toBe(0);
  });

  it('a refused login and a refused recipient are named at their step', async () => {
    const r = await startRelay({
      onRcptTo: (_a, _s, cb) => cb(Object.assign(new Error('5.7.1 Relaying denied'), { responseCode: 550 })),
    });
    const wrong = await doctor({ SMTP_URL: `smtp://digest:wrong@127.0.0.1:${r.port}?tls.rejectUnauthorized=false` });
    expect(wrong.code).toBe(1);
    expect(wrong.line('relay auth')).toMatch(/^FAIL  relay auth: digest: 535 5\.7\.8 Authentication credentials invalid — fix: check the user and password in SMTP_URL/);
    const denied = await doctor({ SMTP_URL: `smtp://digest:right@127.0.0.1:${r.port}?tls.rejectUnauthorized=false` });
    expect(denied.code).toBe(1);
    expect(denied.line('relay mail from')).toMatch(/^ok/);
    expect(denied.line('relay rcpt to')).toMatch(/^FAIL  relay rcpt to: <digest@papers\.example\.org>: 550 5\.7\.1 Relaying denied — fix: /);
  });

  it('no STARTTLS: the password is not sent in clear, unless SMTP_ALLOW_PLAIN_AUTH=true', async () => {
    const r = await startRelay({ disabledCommands: ['STARTTLS'], allowInsecureAuth: true });
    const res = await doctor({ SMTP_URL: `smtp://digest:right@127.0.0.1:${r.port}` });
    expect(res.code).toBe(1);
    expect(res.line('relay tls')).toMatch(/^ok    relay tls: none: the relay offers no STARTTLS/);
    expect(res.line('relay auth')).toMatch(/^FAIL  relay auth: refused to send the password in clear .*SMTP_ALLOW_PLAIN_AUTH=true/);
    const allowed = await doctor({ SMTP_URL: `smtp://digest:right@127.0.0.1:${r.port}`, SMTP_ALLOW_PLAIN_AUTH: 'true' });
    expect(allowed.code).toBe(0);
    expect(allowed.line('relay auth')).toBe('ok    relay auth: logged in as digest (in clear: SMTP_ALLOW_PLAIN_AUTH=true)');
  });
});
