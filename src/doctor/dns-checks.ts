// `digest doctor`'s sender-domain checks in DNS: SPF published (once), the DKIM key published under our
// selector is the public half of ours, and DMARC published with SPF or DKIM aligned to the From domain.
// Asked through a node:dns Resolver: DNS_SERVERS picks the servers (the suite runs a local one).
import { createPublicKey } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import type { DkimConfig } from '../config.ts';
import type { Check } from './check.ts';

export function dnsResolver(servers: string | undefined, timeoutMs: number): Resolver {
  const r = new Resolver({ timeout: timeoutMs, tries: 2 });
  if (servers) r.setServers(servers.split(',').map((s) => s.trim()));
  return r;
}

/** The TXT records at `name`, each joined from its strings; [] when there are none (or no such name). */
async function txt(resolver: Resolver, name: string): Promise<string[]> {
  try {
    return (await resolver.resolveTxt(name)).map((chunks) => chunks.join(''));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENODATA' || code === 'ENOTFOUND') return [];
    throw e;
  }
}

const dnsFailure = (name: string, e: unknown): Check => ({
  name,
  status: 'fail',
  detail: `DNS lookup failed: ${(e as NodeJS.ErrnoException).code ?? ''} ${(e as Error).message}`.trim(),
  fix: 'check that this machine can resolve names (DNS_SERVERS picks the resolver)',
});

export async function checkSpf(resolver: Resolver, domain: string): Promise<Check> {
  try {
    const spf = (await txt(resolver, domain)).filter((r) => /^v=spf1(\s|$)/i.test(r));
    if (spf.length === 0) {
      return { name: 'spf', status: 'fail', detail: `${domain} publishes no SPF record`, fix: `publish a TXT record at ${domain}: "v=spf1 include:<your relay's SPF domain> -all"` };
    }
    if (spf.length > 1) {
      return { name: 'spf', status: 'fail', detail: `${domain} publishes ${spf.length} SPF records (receivers treat that as an error)`, fix: 'merge them into one v=spf1 record' };
    }
    if (!/\s[-~]all$/i.test(spf[0]!.trim())) {
      return { name: 'spf', status: 'warn', detail: `${domain}: "${spf[0]}" does not end with -all or ~all`, fix: 'end the record with -all (or ~all while testing)' };
    }
    return { name: 'spf', status: 'ok', detail: `${domain}: "${spf[0]}"` };
  } catch (e) {
    return dnsFailure('spf', e);
  }
}

/** Our public key as DKIM publishes it (p=): SPKI DER in base64 for RSA, the raw 32 bytes for ed25519. */
export function dkimPublicKey(privateKeyPem: string): { k: 'rsa' | 'ed25519'; p: string } {
  const pub = createPublicKey(privateKeyPem);
  const der = pub.export({ type: 'spki', format: 'der' });
  if (pub.asymmetricKeyType === 'ed25519') return { k: 'ed25519', p: der.subarray(der.length - 32).toString('base64') };
  return { k: 'rsa', p: der.toString('base64') };
}

export async function checkDkim(resolver: Resolver, dkim: DkimConfig | undefined): Promise<Check> {
  if (!dkim) {
    return {
      name: 'dkim',
      status: 'warn',
      detail: 'not configured here (fine if the relay signs with your domain)',
      fix: 'Gmail and Yahoo require DKIM from bulk senders: set DKIM_DOMAIN, DKIM_SELECTOR and DKIM_PRIVATE_KEY (or let the relay sign)',
    };
  }
  const name = `${dkim.keySelector}._domainkey.${dkim.domainName}`;
  try {
    const ours = dkimPublicKey(dkim.privateKey);
    const record = (await txt(resolver, name)).find((r) => /(^|;)\s*p=/i.test(r));
    const publish = `publish a TXT record at ${name}: "v=DKIM1; k=${ours.k}; p=${ours.p.slice(0, 16)}…" (the public half of DKIM_PRIVATE_KEY)`;
    if (!record) return { name: 'dkim', status: 'fail', detail: `no DKIM key published at ${name}`, fix: publish };
    const p = /(?:^|;)\s*p=([^;]*)/i.exec(record)![1]!.replace(/\s+/g, '');
    if (p === '') return { name: 'dkim', status: 'fail', detail: `the key at ${name} is revoked (empty p=)`, fix: publish };
    if (p !== ours.p) return { name: 'dkim', status: 'fail', detail: `the key published at ${name} is not the public half of DKIM_PRIVATE_KEY`, fix: publish };
    return { name: 'dkim', status: 'ok', detail: `${name} publishes the public half of our ${ours.k} key` };
  } catch (e) {
    return dnsFailure('dkim', e);
  }
}

/** The organizational domain, approximated by its last two labels (no public-suffix list here). */
function orgDomain(d: string): string {
  return d.split('.').slice(-2).join('.');
}

function aligned(a: string, b: string, strict: boolean): boolean {
  return strict ? a === b : orgDomain(a) === orgDomain(b);
}

export async function checkDmarc(resolver: Resolver, from: string, envelope: string, dkimDomain: string | undefined): Promise<Check> {
  try {
    let at = `_dmarc.${from}`;
    let record = (await txt(resolver, at)).find((r) => /^v=DMARC1/i.test(r));
    if (!record && orgDomain(from) !== from) {
      at = `_dmarc.${orgDomain(from)}`;
      record = (await txt(resolver, at)).find((r) => /^v=DMARC1/i.test(r));
    }
    if (!record) {
      return { name: 'dmarc', status: 'fail', detail: `${from} publishes no DMARC record`, fix: `publish a TXT record at _dmarc.${orgDomain(from)}: "v=DMARC1; p=none; rua=mailto:dmarc@${orgDomain(from)}"` };
    }
    const tag = (t: string) => new RegExp(`(?:^|;)\\s*${t}=\\s*([a-z]+)`, 'i').exec(record!)?.[1]?.toLowerCase();
    const spfAligned = aligned(envelope, from, tag('aspf') === 's');
    const dkimAligned = dkimDomain !== undefined && aligned(dkimDomain, from, tag('adkim') === 's');
    const policy = tag('p') ?? '?';
    if (!spfAligned && !dkimAligned) {
      return {
        name: 'dmarc',
        status: 'fail',
        detail: `${at} (p=${policy}): neither SPF (envelope ${envelope}) nor DKIM (${dkimDomain ?? 'not signed here'}) is aligned with the From domain ${from}`,
        fix: `sign with DKIM_DOMAIN=${from}, or send with a BOUNCE_ADDRESS in ${orgDomain(from)}`,
      };
    }
    const by = [spfAligned ? `SPF (${envelope})` : undefined, dkimAligned ? `DKIM (${dkimDomain})` : undefined].filter(Boolean).join(' and ');
    return { name: 'dmarc', status: 'ok', detail: `${at} (p=${policy}): ${by} aligned with ${from}` };
  } catch (e) {
    return dnsFailure('dmarc', e);
  }
}
