// `digest doctor`: every outside thing the service depends on, checked now, one line each with the fix:
// the relay (connect, TLS and its certificate, AUTH, MAIL FROM and RCPT TO, no DATA), the sender domain's
// SPF, DKIM and DMARC, PUBLIC_URL answering, the database taking writes (the SQLite file, or PostgreSQL with
// DATABASE_URL: pg-database.ts), each paper source answering.
// It loads the configuration only: no migration, no secret written, no mail sent.
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Resolver } from 'node:dns/promises';
import { utcDate } from '../clock.ts';
import type { Config } from '../config.ts';
import { openDatabase } from '../db/open.ts';
import { isPostgresUrl } from '../db/postgres/pool.ts';
import { errorMessage } from '../errors.ts';
import { parseSources, sourceSpacer } from '../ingest/sources.ts';
import { SOURCE_KINDS } from '../ingest/source-kinds/registry.ts';
import type { Logger } from '../log.ts';
import { domainOf } from '../mail/smtp-mailer.ts';
import type { Check } from './check.ts';
import { checkDkim, checkDmarc, checkSpf } from './dns-checks.ts';
import { postgresDatabaseCheck } from './pg-database.ts';
import { probeRelay, type ProbeStep } from './smtp-probe.ts';

export interface DoctorDeps {
  config: Config;
  resolver: Resolver;
  logger: Logger;
  now: Date;
  /** Per network step (connect, a DNS answer, an HTTP answer). */
  timeoutMs: number;
}

/** "Paper Digest <digest@example.org>" -> "digest@example.org". */
function addressOf(from: string): string {
  return /<([^<>]+)>\s*$/.exec(from)?.[1]?.trim() ?? from.trim();
}

const RELAY_FIX: Record<ProbeStep['step'], string> = {
  connect: 'check the host and port in SMTP_URL, that the relay runs, and that this machine may reach it (firewall)',
  tls: "the relay's TLS certificate must be valid (not expired, trusted, issued for the host name in SMTP_URL): renew it or use the name it was issued for",
  auth: 'check the user and password in SMTP_URL (URL-encode special characters: %40 for @)',
  'mail from': 'the relay refuses this sender: use a MAIL_FROM (or BOUNCE_ADDRESS) in a domain this relay account may send for',
  'rcpt to': 'the relay refuses to relay for us: check that SMTP_URL logs in and that this account may send to other domains',
};

async function relayChecks(deps: DoctorDeps): Promise<Check[]> {
  const { config } = deps;
  if (!config.SMTP_URL) {
    return [{ name: 'relay', status: 'warn', detail: 'no SMTP_URL: mail goes to the built-in local catcher, not to readers', fix: 'set SMTP_URL before inviting real readers' }];
  }
  const steps = await probeRelay({
    url: config.SMTP_URL,
    from: config.BOUNCE_ADDRESS ?? addressOf(config.MAIL_FROM),
    to: addressOf(config.MAIL_FROM),
    timeoutMs: deps.timeoutMs,
    allowPlainAuth: config.SMTP_ALLOW_PLAIN_AUTH,
  });
  return steps.map((s) => ({ name: `relay ${s.step}`, status: s.ok ? 'ok' : 'fail', detail: s.detail, fix: s.ok ? undefined : RELAY_FIX[s.step] }));
}

async function senderDomainChecks(deps: DoctorDeps): Promise<Check[]> {
  const { config, resolver } = deps;
  const from = domainOf(config.MAIL_FROM);
  if (!config.SMTP_URL && (from === 'localhost' || !from.includes('.'))) {
    return [{ name: 'sender domain', status: 'warn', detail: `MAIL_FROM is in ${from}: SPF, DKIM and DMARC not checked`, fix: 'set MAIL_FROM to an address in your own domain before sending real mail' }];
  }
  const envelope = domainOf(config.BOUNCE_ADDRESS ?? config.MAIL_FROM);
  return Promise.all([
    checkSpf(resolver, envelope),
    checkDkim(resolver, config.dkim),
    checkDmarc(resolver, from, envelope, config.dkim?.domainName),
  ]);
}

async function publicUrlCheck(deps: DoctorDeps): Promise<Check> {
  const url = `${deps.config.PUBLIC_URL}/health`;
  const fix = 'start digest serve, and set PUBLIC_URL to the address readers reach it at (every link in every email starts with it)';
  const started = performance.now();
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(deps.timeoutMs), redirect: 'follow' });
    const ms = Math.round(performance.now() - started);
    const body = (await res.text()).slice(0, 120).replace(/\s+/g, ' ');
    if (!res.ok) return { name: 'public url', status: 'fail', detail: `GET ${url} answered ${res.status}: ${body}`, fix };
    return { name: 'public url', status: 'ok', detail: `GET ${url} answered ${res.status} in ${ms} ms` };
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    return { name: 'public url', status: 'fail', detail: `GET ${url}: ${cause?.code ?? ''} ${cause?.message ?? errorMessage(e)}`.replace(/\s+/g, ' '), fix };
  }
}

function databaseCheck(config: Config): Check {
  const path = config.DATABASE_PATH;
  const fix = "make DATABASE_PATH's file and folder writable by the service's user, and check the free space";
  if (path === ':memory:') return { name: 'database', status: 'warn', detail: 'DATABASE_PATH=:memory: keeps nothing after a restart', fix: 'set DATABASE_PATH to a file' };
  try {
    if (!existsSync(path)) {
      let dir = dirname(resolve(path));
      while (!existsSync(dir)) dir = dirname(dir);
      if (!statSync(dir).isDirectory()) return { name: 'database', status: 'fail', detail: `DATABASE_PATH=${path}: ${dir} is a file, not a folder`, fix };
      accessSync(dir, constants.W_OK);
      return { name: 'database', status: 'ok', detail: `no database at ${path} yet: the first start creates it (${dir} is writable)` };
    }
    const db = openDatabase(path, { migrate: false, checkWritable: true, busyTimeoutMs: config.DB_BUSY_TIMEOUT_MS });
    const version = db.pragma('user_version', { simple: true }) as number;
    db.close();
    return { name: 'database', status: 'ok', detail: `${path} takes writes (schema ${version})` };
  } catch (e) {
    return { name: 'database', status: 'fail', detail: errorMessage(e).split('\n')[0]!, fix };
  }
}

async function sourceChecks(deps: DoctorDeps): Promise<Check[]> {
  const { config } = deps;
  const specs = parseSources(config.SOURCES);
  if (specs.length === 0) return [{ name: 'sources', status: 'ok', detail: 'none configured (SOURCES is empty): papers come from digest ingest or POST /api/batches' }];
  const today = utcDate(deps.now);
  const spacer = sourceSpacer(config);
  return Promise.all(
    specs.map(async (spec): Promise<Check> => {
      const kind = SOURCE_KINDS.find((k) => k.name === spec.kind)!;
      const fetch = { timeoutMs: Math.min(config.FETCH_TIMEOUT_MS, deps.timeoutMs * 2), retries: 0, logger: deps.logger, spacer };
      try {
        const got = await kind.fetchDay({ spec, today, settings: config, fetch }, today);
        const what = got.outcome === 'papers' ? `${got.papers.length} papers for ${got.day}` : `answered (${got.outcome}${got.detail ? `: ${got.detail}` : ''})`;
        return { name: `source ${spec.name}`, status: 'ok', detail: what };
      } catch (e) {
        return { name: `source ${spec.name}`, status: 'fail', detail: errorMessage(e).split('\n')[0]!, fix: "check the source's URL setting (digest config) and that this machine reaches that host" };
      }
    }),
  );
}

/** Every check, in a stable order (they run at the same time). */
export async function runDoctor(deps: DoctorDeps): Promise<Check[]> {
  // With DATABASE_URL=postgres://… the store is PostgreSQL (the SQLite file only answers old links).
  const database = isPostgresUrl(deps.config.DATABASE_URL)
    ? postgresDatabaseCheck(deps.config, deps.timeoutMs, deps.now)
    : Promise.resolve(databaseCheck(deps.config));
  const [relay, domain, publicUrl, db, sources] = await Promise.all([relayChecks(deps), senderDomainChecks(deps), publicUrlCheck(deps), database, sourceChecks(deps)]);
  return [...relay, ...domain, publicUrl, db, ...sources];
}
