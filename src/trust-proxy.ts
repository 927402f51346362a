// TRUST_PROXY: which reverse proxies may name the client in X-Forwarded-For. Fastify's trustProxy takes a
// hop count or a list of proxy addresses/CIDRs (proxy-addr); `true` would trust whatever address the
// client writes itself, so every per-address limit (subscribe, console login) could be dodged: refused.
import { isIP } from 'node:net';
import { z } from 'zod';

/** Off, a hop count (the proxies in front, e.g. 1), or the proxies' addresses, CIDRs or proxy-addr names. */
export type TrustProxy = false | number | string[];

const OFF = new Set(['', 'false', '0', 'no']);
/** proxy-addr's names for address ranges. */
const NAMED = new Set(['loopback', 'linklocal', 'uniquelocal']);

function isAddressOrCidr(entry: string): boolean {
  if (NAMED.has(entry)) return true;
  const slash = entry.indexOf('/');
  if (slash < 0) return isIP(entry) !== 0;
  const family = isIP(entry.slice(0, slash));
  const bits = entry.slice(slash + 1);
  if (family === 0 || !/^\d{1,3}$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}

export const TRUST_PROXY_TRUE =
  '"true" would trust any X-Forwarded-For a client writes; give the number of proxies in front (e.g. 1) or their addresses (e.g. 127.0.0.1 or 10.0.0.0/8, comma-separated)';

export const trustProxySetting = z
  .string()
  .default('false')
  .transform((raw, ctx): TrustProxy => {
    const v = raw.trim().toLowerCase();
    if (OFF.has(v)) return false;
    if (v === 'true' || v === 'yes') {
      ctx.addIssue({ code: 'custom', message: TRUST_PROXY_TRUE });
      return z.NEVER;
    }
    if (/^\d+$/.test(v)) {
      const hops = Number(v);
      if (hops > 10) ctx.addIssue({ code: 'custom', message: 'a hop count must be from 1 to 10' });
      return hops;
    }
    const entries = v.split(',').map((e) => e.trim()).filter((e) => e !== '');
    const bad = entries.find((e) => !isAddressOrCidr(e));
    if (bad !== undefined) {
      ctx.addIssue({ code: 'custom', message: `${JSON.stringify(bad)} is not an IP address or CIDR (e.g. 127.0.0.1, 10.0.0.0/8, loopback), nor a hop count` });
      return z.NEVER;
    }
    return entries;
  });

/** Whether any proxy is trusted: then a request's socket peer may be the proxy, not the client. */
export function behindProxy(setting: TrustProxy): boolean {
  return setting !== false;
}

/** The form Fastify's types take: a hop count as the trust function Fastify itself makes of one. */
export function fastifyTrustProxy(setting: TrustProxy): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (typeof setting === 'number') return (_address, hop) => hop < setting;
  return setting;
}
