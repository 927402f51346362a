// Environment -> typed configuration, validated with zod at start-up.
// Every variable here is listed in .env.example; a bad value stops start-up with a message naming it.
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import cron from 'node-cron';
import { z } from 'zod';
import { AppError } from './errors.ts';
import { sourceSettings } from './ingest/source-kinds/registry.ts';
import { parseSmtpUrl } from './mail/smtp-url.ts';
import type { DkimConfig } from './mail/types.ts';
import { bool, httpUrl, int, optionalText } from './settings.ts';
import { trustProxySetting } from './trust-proxy.ts';

/** smtp://host…, smtps://user:pass@host:port: a scheme and a host ("smtp://" alone is refused). */
function smtpUrlHasHost(v: string): boolean {
  if (!/^smtps?:\/\//i.test(v)) return false;
  try {
    return new URL(v).hostname.length > 0;
  } catch {
    return false;
  }
}

/** postgres:… or postgresql:…: meant for us, so a malformed one is an error; any other scheme is another app's. */
function isPostgresScheme(v: string): boolean {
  return /^postgres(ql)?:/i.test(v);
}

/** What is wrong with a postgres URL (undefined: nothing, or not a postgres URL at all). */
export function postgresUrlFault(v: string): string | undefined {
  if (!isPostgresScheme(v)) return undefined;
  if (!/^postgres(ql)?:\/\//i.test(v)) return 'a postgres URL must start with postgres:// or postgresql:// (e.g. postgres://user:pass@host:5432/db)';
  try {
    const u = new URL(v);
    if (u.port !== '' && !/^\d+$/.test(u.port)) return 'the port of the postgres URL is not a number';
  } catch {
    return 'not a valid postgres URL (e.g. postgres://user:pass@host:5432/db; a password with @, : or / must be percent-encoded)';
  }
  return undefined;
}

/** A DATABASE_URL that names another database (mysql://…, set by the platform for another app): ignored, said once. */
export function databaseUrlWarning(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const v = env.DATABASE_URL?.trim();
  if (!v || isPostgresScheme(v)) return undefined;
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(v)?.[1] ?? 'not a URL';
  const path = env.DATABASE_PATH || settingDefault('DATABASE_PATH');
  return `DATABASE_URL is not a postgres:// URL (${scheme}): ignored; this service stores in SQLite at DATABASE_PATH (${path})`;
}

export function isValidTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** SMTP_POOL_SIZE when unset (the benchmark's --pool default too). */
export const DEFAULT_SMTP_POOL_SIZE = 10;
/**
 * Card cache per sending thread (MB). 48: a day of 1,000 papers matched by thousands of distinct phrases
 * takes ~40 MB of cards (their highlight slots); at 32 the cache evicted and rebuilt cards all run long.
 */
export const DEFAULT_RENDER_CACHE_MB = 48;

/**
 * Memory (MB) of each `digest serve` process's topic-builder preview mirror on PostgreSQL: the whole corpus up
 * to about 70,000 papers; past it the newest batch days that fit (match/postgres/preview.ts).
 */
export const DEFAULT_PREVIEW_MIRROR_MB = 256;

/** An IPv4 address or a bracketed IPv6 one, optional :port (node:dns Resolver#setServers). */
const DNS_SERVER = /^(?:\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-fA-F:.]+\]|[0-9a-fA-F:]+)(?::\d{1,5})?$/;

const envSchema = z.object({
  PORT: int(0, 65535).default(3000),
  HOST: z.string().min(1).default('localhost'),
  PUBLIC_URL: httpUrl.optional(),
  DATABASE_PATH: z.string().min(1).default('db/digest.sqlite'),
  // PostgreSQL as the shared store: today `digest migrate`, `digest copy`, `digest worker` and the web tier's shared limits (src/db/shared-limits.ts); the rest stays on DATABASE_PATH.
  // Platforms set DATABASE_URL for other apps too (mysql://…): that is a warning (databaseUrlWarning), not a stop.
  DATABASE_URL: optionalText
    .superRefine((v, ctx) => {
      const fault = v === undefined ? undefined : postgresUrlFault(v);
      if (fault) ctx.addIssue({ code: 'custom', message: fault });
    })
    .transform((v) => (v !== undefined && isPostgresScheme(v) ? v : undefined)),
  DATABASE_SCHEMA: optionalText.refine((v) => v === undefined || /^[a-z_][a-z0-9_]{0,62}$/.test(v), {
    error: 'must be a plain lower-case schema name',
  }),
  SMTP_URL: optionalText
    .refine((v) => v === undefined || smtpUrlHasHost(v), {
      error: 'must look like smtp://user:pass@host:port or smtps://… (with a host)',
    })
    .superRefine((v, ctx) => {
      // Query options (tls.*, requireTLS…): an unknown one or a bad flag stops start-up, named.
      if (v === undefined || !smtpUrlHasHost(v)) return;
      try {
        parseSmtpUrl(v);
      } catch (e) {
        ctx.addIssue({ code: 'custom', message: (e as Error).message.replace(/^SMTP_URL: /, '') });
      }
    }),
  // A line break would let the setting write headers of its own into every email.
  MAIL_FROM: z
    .string()
    .min(3)
    .default('Paper Digest <digest@localhost>')
    .refine((v) => !/[\r\n]/.test(v), { error: 'must be one line: it contains a line break (CR or LF), which would add headers to every email' }),
  UNSUBSCRIBE_MAILTO: optionalText.refine((v) => v === undefined || z.email().safeParse(v).success, {
    error: 'must be an email address',
  }),
  MAIL_CATCHER_PORT: int(0, 65535).default(1025),
  // Checked with node-cron's own parser for every command, not only by `serve` when it schedules.
  DIGEST_CRON: z
    .string()
    .default('0 * * * *')
    .refine((v) => cron.validate(v), { error: 'not a valid cron expression (e.g. "0 * * * *": every hour)' }),
  DIGEST_TZ: z
    .string()
    .default('UTC')
    .refine(isValidTimeZone, { error: 'must be an IANA time zone such as Europe/Paris' }),
  DIGEST_HOUR: int(0, 23).default(7),
  DIGEST_RETENTION_DAYS: int(1, 36_500).default(90),
  // Long digests: papers shown in full before the rest become compact lines; bytes of
  // encoded paper cards each sending thread keeps for the run.
  DIGEST_FULL_PAPERS: int(1, 1_000).default(5),
  RENDER_CACHE_MB: int(1, 4_096).default(DEFAULT_RENDER_CACHE_MB),
  PREVIEW_MIRROR_MB: int(1, 1_000_000).default(DEFAULT_PREVIEW_MIRROR_MB),
  SECRET_KEY: optionalText.refine((v) => v === undefined || v.length >= 32, {
    error: 'must be at least 32 characters (openssl rand -hex 32)',
  }),
  API_TOKEN: optionalText.refine((v) => v === undefined || v.length >= 16, {
    error: 'must be at least 16 characters',
  }),
  SOURCES: z.string().default(''),
  // Each kind of paper source declares its own settings (src/ingest/source-kinds/).
  ...sourceSettings,
  SOURCE_LOOKBACK_DAYS: int(0, 60).default(3),
  FETCH_TIMEOUT_MS: int(100, 300_000).default(20_000),
  FETCH_RETRIES: int(0, 10).default(3),
  // A like: topic whose example paper is not in the database looks it up at ARXIV_API_URL.
  LIKE_LOOKUP: bool.default(true),
  // How long a request waits for its like: lookups; past that it answers 503 and they finish in the background.
  LIKE_LOOKUP_WAIT_MS: int(0, 60_000).default(10_000),
  // Connections to the relay, and so digests in flight at once (split among the sending threads). 10: with
  // 5 the threads waited on the relay's answers, and a relay across a network needs more in flight still.
  // A relay that allows fewer per client: set it lower.
  // Measured: BENCHMARKS.md § Why the code is shaped this way, config.ts.
  SMTP_POOL_SIZE: int(1, 100).default(DEFAULT_SMTP_POOL_SIZE),
  SMTP_RATE_PER_SECOND: z.coerce.number().min(0).default(0),
  SMTP_MAX_ATTEMPTS: int(1, 50).default(5),
  SMTP_RETRY_BASE_MS: int(1, 86_400_000).default(30_000),
  SMTP_RETRY_MAX_MS: int(1, 86_400_000).default(3_600_000),
  SMTP_TIMEOUT_MS: int(100, 600_000).default(30_000),
  SMTP_RETRY_WINDOW_MS: int(0, 86_400_000).default(600_000),
  RELAY_DOWN_AFTER: int(1, 1000).default(5),
  HARD_FAILURES_TO_SUPPRESS: int(1, 100).default(3),
  SHUTDOWN_GRACE_MS: int(0, 600_000).default(30_000),
  // Threads that build and send digests in a big run (this one included); 1 = no worker threads.
  // Storage: how long a command waits for the write lock in all (a lock held longer is a one-line
  // "database locked" fault); in `digest serve`, how long one statement may block the event loop.
  DB_BUSY_TIMEOUT_MS: int(0, 600_000).default(5_000),
  WEB_BUSY_TIMEOUT_MS: int(0, 5_000).default(5),
  // A web write that meets the lock is tried again for this long (event loop free in between), then 503.
  WEB_LOCK_WAIT_MS: int(0, 60_000).default(1_000),
  // /health answers DB_FULL when the disk holding the database has less free space than this (0 = no check).
  DB_MIN_FREE_MB: int(0, 1_000_000).default(4),
  SEND_WORKERS: int(1, 64).default(Math.min(2, availableParallelism())),
  // V8 heap cap of each sending thread (old generation, MB); default 2 x (RENDER_CACHE_MB + 24) (send-workers.ts).
  SEND_WORKER_HEAP_MB: int(8, 16_384).optional(),
  SUBSCRIBE_RATE_LIMIT: int(1, 100_000).default(10),
  TRUST_PROXY: trustProxySetting,
  // GET /metrics: with a token, `Authorization: Bearer <token>` from anywhere; without, only from this machine.
  METRICS_TOKEN: optionalText.refine((v) => v === undefined || v.length >= 16, {
    error: 'must be at least 16 characters',
  }),
  DKIM_DOMAIN: optionalText,
  DKIM_SELECTOR: optionalText,
  DKIM_PRIVATE_KEY: optionalText,
  DKIM_PRIVATE_KEY_PATH: optionalText,
  // --- Bounces, complaints, operator console ---
  BOUNCE_ADDRESS: optionalText.refine((v) => v === undefined || (z.email().safeParse(v).success && !v.includes('+') && v.split('@')[0]!.length <= 20), {
    error: 'must be a plain email address without "+", local part at most 20 characters, e.g. bounces@bounces.example.org',
  }),
  BOUNCE_SMTP_PORT: int(0, 65535).optional(),
  BOUNCE_SMTP_HOST: z.string().min(1).default('0.0.0.0'),
  // Soft bounces (full mailbox, gave up after 4xx) that suppress an address within a window (weeks for weekly readers).
  SOFT_BOUNCES_TO_SUPPRESS: int(1, 100).default(3),
  SOFT_BOUNCE_WINDOW_DAYS: int(1, 365).default(7),
  MAILGUN_WEBHOOK_SIGNING_KEY: optionalText,
  SES_SNS_TOPIC_ARN: optionalText.refine((v) => v === undefined || /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]+$/.test(v), {
    error: 'must be an SNS topic ARN, e.g. arn:aws:sns:eu-west-1:123456789012:ses-bounces',
  }),
  ADMIN_PASSWORD_HASH: optionalText.refine((v) => v === undefined || /^scrypt\$\d+\$\d+\$\d+\$[A-Za-z0-9_-]+\$[A-Za-z0-9_-]+$/.test(v), {
    error: 'must be a hash made by `digest admin-password` (scrypt$N$r$p$salt$hash)',
  }),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // --- Operating it: production guard, clear-text AUTH, log file, the resolver `digest doctor` asks ---
  NODE_ENV: optionalText,
  // With NODE_ENV=production or an https PUBLIC_URL, no SMTP_URL stops start-up unless this says a demo is meant.
  LOCAL_MAIL: bool.default(false),
  SMTP_ALLOW_PLAIN_AUTH: bool.default(false),
  LOG_FILE: optionalText,
  DNS_SERVERS: optionalText.refine((v) => v === undefined || v.split(',').every((s) => DNS_SERVER.test(s.trim())), {
    error: 'must be a comma-separated list of IP addresses, each with an optional :port (e.g. 1.1.1.1,127.0.0.1:5353)',
  }),
});

/** Every variable the service reads (config check: unknown and misspelled names are named at start-up). */
export const SETTING_NAMES: readonly string[] = Object.keys(envSchema.shape);

/** The schema's default of a setting, as text (`digest config`); undefined when it has none. */
export function settingDefault(name: string): string | undefined {
  const field = (envSchema.shape as Record<string, z.ZodType>)[name];
  const r = field?.safeParse(undefined);
  if (!r?.success || r.data === undefined) return undefined;
  return String(r.data);
}

export type Env = z.infer<typeof envSchema>;

export type { DkimConfig };

export interface Config extends Omit<Env, 'PUBLIC_URL' | 'DKIM_PRIVATE_KEY' | 'DKIM_PRIVATE_KEY_PATH'> {
  PUBLIC_URL: string;
  /** Set when DKIM_DOMAIN, DKIM_SELECTOR and a key are all given. */
  dkim: DkimConfig | undefined;
}

/** Parses an environment (process.env by default). Throws AppError CONFIG_INVALID naming each bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Empty strings in .env mean "unset" for variables with defaults.
  const cleaned: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && v !== '') cleaned[k] = v;
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new AppError('CONFIG_INVALID', `Invalid configuration: ${lines.join('; ')}`);
  }
  const e = parsed.data;
  refuseCatcherInProduction(e);
  const { PUBLIC_URL, DKIM_PRIVATE_KEY, DKIM_PRIVATE_KEY_PATH, ...rest } = e;
  if (e.BOUNCE_ADDRESS && !e.SECRET_KEY) {
    throw new AppError('CONFIG_INVALID', 'Invalid configuration: BOUNCE_ADDRESS needs SECRET_KEY (the VERP tags are signed with it)');
  }
  if (e.BOUNCE_SMTP_PORT !== undefined && !e.BOUNCE_ADDRESS) {
    throw new AppError('CONFIG_INVALID', 'Invalid configuration: BOUNCE_SMTP_PORT needs BOUNCE_ADDRESS (the only address the receiver accepts)');
  }
  return {
    ...rest,
    PUBLIC_URL: PUBLIC_URL ?? `http://localhost:${e.PORT}`,
    dkim: dkimFrom(e.DKIM_DOMAIN, e.DKIM_SELECTOR, DKIM_PRIVATE_KEY, DKIM_PRIVATE_KEY_PATH),
  };
}

/** Production (NODE_ENV or an https PUBLIC_URL) with no SMTP_URL would send real readers' mail to the local catcher. */
function refuseCatcherInProduction(e: Env): void {
  if (e.SMTP_URL || e.LOCAL_MAIL) return;
  const why = e.NODE_ENV === 'production' ? 'NODE_ENV=production' : e.PUBLIC_URL?.startsWith('https:') ? `PUBLIC_URL is ${e.PUBLIC_URL}` : undefined;
  if (!why) return;
  throw new AppError(
    'CONFIG_INVALID',
    `Invalid configuration: SMTP_URL is not set and ${why}: mail would go to the built-in local catcher, not to readers; set SMTP_URL (or LOCAL_MAIL=true for a demo)`,
  );
}

function dkimFrom(
  domain: string | undefined,
  selector: string | undefined,
  key: string | undefined,
  keyPath: string | undefined,
): DkimConfig | undefined {
  if (!domain && !selector && !key && !keyPath) return undefined;
  if (!domain || !selector || (!key && !keyPath)) {
    throw new AppError(
      'CONFIG_INVALID',
      'Invalid configuration: DKIM needs DKIM_DOMAIN, DKIM_SELECTOR and DKIM_PRIVATE_KEY or DKIM_PRIVATE_KEY_PATH together',
    );
  }
  let privateKey = key?.replace(/\\n/g, '\n');
  if (!privateKey) {
    try {
      privateKey = readFileSync(keyPath!, 'utf8');
    } catch (cause) {
      throw new AppError('CONFIG_INVALID', `Invalid configuration: DKIM_PRIVATE_KEY_PATH: cannot read ${keyPath}`, { cause });
    }
  }
  if (!privateKey.includes('PRIVATE KEY')) {
    throw new AppError('CONFIG_INVALID', 'Invalid configuration: DKIM private key is not a PEM private key');
  }
  return { domainName: domain, keySelector: selector, privateKey };
}
