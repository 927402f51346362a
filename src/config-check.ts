// Configuration that checks itself: variables that look meant for us but are not settings (SMPT_URL,
// DIGEST_CRONE, an unknown SMTP_ name) are named with the likely intended one, and `digest config` shows
// every setting's effective value, secrets masked, with where it came from.
import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';

export type Origin = 'default' | '.env' | 'environment';

/** Where the variables came from: the process environment, with the names a .env file added to it. */
export interface EnvSources {
  env: Record<string, string | undefined>;
  /** Names whose value was read from the .env file (the environment did not set them). */
  fromFile: ReadonlySet<string>;
}

/**
 * Reads a .env file (Node's own parser, as process.loadEnvFile) and adds the variables the environment
 * does not set; an environment variable wins over the file.
 */
export function loadEnvFile(path: string, env: NodeJS.ProcessEnv = process.env): Set<string> {
  const parsed = parseEnv(readFileSync(path, 'utf8'));
  const added = new Set<string>();
  for (const [name, value] of Object.entries(parsed)) {
    if (env[name] !== undefined) continue;
    env[name] = value;
    added.add(name);
  }
  return added;
}

/** Prefixes only this service's settings use: a name with one of them that is not a setting is a mistake. */
const OUR_PREFIXES = [
  'SMTP_', 'DIGEST_', 'MAIL_', 'DB_', 'DATABASE_', 'DKIM_', 'BOUNCE_', 'FETCH_', 'SOURCE_', 'SOURCES_', 'ARXIV_',
  'HF_', 'SEND_', 'WEB_', 'ADMIN_', 'RENDER_', 'SUBSCRIBE_', 'RELAY_', 'MAILGUN_', 'SES_', 'UNSUBSCRIBE_', 'LIKE_',
];

/** Variables of the system and of common tools that sit close to a setting's name (HOME ~ HOST). */
const SYSTEM_NAMES = new Set(['HOME', 'HOSTNAME', 'HOSTTYPE', 'PATH', 'PWD', 'OLDPWD', 'USER', 'SHELL', 'TERM', 'LANG', 'MAIL', 'LOGNAME', 'PS1', 'PS2']);

export interface SuspiciousSetting {
  name: string;
  origin: Exclude<Origin, 'default'>;
  /** The setting it most likely means, when one is close enough. */
  suggestion: string | undefined;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and swaps of neighbours (SMPT ~ SMTP: 1). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 0; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/** The closest setting within two edits (one for names of five letters or fewer: PORT, HOST). */
function closest(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const k of known) {
    const dist = editDistance(name, k);
    const allowed = Math.min(k.length, name.length) <= 5 ? 1 : 2;
    if (dist <= allowed && dist < bestDistance) {
      best = k;
      bestDistance = dist;
    }
  }
  return best;
}

/** Names that look meant for this service but are not among `known`, each with the likely intended one. */
export function suspiciousSettings(sources: EnvSources, known: readonly string[]): SuspiciousSetting[] {
  const knownSet = new Set(known);
  const found: SuspiciousSetting[] = [];
  for (const [name, value] of Object.entries(sources.env)) {
    if (value === undefined || knownSet.has(name) || !/^[A-Z][A-Z0-9_]*$/.test(name)) continue;
    const origin = sources.fromFile.has(name) ? '.env' : 'environment';
    const suggestion = SYSTEM_NAMES.has(name) ? undefined : closest(name, known);
    const ours = OUR_PREFIXES.some((p) => name.startsWith(p));
    if (suggestion || ours) found.push({ name, origin, suggestion });
  }
  return found.sort((a, b) => a.name.localeCompare(b.name));
}

/** "SMPT_URL (in .env) is not a setting; did you mean SMTP_URL? (ignored)" */
export function describeSuspicious(s: SuspiciousSetting): string {
  const where = s.origin === '.env' ? 'in .env' : 'in the environment';
  const hint = s.suggestion ? `did you mean ${s.suggestion}?` : 'see .env.example for the settings';
  return `${s.name} (${where}) is not a setting; ${hint} (ignored)`;
}

/** Settings whose whole value is a secret. */
const SECRET = /(?:^|_)(?:KEY|TOKEN|SECRET|PASSWORD|HASH)$/;

/** A value as `digest config` shows it: secrets replaced, passwords in URLs hidden. */
export function maskValue(name: string, value: string): string {
  if (SECRET.test(name)) return `******** (${value.length} characters)`;
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return value;
  try {
    const url = new URL(value);
    if (!url.password) return value;
    url.password = 'MASKED';
    return url.href.replace(':MASKED@', ':********@').replace(/\/$/, value.endsWith('/') ? '/' : '');
  } catch {
    return value;
  }
}

export interface EffectiveSetting {
  name: string;
  /** Masked; undefined when unset with no default. */
  value: string | undefined;
  origin: Origin;
}

/** Every setting with its value and where it came from (an empty value counts as unset, as at load). */
export function effectiveSettings(sources: EnvSources, known: readonly string[], defaultOf: (name: string) => string | undefined): EffectiveSetting[] {
  return known.map((name) => {
    const raw = sources.env[name];
    if (raw !== undefined && raw.trim() !== '') {
      return { name, value: maskValue(name, raw), origin: sources.fromFile.has(name) ? '.env' : 'environment' };
    }
    return { name, value: defaultOf(name), origin: 'default' };
  });
}
