// SMTP_URL: smtp://user:pass@host:port or smtps://…, with a few options in the query:
//   tls.rejectUnauthorized=false (and other tls.* options: servername, minVersion…), ignoreTLS, requireTLS,
//   name (our EHLO name), forceAuth (log in even when EHLO offers no AUTH), secure.
// Ports default to 465 for smtps and 587 otherwise. An option we do not know is refused by name: a typo
// must not silently turn off a certificate check.
import { AppError } from '../errors.ts';
import type { Credentials, SmtpEndpoint } from './smtp-connection.ts';

export interface SmtpUrl {
  endpoint: Omit<SmtpEndpoint, 'timeoutMs'>;
  auth: Credentials | undefined;
  forceAuth: boolean;
}

const FLAGS = new Set(['ignoreTLS', 'requireTLS', 'forceAuth', 'secure']);
const TLS_OPTIONS = new Set(['rejectUnauthorized', 'servername', 'minVersion', 'maxVersion', 'ciphers']);

function invalid(message: string): AppError {
  return new AppError('SMTP_URL_INVALID', `SMTP_URL: ${message}`);
}

/** "true" / "false" as booleans, other values as written. */
function flag(name: string, value: string): boolean {
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw invalid(`${name} must be true or false, not "${value}"`);
}

function decoded(text: string, what: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw invalid(`${what} has a "%" that is not URL-encoding (write "%" as %25)`);
  }
}

export function parseSmtpUrl(text: string): SmtpUrl {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid('not a URL (smtp://user:pass@host:port or smtps://…)');
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') throw invalid(`the scheme must be smtp:// or smtps://, not ${url.protocol}//`);
  if (!url.hostname) throw invalid('no host');
  const flags: Record<string, boolean> = { secure: url.protocol === 'smtps:' };
  const tls: Record<string, string | boolean> = {};
  let name: string | undefined;
  for (const [key, value] of url.searchParams) {
    if (FLAGS.has(key)) flags[key] = flag(key, value);
    else if (key === 'name') name = value;
    else if (key.startsWith('tls.') && TLS_OPTIONS.has(key.slice(4))) {
      const option = key.slice(4);
      tls[option] = option === 'rejectUnauthorized' ? flag(key, value) : value;
    } else throw invalid(`unknown option "${key}" (known: ${[...FLAGS, 'name', ...[...TLS_OPTIONS].map((o) => `tls.${o}`)].join(', ')})`);
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = url.port ? Number(url.port) : flags.secure ? 465 : 587;
  const user = decoded(url.username, 'the user name');
  const pass = decoded(url.password, 'the password');
  return {
    endpoint: {
      host,
      port,
      secure: flags.secure === true,
      ignoreTLS: flags.ignoreTLS === true,
      requireTLS: flags.requireTLS === true,
      tls,
      name,
    },
    auth: user || pass ? { user, pass } : undefined,
    forceAuth: flags.forceAuth === true,
  };
}
